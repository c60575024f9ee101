#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nf::store {

/// A serialised JSONB value. Only the `json()` funnel (store/json.hpp) makes
/// one, so every JSONB write goes through it and has had `\u0000` stripped.
class json_text {
public:
  const std::string& str() const { return text_; }

private:
  friend json_text make_json_text(std::string text);
  explicit json_text(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

class result;

/// A Postgres array literal (`{"a","b",NULL}`) for `unnest($n::type[])` batches.
struct array_literal {
  std::string text;
};

array_literal text_array(const std::vector<std::string>& xs);
array_literal text_array(const std::vector<std::optional<std::string>>& xs);
/// Column `column` of every row of `r`, in row order, a NULL as NULL: the keys one statement
/// returned, for the next to read by.
array_literal text_array(const result& r, int column);
array_literal int_array(const std::vector<int64_t>& xs);
array_literal json_array(const std::vector<json_text>& xs);
array_literal json_array(const std::vector<std::optional<json_text>>& xs);

/// A `timestamptz` parameter's text for a time given in milliseconds since the epoch (UTC).
std::string timestamptz_text(int64_t epoch_ms);

/// Positional statement parameters ($1, $2, ...) as text. A named statement's arrays of the
/// types its text declares go in the binary format (store/pg/binary_params.hpp).
class params {
public:
  params() = default;

  template <class... Ts>
  static params of(const Ts&... xs) {
    params p;
    (p.add(xs), ...);
    return p;
  }

  params& add(std::string_view x) { values_.emplace_back(std::string{x}); return *this; }
  params& add(const std::string& x) { values_.emplace_back(x); return *this; }
  params& add(const char* x) { values_.emplace_back(std::string{x}); return *this; }
  params& add(int64_t x) { values_.emplace_back(std::to_string(x)); return *this; }
  params& add(int32_t x) { values_.emplace_back(std::to_string(x)); return *this; }
  params& add(uint32_t x) { values_.emplace_back(std::to_string(x)); return *this; }
  params& add(uint64_t x) { values_.emplace_back(std::to_string(x)); return *this; }
  params& add(int16_t x) { values_.emplace_back(std::to_string(x)); return *this; }
  params& add(bool x) { values_.emplace_back(x ? "t" : "f"); return *this; }
  params& add(double x);
  params& add(const json_text& x) { values_.emplace_back(x.str()); return *this; }
  params& add(const array_literal& x) { values_.emplace_back(x.text); return *this; }
  params& add(std::nullopt_t) { values_.emplace_back(std::nullopt); return *this; }

  template <class T>
  params& add(const std::optional<T>& x) {
    if (x)
      return add(*x);
    return add(std::nullopt);
  }

  /// Named identifier types (workflow_id, lease_token, ...) expose `str()`.
  template <class T, class = decltype(std::declval<const T&>().str())>
  params& add(const T& x) {
    return add(x.str());
  }

  size_t size() const { return values_.size(); }
  const std::vector<std::optional<std::string>>& values() const { return values_; }

private:
  std::vector<std::optional<std::string>> values_;
};

} // namespace nf::store
