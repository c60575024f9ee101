#include "engine/schedules/tz_database.hpp"

#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "proto/errors.hpp"

namespace nf::engine::schedules {

namespace {

constexpr const char* zoneinfo_dir = "/usr/share/zoneinfo/";

int64_t be(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  if (n == 4)
    return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > 64 || id.front() == '/' || id.find("..") != std::string_view::npos)
    return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-'
          || c == '+'))
      return false;
  return true;
}

} // namespace

flow::time_zone parse_tzif(std::string_view b, std::string name, std::string& error) {
  flow::time_zone z;
  z.name = std::move(name);
  auto bad = [&](const char* why) {
    error = why;
    return z;
  };
  if (b.size() < 44 || b.substr(0, 4) != "TZif")
    return bad("not a TZif file");
  char version = b[4];
  auto counts = [&](size_t at, int64_t c[6]) {
    for (int i = 0; i < 6; ++i)
      c[i] = be(b, at + 20 + static_cast<size_t>(i) * 4, 4);
  };
  int64_t c[6]; // isutcnt isstdcnt leapcnt timecnt typecnt charcnt
  counts(0, c);
  size_t at = 44;
  int time_size = 4;
  if (version >= '2') {
    // Skip the version 1 block for the 64-bit one that follows it.
    at += static_cast<size_t>(c[3] * 4 + c[3] + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (b.size() < at + 44 || b.substr(at, 4) != "TZif")
      return bad("truncated TZif file");
    counts(at, c);
    at += 44;
    time_size = 8;
  }
  auto timecnt = static_cast<size_t>(c[3]), typecnt = static_cast<size_t>(c[4]);
  size_t need = timecnt * static_cast<size_t>(time_size) + timecnt + typecnt * 6;
  if (typecnt == 0 || b.size() < at + need)
    return bad("truncated TZif file");
  std::vector<int32_t> type_offsets(typecnt);
  size_t types_at = at + timecnt * static_cast<size_t>(time_size) + timecnt;
  for (size_t i = 0; i < typecnt; ++i)
    type_offsets[i] = static_cast<int32_t>(be(b, types_at + i * 6, 4));
  z.initial_offset = type_offsets[0];
  for (size_t i = 0; i < timecnt; ++i) {
    auto idx = static_cast<unsigned char>(b[at + timecnt * static_cast<size_t>(time_size) + i]);
    if (idx >= typecnt)
      return bad("a transition names a missing type");
    z.transitions.push_back(be(b, at + i * static_cast<size_t>(time_size), time_size));
    z.offsets.push_back(type_offsets[idx]);
  }
  if (version >= '2') {
    size_t end = types_at + typecnt * 6 + static_cast<size_t>(c[5] + c[2] * 12 + c[1] + c[0]);
    if (end < b.size() && b[end] == '\n') {
      auto close = b.find('\n', end + 1);
      if (close != std::string_view::npos && close > end + 1)
        z.tail = flow::parse_posix_rule(b.substr(end + 1, close - end - 1));
    }
  }
  return z;
}

caf::expected<std::shared_ptr<const flow::time_zone>> load_zone(std::string_view id) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const flow::time_zone>, std::less<>> cache;
  if (id == "UTC" || id == "Etc/UTC" || id == "GMT" || id == "Z" || id == "Etc/GMT")
    return std::make_shared<const flow::time_zone>(flow::utc_zone());
  {
    std::lock_guard lock{mutex};
    if (auto it = cache.find(id); it != cache.end())
      return it->second;
  }
  std::string shown{id.substr(0, 64)};
  if (!valid_id(id))
    return nf::make_error(nf::errc::invalid,
                          "zoneId: \"" + shown + "\" is not an IANA time zone id (such as "
                          "\"Europe/Berlin\" or \"UTC\")");
  std::ifstream in{zoneinfo_dir + std::string(id), std::ios::binary};
  if (!in)
    return nf::make_error(nf::errc::invalid, "zoneId: \"" + shown
                                               + "\" is not in this node's time zone database ("
                                               + zoneinfo_dir + ", package tzdata)");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string error;
  auto zone = parse_tzif(bytes.str(), std::string(id), error);
  if (!error.empty())
    return nf::make_error(nf::errc::invalid, "zoneId: \"" + shown + "\": " + error);
  auto shared = std::make_shared<const flow::time_zone>(std::move(zone));
  std::lock_guard lock{mutex};
  cache.emplace(std::string(id), shared);
  return shared;
}

} // namespace nf::engine::schedules
