#pragma once

// A small, safe expression language for SWITCH (evaluatorType "javascript" or
// "graaljs") and DO_WHILE loop conditions — a JavaScript subset, never a
// JavaScript engine: literals, `$` (the evaluation root), bare names (fields of
// the root), `.name`, `[expr]`, `.length`, ! - * / % + < <= > >= == != === !==
// && || ?: and parentheses; plus Conductor's statement form
// `if (c) { a; } else { b; }` (with optional `return`). No loops, no calls, no
// assignment: evaluation always terminates and touches nothing.

#include <memory>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace nf::flow {

class safe_expr {
 public:
  safe_expr();
  ~safe_expr();
  safe_expr(safe_expr&&) noexcept;
  safe_expr& operator=(safe_expr&&) noexcept;

  /// Parses `text`. On failure returns false and sets `error` (what was
  /// expected and at which offset).
  bool compile(std::string_view text, std::string& error);

  /// Evaluates against `root`. Fails (false + `error`) on arithmetic over
  /// non-numbers or division by zero; a missing field is null, not an error.
  bool evaluate(const boost::json::value& root, boost::json::value& out,
                std::string& error) const;

  /// True when the expression reads neither `$` nor any name.
  bool is_constant() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// JavaScript truthiness: null, false, 0, NaN and "" are false.
bool truthy(const boost::json::value& v);

/// The SWITCH case label a value selects: strings as written, everything else
/// as JSON text (1 → "1", true → "true", null → "null").
std::string case_label(const boost::json::value& v);

} // namespace nf::flow
