#include "store/pg/params.hpp"

#include "store/pg/result.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace nf::store {

namespace {

// Appends `x` between double quotes, a backslash before each `"` and `\\`: the runs
// between those go in one copy each, not a character at a time (a JSON payload is a
// run of plain characters between quotes; the batches' arrays hold thousands of them per
// flush).
void append_quoted(std::string& out, std::string_view x) {
  out += '"';
  const char* run = x.data();
  const char* end = x.data() + x.size();
  for (const char* c = run; c != end; ++c) {
    if (*c == '"' || *c == '\\') {
      out.append(run, static_cast<size_t>(c - run));
      out += '\\';
      run = c; // the character itself starts the next run
    }
  }
  out.append(run, static_cast<size_t>(end - run));
  out += '"';
}

size_t text_size(const std::string& x) { return x.size() + 3; }
size_t text_size(const std::optional<std::string>& x) { return x ? x->size() + 3 : 5; }
size_t text_size(const json_text& x) { return x.str().size() + 3; }
size_t text_size(const std::optional<json_text>& x) { return x ? x->str().size() + 3 : 5; }
size_t text_size(int64_t) { return 21; }

template <class Range, class Append>
array_literal make_array(const Range& xs, Append append) {
  array_literal result;
  // Quotes and separators counted; the escapes of a JSON payload's quotes may grow it once.
  size_t size = 2;
  for (const auto& x : xs)
    size += text_size(x);
  result.text.reserve(size);
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
