#include "store/json.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "proto/errors.hpp"

namespace nf::store {

json_text make_json_text(std::string text) {
  return json_text{std::move(text)};
}

namespace {

bool has_nul(boost::json::string_view s) {
  return std::find(s.begin(), s.end(), '\0') != s.end();
}

boost::json::string without_nul(boost::json::string_view s) {
  boost::json::string out;
  out.reserve(s.size());
  for (char c : s)
    if (c != '\0')
      out.push_back(c);
  return out;
}

/// True when `v` holds a NUL anywhere; the common case copies nothing.
bool needs_strip(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::string: return has_nul(v.get_string());
    case boost::json::kind::array:
      return std::any_of(v.get_array().begin(), v.get_array().end(), needs_strip);
    case boost::json::kind::object:
      for (const auto& kv : v.get_object())
        if (has_nul(kv.key()) || needs_strip(kv.value()))
          return true;
      return false;
    default: return false;
  }
}

boost::json::value stripped(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::string: return without_nul(v.get_string());
    case boost::json::kind::array: {
      boost::json::array out;
      out.reserve(v.get_array().size());
      for (const auto& x : v.get_array())
        out.push_back(stripped(x));
      return out;
    }
    case boost::json::kind::object: {
      boost::json::object out;
      for (const auto& kv : v.get_object())
        out[without_nul(kv.key())] = stripped(kv.value());
      return out;
    }
    default: return v;
  }
}

} // namespace

json_text json(const boost::json::value& v) {
  if (!needs_strip(v))
    return make_json_text(boost::json::serialize(v));
  return make_json_text(boost::json::serialize(stripped(v)));
}

caf::expected<json_text> json_from_text(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  auto v = boost::json::parse(boost::json::string_view{text.data(), text.size()}, ec);
  if (ec)
    return make_error(errc::invalid,
                      std::string{what} + ": malformed JSON (" + ec.message() + ")");
  return json(v);
}

} // namespace nf::store
