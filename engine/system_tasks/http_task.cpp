#include "engine/system_tasks/http_task.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>

#include <boost/json.hpp>

#include "engine/system_tasks/task_result.hpp"
#include "flow/ascii.hpp"

namespace nf::engine {

namespace {

namespace json = boost::json;

// An HTTP task may wait at most this long per phase, whatever its input says.
constexpr int64_t max_timeout_ms = 600000;

std::string kind_of(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

std::string shown(const json::value& v) {
  std::string text;
  if (v.is_double()) { // serialize() would print 1.5 as "1.5E0"
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v.as_double());
    text = buf;
  } else {
    text = json::serialize(v);
  }
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

/// A timeout field: absent = `fallback`; else an integer 1 … max_timeout_ms.
std::variant<std::chrono::milliseconds, std::string>
timeout_field(const json::object& o, const std::string& at, const char* key,
              std::chrono::milliseconds fallback) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null())
    return fallback;
  const auto& v = it->value();
  int64_t ms = -1;
  if (v.is_int64())
    ms = v.as_int64();
  else if (v.is_uint64() && v.as_uint64() <= static_cast<uint64_t>(max_timeout_ms))
    ms = static_cast<int64_t>(v.as_uint64());
  if (ms < 1 || ms > max_timeout_ms)
    return at + "." + key + ": expected an integer 1 … 600000 (milliseconds), got " + shown(v);
  return std::chrono::milliseconds{ms};
}

/// An optional string field: absent or null keeps `out`; returns the problem, if any.
std::optional<std::string> text_field(const json::object& o, const std::string& at, const char* key,
                                      std::string& out) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null())
    return std::nullopt;
  if (!it->value().is_string())
    return at + "." + key + ": expected a string, got " + kind_of(it->value());
  out = std::string{it->value().as_string()};
  return std::nullopt;
}

std::variant<http::request, std::string> read_request(const json::object& o, const std::string& at,
                                                      std::chrono::milliseconds default_timeout) {
  http::request r;
  auto uri = o.find("uri");
  if (uri == o.end() || !uri->value().is_string())
    return at + ".uri: expected a string"
           + (uri == o.end() ? std::string{", got nothing"} : ", got " + kind_of(uri->value()));
  r.url = std::string{uri->value().as_string()};
  std::string url_error;
  if (!http::parse_url(r.url, url_error))
    return at + ".uri: " + url_error;
  r.method = "GET";
  if (auto m = o.find("method"); m != o.end() && !m->value().is_null()) {
    if (!m->value().is_string())
      return at + ".method: expected a string, got " + kind_of(m->value());
    r.method = std::string{m->value().as_string()};
    std::transform(r.method.begin(), r.method.end(), r.method.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (!http::known_method(r.method))
      return at + ".method: expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, got "
             + shown(m->value());
  }
  std::string accept = "application/json";
  std::string content_type = "application/json";
  if (auto problem = text_field(o, at, "accept", accept))
    return *problem;
  if (auto problem = text_field(o, at, "contentType", content_type))
    return *problem;
  r.headers.emplace_back("Accept", accept);
  if (auto h = o.find("headers"); h != o.end() && !h->value().is_null()) {
    if (!h->value().is_object())
      return at + ".headers: expected an object, got " + kind_of(h->value());
    for (const auto& [name, value] : h->value().as_object()) {
      std::string key{name};
      std::string text;
      if (value.is_string())
        text = std::string{value.as_string()};
      else if (value.is_number() || value.is_bool())
        text = json::serialize(value);
      else
        return at + ".headers." + key + ": expected a string, number or boolean, got "
               + kind_of(value);
      if (key.empty() || key.find_first_of(":\r\n") != std::string::npos
          || text.find_first_of("\r\n") != std::string::npos)
        return at + ".headers." + key + ": header names and values must not contain line breaks"
               + " (or ':' in the name)";
      r.headers.emplace_back(std::move(key), std::move(text));
    }
  }
  if (auto b = o.find("body"); b != o.end() && !b->value().is_null()) {
    r.body = b->value().is_string() ? std::string{b->value().as_string()}
                                    : json::serialize(b->value());
    r.headers.emplace_back("Content-Type", content_type);
  }
  auto connect = timeout_field(o, at, "connectionTimeOut", default_timeout);
  if (connect.index() == 1)
    return std::get<1>(connect);
  auto read = timeout_field(o, at, "readTimeOut", default_timeout);
  if (read.index() == 1)
    return std::get<1>(read);
  r.connect_timeout = std::get<0>(connect);
  r.read_timeout = std::get<0>(read);
  return r;
}

} // namespace

std::variant<http::request, std::string>
read_http_task(const std::string& input_json, std::chrono::milliseconds default_timeout) {
  json::error_code ec;
  auto input = json::parse(input_json, ec);
  if (ec)
    return "input: expected JSON, got a parse error (" + ec.message() + ")";
  if (!input.is_object())
    return "input: expected an object, got " + kind_of(input);
  const auto& o = input.as_object();
  if (auto it = o.find("http_request"); it != o.end()) {
    if (!it->value().is_object())
      return "http_request: expected an object, got " + kind_of(it->value());
    return read_request(it->value().as_object(), "http_request", default_timeout);
  }
  if (o.contains("uri")) // the fields at the top level, as newer Conductor versions accept
    return read_request(o, "input", default_timeout);
  return std::string{"http_request: expected an object with at least \"uri\", got nothing"};
}

void fit_into_lease(http::request& req, int64_t lease_expires_at_ms, int64_t now_ms,
                    std::chrono::milliseconds margin) {
  using std::chrono::milliseconds;
  auto left = std::max(milliseconds{1}, milliseconds{lease_expires_at_ms - now_ms} - margin);
  req.connect_timeout = std::min(req.connect_timeout, left);
  req.read_timeout = std::min(req.read_timeout, std::max(milliseconds{1}, left - req.connect_timeout));
}

msg::task_result http_task_result(const msg::leased_task& task, const http::outcome& out) {
  // A destination the egress policy refuses stays refused: retries would only repeat it.
  if (out.refused)
    return system_task_result(task, "FAILED_WITH_TERMINAL_ERROR", json::object{{"error", out.error}},
                     out.error);
  if (!out.resp)
    return system_task_result(task, "FAILED", json::object{{"error", out.error}}, out.error);
  const auto& resp = *out.resp;
  json::object headers;
  std::string content_type;
  for (const auto& [name, value] : resp.headers) {
    if (flow::ascii_lower(name) == "content-type")
      content_type = value;
    auto it = headers.find(name);
    if (it == headers.end())
      headers[name] = value;
    else // repeated header: one comma-separated value (RFC 9110 §5.3)
      it->value() = std::string{it->value().as_string()} + ", " + value;
  }
  json::value body = json::string{resp.body};
  if (content_type.find("json") != std::string::npos) {
    json::error_code ec;
    auto parsed = json::parse(resp.body, ec);
    if (!ec)
      body = std::move(parsed);
  }
  json::object response{{"statusCode", resp.status},
                        {"reasonPhrase", resp.reason},
                        {"headers", std::move(headers)},
                        {"body", std::move(body)}};
  bool ok = resp.status >= 200 && resp.status <= 299;
  return system_task_result(task, ok ? "COMPLETED" : "FAILED", json::object{{"response", std::move(response)}},
                   ok ? "" : "HTTP " + std::to_string(resp.status) + " " + resp.reason);
}

msg::task_result http_task_failed(const msg::leased_task& task, const std::string& reason) {
  return system_task_result(task, "FAILED", json::object{{"error", reason}}, reason);
}

msg::task_result http_task_rejected(const msg::leased_task& task, const std::string& problem) {
  return system_task_result(task, "FAILED_WITH_TERMINAL_ERROR", json::object{{"error", problem}},
                   "invalid HTTP task input: " + problem);
}

} // namespace nf::engine
