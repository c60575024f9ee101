#include "flow/precise_json.hpp"

#include <charconv>
#include <string>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

namespace nf::flow {

namespace {

namespace json = boost::json;
using json::error_code;
using json::string_view;

// Boost.JSON's own value-building handler (detail/handler.hpp), but for doubles.
struct precise_handler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack st;
  std::string number; // a number's text so far, when it arrives in pieces

  explicit precise_handler(json::storage_ptr sp) { st.reset(std::move(sp)); }

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return true; }
  bool on_object_end(std::size_t n, error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t n, error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(string_view s, std::size_t, error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(string_view s, std::size_t, error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(string_view s, error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, string_view, error_code&) {
    number.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, string_view, error_code&) {
    number.clear();
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, string_view s, error_code&) {
    number.append(s.data(), s.size());
    double exact = d;
    auto [end, err] = std::from_chars(number.data(), number.data() + number.size(), exact);
    // Out of a double's range from_chars leaves `exact` alone: the parser's ±inf or 0 stands.
    if (err != std::errc{} || end != number.data() + number.size())
      exact = d;
    number.clear();
    st.push_double(exact);
    return true;
  }
  bool on_bool(bool b, error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

} // namespace

json::value parse_precise(std::string_view text, boost::system::error_code& ec,
                          json::storage_ptr sp, const json::parse_options& opts) {
  json::basic_parser<precise_handler> p(opts, std::move(sp));
  p.reset();
  auto used = p.write_some(false, text.data(), text.size(), ec);
  if (!ec && used < text.size())
    ec = json::error::extra_data;
  if (ec)
    return nullptr;
  if (!p.done()) {
    ec = json::error::incomplete;
    return nullptr;
  }
  return p.handler().st.release();
}

} // namespace nf::flow
