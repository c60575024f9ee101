#include "engine/http/egress.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include "flow/ascii.hpp"

namespace nf::http {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos)
    return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// A name as compared: lower case, without the root's trailing dot.
std::string canonical_name(std::string host) {
  host = flow::ascii_lower(host);
  if (!host.empty() && host.back() == '.')
    host.pop_back();
  return host;
}

struct parsed_address {
  std::array<uint8_t, 16> bytes{};
  bool v4 = false;
};

// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) reaches the IPv4 host: it is read as one.
std::optional<parsed_address> read_address(std::string text) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  if (auto pct = text.find('%'); pct != std::string::npos)
    text.erase(pct); // a zone (fe80::1%eth0) does not change what the address is
  parsed_address out;
  if (inet_pton(AF_INET, text.c_str(), out.bytes.data()) == 1) {
    out.v4 = true;
    return out;
  }
  if (inet_pton(AF_INET6, text.c_str(), out.bytes.data()) != 1)
    return std::nullopt;
  static constexpr uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(out.bytes.data(), mapped, 12) == 0) {
    std::memmove(out.bytes.data(), out.bytes.data() + 12, 4);
    std::fill(out.bytes.begin() + 4, out.bytes.end(), 0);
    out.v4 = true;
  }
  return out;
}

bool name_matches(const std::string& pattern, const std::string& name) {
  if (pattern.rfind("*.", 0) == 0) {
    auto suffix = pattern.substr(1); // ".example.com"
    return name.size() > suffix.size()
           && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return pattern == name;
}

bool valid_name(const std::string& name) {
  if (name.empty())
    return false;
  auto body = name.rfind("*.", 0) == 0 ? name.substr(2) : name;
  return !body.empty() && std::all_of(body.begin(), body.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_';
  });
}

} // namespace

std::optional<egress_policy::rules>
egress_policy::read(const std::string& list, const char* setting, std::string& error) {
  rules out;
  size_t pos = 0;
  while (pos <= list.size()) {
    auto comma = list.find(',', pos);
    auto length = comma == std::string::npos ? std::string::npos : comma - pos;
    auto entry = trim(list.substr(pos, length));
    pos = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (entry.empty())
      continue;
    auto bad = [&](const std::string& why) {
      error = std::string{setting} + ": " + why + ", got \"" + entry + "\"";
      return std::nullopt;
    };
    if (entry == "*") {
      if (std::string{setting} != "egress.allow")
        return bad("\"*\" would refuse every destination; leave egress.allow empty for that");
      out.everything = true;
      continue;
    }
    auto slash = entry.find('/');
    if (auto a = read_address(entry.substr(0, slash))) {
      block b;
      b.bytes = a->bytes;
      b.v4 = a->v4;
      b.prefix = a->v4 ? 32 : 128;
      b.text = entry;
      if (slash != std::string::npos) {
        auto digits = entry.substr(slash + 1);
        int prefix = -1;
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
        // A mapped IPv6 block (::ffff:0:0/96 and longer) counts in IPv4 bits.
        int max = a->v4 ? (entry.find(':') != std::string::npos ? 128 : 32) : 128;
        if (ec != std::errc{} || end != digits.data() + digits.size() || prefix < 0
            || prefix > max)
          return bad("expected a prefix length from 0 to " + std::to_string(max));
        if (max == 128 && a->v4)
          prefix = std::max(0, prefix - 96);
        b.prefix = prefix;
      }
      out.blocks.push_back(std::move(b));
      continue;
    }
    if (slash != std::string::npos)
      return bad("expected an address before the prefix length (10.0.0.0/8, fd00::/8)");
    auto name = canonical_name(entry);
    if (!valid_name(name))
      return bad("expected a CIDR block, an address or a host name");
    out.names.push_back(std::move(name));
  }
  return out;
}

std::optional<egress_policy> egress_policy::parse(const std::string& allow,
                                                  const std::string& deny, std::string& error) {
  auto a = read(allow, "egress.allow", error);
  if (!a)
    return std::nullopt;
  auto d = read(deny, "egress.deny", error);
  if (!d)
    return std::nullopt;
  egress_policy p;
  p.allow_ = std::move(*a);
  p.deny_ = std::move(*d);
  return p;
}

const egress_policy& egress_policy::defaults() {
  static const egress_policy p = [] {
    std::string error;
    return *parse(default_egress_allow, default_egress_deny, error);
  }();
  return p;
}

namespace {

template <class Block>
const Block* find_block(const std::vector<Block>& blocks, const parsed_address& a) {
  for (const auto& b : blocks) {
    if (b.v4 != a.v4)
      continue;
    int bits = b.prefix;
    bool in = true;
    for (int i = 0; i < 16 && bits > 0 && in; ++i, bits -= 8) {
      uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
      in = (a.bytes[i] & mask) == (b.bytes[i] & mask);
    }
    if (in)
      return &b;
  }
  return nullptr;
}

} // namespace

std::optional<std::string> egress_policy::refuse_name(const std::string& host) const {
  auto name = canonical_name(host);
  if (read_address(name))
    return refuse_address(host, name);
  for (const auto& n : deny_.names)
    if (name_matches(n, name))
      return "refused by egress.deny: " + host + " matches " + n;
  return std::nullopt;
}

std::optional<std::string> egress_policy::refuse_address(const std::string& host,
                                                         const std::string& address) const {
  auto a = read_address(address);
  if (!a)
    return "refused: " + host + " resolved to \"" + address + "\", not an address";
  auto shown = host == address ? address : host + " (" + address + ")";
  if (const auto* b = find_block(deny_.blocks, *a))
    return "refused by egress.deny: " + shown + " is in " + b->text;
  if (allow_.everything || find_block(allow_.blocks, *a))
    return std::nullopt;
  auto name = canonical_name(host);
  for (const auto& n : allow_.names)
    if (name_matches(n, name))
      return std::nullopt;
  return "refused: " + shown + " is not in egress.allow";
}

} // namespace nf::http
