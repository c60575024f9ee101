#include "net/web/json_body.hpp"

#include <charconv>

#include <boost/json.hpp>

#include "flow/ascii.hpp"

namespace nf::net::web {

std::optional<boost::json::value> read_json_body(const exchange_ptr& ex, const json_limits& lim,
                                                 std::optional<boost::json::value> empty_as) {
  const auto& text = ex->body();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    if (empty_as)
      return empty_as;
    ex->fail(400, "body: expected JSON, got an empty body", "body");
    return std::nullopt;
  }
  boost::json::parse_options po;
  po.max_depth = lim.max_depth;
  boost::json::error_code ec;
  auto v = boost::json::parse(text, ec, {}, po);
  if (ec == boost::json::error::too_deep) {
    ex->fail(400, "body: JSON nested deeper than " + std::to_string(lim.max_depth)
                    + " levels (http.max_json_depth)", "body");
    return std::nullopt;
  }
  if (ec) {
    ex->fail(400, "body: expected JSON, got malformed text (" + ec.message() + ")", "body");
    return std::nullopt;
  }
  return v;
}

std::optional<boost::json::object> read_json_object(const exchange_ptr& ex,
                                                    const json_limits& lim) {
  auto v = read_json_body(ex, lim);
  if (!v)
    return std::nullopt;
  if (!v->is_object()) {
    ex->fail(400, "body: expected a JSON object", "body");
    return std::nullopt;
  }
  return std::move(v->as_object());
}

std::optional<int64_t> query_int(const exchange_ptr& ex, const char* name, int64_t fallback,
                                 int64_t min, int64_t max) {
  const auto* raw = ex->query(name);
  if (!raw || raw->empty())
    return fallback;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), v);
  if (ec != std::errc{} || p != raw->data() + raw->size() || v < min || v > max) {
    ex->fail(400, std::string{name} + ": expected an integer from " + std::to_string(min)
                    + " to " + std::to_string(max) + ", got \"" + *raw + "\"", name);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> query_bool(const exchange_ptr& ex, const char* name, bool fallback) {
  const auto* raw = ex->query(name);
  if (!raw || raw->empty())
    return fallback;
  // Any case: Python's clients send their booleans as "True" and "False".
  auto lower = flow::ascii_lower(*raw);
  if (lower == "true")
    return true;
  if (lower == "false")
    return false;
  ex->fail(400, std::string{name} + ": expected true or false, got \"" + *raw + "\"", name);
  return std::nullopt;
}

} // namespace nf::net::web
