#include "engine/http/request.hpp"

#include <algorithm>
#include <cctype>

#include "flow/ascii.hpp"

namespace nf::http {

std::optional<url_parts> parse_url(const std::string& url, std::string& error) {
  const std::string scheme = "http://";
  if (flow::ascii_lower(url.substr(0, 8)) == "https://") {
    error = "https is not supported (plain http:// only), got \"" + url + "\"";
    return std::nullopt;
  }
  if (flow::ascii_lower(url.substr(0, scheme.size())) != scheme) {
    error = "expected an absolute http:// URL, got \"" + url + "\"";
    return std::nullopt;
  }
  auto rest = url.substr(scheme.size());
  auto slash = rest.find_first_of("/?#");
  auto authority = rest.substr(0, slash);
  url_parts out;
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (auto hash = out.target.find('#'); hash != std::string::npos)
    out.target.erase(hash); // fragments never go on the wire
  if (out.target.empty() || out.target[0] != '/')
    out.target.insert(0, "/");
  if (authority.find('@') != std::string::npos) {
    error = "credentials in the URL are not supported, got \"" + url + "\"";
    return std::nullopt;
  }
  auto colon = authority.rfind(':');
  if (!authority.empty() && authority[0] == '[') { // [::1]:8080
    auto close = authority.find(']');
    if (close == std::string::npos) {
      error = "unterminated IPv6 address in \"" + url + "\"";
      return std::nullopt;
    }
    out.host = authority.substr(1, close - 1);
    colon = authority.size() > close + 1 && authority[close + 1] == ':' ? close + 1
                                                                         : std::string::npos;
  } else {
    out.host = authority.substr(0, colon);
  }
  out.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  bool port_ok = !out.port.empty() && out.port.size() <= 5
                 && std::all_of(out.port.begin(), out.port.end(),
                                [](unsigned char c) { return std::isdigit(c); })
                 && std::stoi(out.port) > 0 && std::stoi(out.port) < 65536;
  if (out.host.empty() || !port_ok) {
    error = "expected http://host[:port][/path], got \"" + url + "\"";
    return std::nullopt;
  }
  return out;
}

bool known_method(const std::string& m) {
  for (const char* k : {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
    if (m == k)
      return true;
  return false;
}

outcome port::perform(const request& req) {
  return perform_all({req}, 1).front();
}

std::vector<outcome> unconfigured_port::perform_all(const std::vector<request>& reqs, size_t) {
  std::vector<outcome> out(reqs.size());
  for (auto& o : out)
    o.error = "this process has no HTTP client configured";
  return out;
}

} // namespace nf::http
