#include "store/pg/params.hpp"

#include "store/pg/result.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace nf::store {

namespace {

void append_quoted(std::string& out, std::string_view x) {
  out += '"';
  for (char c : x) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  out += '"';
}

template <class Range, class Append>
array_literal make_array(const Range& xs, Append append) {
  array_literal result;
  result.text = "{";
  bool first = true;
  for (const auto& x : xs) {
    if (!first)
      result.text += ',';
    first = false;
    append(result.text, x);
  }
  result.text += '}';
  return result;
}

} // namespace

array_literal text_array(const std::vector<std::string>& xs) {
  return make_array(xs, [](std::string& out, const std::string& x) { append_quoted(out, x); });
}

array_literal text_array(const std::vector<std::optional<std::string>>& xs) {
  return make_array(xs, [](std::string& out, const std::optional<std::string>& x) {
    if (x)
      append_quoted(out, *x);
    else
      out += "NULL";
  });
}

array_literal text_array(const result& r, int column) {
  std::vector<std::optional<std::string>> xs;
  xs.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i)
    xs.push_back(r.opt_str(i, column));
  return text_array(xs);
}

array_literal int_array(const std::vector<int64_t>& xs) {
  return make_array(xs, [](std::string& out, int64_t x) { out += std::to_string(x); });
}

std::string timestamptz_text(int64_t epoch_ms) {
  auto secs = static_cast<time_t>(epoch_ms / 1000);
  auto ms = epoch_ms % 1000;
  if (ms < 0) {
    ms += 1000;
    --secs;
  }
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%03d+00", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

array_literal json_array(const std::vector<json_text>& xs) {
  return make_array(xs, [](std::string& out, const json_text& x) { append_quoted(out, x.str()); });
}

array_literal json_array(const std::vector<std::optional<json_text>>& xs) {
  return make_array(xs, [](std::string& out, const std::optional<json_text>& x) {
    if (x)
      append_quoted(out, x->str());
    else
      out += "NULL";
  });
}

params& params::add(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  values_.emplace_back(std::string{buf});
  return *this;
}

} // namespace nf::store
