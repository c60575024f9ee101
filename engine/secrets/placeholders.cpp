#include "engine/secrets/placeholders.hpp"

#include <map>

#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>

#include "proto/errors.hpp"

namespace nf::engine::secrets {

namespace {

constexpr std::string_view opener = "${secrets.";

} // namespace

bool has_placeholder(const std::string& text) {
  return text.find(opener) != std::string::npos;
}

caf::expected<std::string> substitute(const std::string& text, const lookup& find) {
  std::string out;
  size_t i = 0;
  for (auto at = text.find(opener); at != std::string::npos; at = text.find(opener, i)) {
    auto close = text.find('}', at + opener.size());
    if (close == std::string::npos)
      break; // not a placeholder: kept as written
    out.append(text, i, at - i);
    auto value = find(text.substr(at + opener.size(), close - at - opener.size()));
    if (!value)
      return std::move(value.error());
    out += *value;
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

caf::expected<http::request> resolve_request(const http::request& req, const lookup& find,
                                             std::vector<std::string>& used) {
  // The same secret in the URL and a header is read once.
  std::map<std::string, std::string> seen;
  lookup once = [&](const std::string& name) -> caf::expected<std::string> {
    if (auto it = seen.find(name); it != seen.end())
      return it->second;
    auto v = find(name);
    if (v) {
      seen.emplace(name, *v);
      used.push_back(*v);
    }
    return v;
  };
  http::request out = req;
  auto fill = [&](std::string& field) -> caf::error {
    if (!has_placeholder(field))
      return {};
    auto v = substitute(field, once);
    if (!v)
      return std::move(v.error());
    field = std::move(*v);
    return {};
  };
  if (auto e = fill(out.url))
    return e;
  for (auto& [name, value] : out.headers) {
    if (auto e = fill(name))
      return e;
    if (auto e = fill(value))
      return e;
  }
  if (auto e = fill(out.body))
    return e;
  return out;
}

void scrub(std::string& text, const std::vector<std::string>& values) {
  auto replace_all = [&](const std::string& needle) {
    if (needle.empty())
      return;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 3))
      text.replace(at, needle.size(), "***");
  };
  for (const auto& v : values) {
    replace_all(v);
    auto quoted = boost::json::serialize(boost::json::string_view{v.data(), v.size()});
    replace_all(quoted.substr(1, quoted.size() - 2));
  }
}

} // namespace nf::engine::secrets
