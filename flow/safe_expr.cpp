#include "flow/safe_expr.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <vector>

#include <boost/json/serialize.hpp>

namespace nf::flow {

namespace {

enum class op : unsigned char {
  literal, root, name, member, index, not_, neg, mul, div, mod, add, sub,
  lt, le, gt, ge, eq, ne, and_, or_, cond,
};

struct node {
  op kind;
  int a = -1, b = -1, c = -1;
  boost::json::value value;  // literal
  std::string text;          // name / member
};

constexpr int max_depth = 64;

// A value that is either borrowed from the root or owned.
struct val {
  const boost::json::value* ref = nullptr;
  boost::json::value owned;
  const boost::json::value& get() const { return ref != nullptr ? *ref : owned; }
};

bool is_number(const boost::json::value& v) {
  return v.is_int64() || v.is_uint64() || v.is_double();
}

double as_double(const boost::json::value& v) {
  if (v.is_int64())
    return static_cast<double>(v.get_int64());
  if (v.is_uint64())
    return static_cast<double>(v.get_uint64());
  return v.get_double();
}

boost::json::value number(double d) {
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15)
    return static_cast<std::int64_t>(d);
  return d;
}

bool equal(const boost::json::value& x, const boost::json::value& y) {
  if (is_number(x) && is_number(y))
    return as_double(x) == as_double(y);
  return x == y;
}

}  // namespace

struct safe_expr::impl {
  std::vector<node> nodes;
  int root = -1;
  bool reads_input = false;

  // -- parsing --------------------------------------------------------------
  std::string_view src;
  std::size_t pos = 0;
  int depth = 0;
  std::string err;

  bool fail(std::string what) {
    if (err.empty())
      err = std::move(what) + " at offset " + std::to_string(pos);
    return false;
  }

  void skip_space() {
    while (pos < src.size() && std::isspace(static_cast<unsigned char>(src[pos])))
      ++pos;
  }

  bool accept(std::string_view tok) {
    skip_space();
    if (src.compare(pos, tok.size(), tok) != 0)
      return false;
    // "=" must not match the first char of "==", "!" not of "!=", etc.
    pos += tok.size();
    return true;
  }

  bool accept_word(std::string_view word) {
    skip_space();
    if (src.compare(pos, word.size(), word) != 0)
      return false;
    std::size_t end = pos + word.size();
    if (end < src.size() && (std::isalnum(static_cast<unsigned char>(src[end])) || src[end] == '_'
                             || src[end] == '$'))
      return false;
    pos = end;
    return true;
  }

  int add(node n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }

  int binary(op k, int a, int b) { return add({k, a, b, -1, nullptr, {}}); }

  bool program(int& out) {
    skip_space();
    if (!if_statement(out) && err.empty()) {
      accept_word("return");
      if (!expr(out))
        return false;
      accept(";");
    }
    if (!err.empty())
      return false;
    skip_space();
    if (pos != src.size())
      return fail("unexpected " + std::string(1, src[pos]));
    return true;
  }

  // if (c) { e; } else { e; }  |  else if …  — returns false without error if
  // the text does not start with `if`.
  bool if_statement(int& out) {
    if (!accept_word("if"))
      return false;
    if (++depth > max_depth)
      return fail("expression nested too deeply");
    int c, a, b;
    if (!accept("("))
      return fail("expected '('");
    if (!expr(c))
      return false;
    if (!accept(")"))
      return fail("expected ')'");
    if (!block(a))
      return false;
    if (!accept_word("else"))
      return fail("expected else (both branches must produce a value)");
    skip_space();
    if (src.compare(pos, 2, "if") == 0) {
      if (!if_statement(b))
        return fail("expected if");
    } else if (!block(b)) {
      return false;
    }
    out = add({op::cond, c, a, b, nullptr, {}});
    --depth;
    return true;
  }

  bool block(int& out) {
    if (!accept("{"))
      return fail("expected '{'");
    skip_space();
    if (src.compare(pos, 2, "if") == 0) {
      if (!if_statement(out))
        return false;
    } else {
      accept_word("return");
      if (!expr(out))
        return false;
    }
    accept(";");
    if (!accept("}"))
      return fail("expected '}'");
    return true;
  }

  bool expr(int& out) {
    if (++depth > max_depth)
      return fail("expression nested too deeply");
    bool ok = ternary(out);
    --depth;
    return ok;
  }

  bool ternary(int& out) {
    if (!logical_or(out))
      return false;
    if (!accept("?"))
      return true;
    int a, b;
    if (!expr(a))
      return false;
    if (!accept(":"))
      return fail("expected ':'");
    if (!expr(b))
      return false;
    out = add({op::cond, out, a, b, nullptr, {}});
    return true;
  }

  // Binary operators by precedence, loosest first; longer tokens before their
  // prefixes ("===" before "==", "<=" before "<").
  struct binop {
    std::string_view token;
    op kind;
  };
  static constexpr binop levels[][4] = {
    {{"||", op::or_}},
    {{"&&", op::and_}},
    {{"===", op::eq}, {"==", op::eq}, {"!==", op::ne}, {"!=", op::ne}},
    {{"<=", op::le}, {">=", op::ge}, {"<", op::lt}, {">", op::gt}},
    {{"+", op::add}, {"-", op::sub}},
    {{"*", op::mul}, {"/", op::div}, {"%", op::mod}},
  };

  bool logical_or(int& out) { return binary_level(0, out); }

  bool binary_level(std::size_t level, int& out) {
    if (level == std::size(levels))
      return unary(out);
    if (!binary_level(level + 1, out))
      return false;
    for (;;) {
      const binop* hit = nullptr;
      for (const auto& b : levels[level])
        if (!b.token.empty() && accept(b.token)) {
          hit = &b;
          break;
        }
      if (hit == nullptr)
        return true;
      int r;
      if (!binary_level(level + 1, r))
        return false;
      out = binary(hit->kind, out, r);
    }
  }

  bool unary(int& out) {
    skip_space();
    op k;
    if (src.compare(pos, 1, "!") == 0 && src.compare(pos, 2, "!=") != 0) {
      ++pos;
      k = op::not_;
    } else if (accept("-")) {
      k = op::neg;
    } else {
      return postfix(out);
    }
    if (++depth > max_depth)
      return fail("expression nested too deeply");
    int a;
    if (!unary(a))
      return false;
    --depth;
    out = add({k, a, -1, -1, nullptr, {}});
    return true;
  }

  bool identifier(std::string& out) {
    skip_space();
    std::size_t start = pos;
    while (pos < src.size()
           && (std::isalnum(static_cast<unsigned char>(src[pos])) || src[pos] == '_'
               || src[pos] == '$'))
      ++pos;
    if (pos == start || std::isdigit(static_cast<unsigned char>(src[start])))
      return fail("expected a name");
    out = std::string(src.substr(start, pos - start));
    return true;
  }

  bool postfix(int& out) {
    if (!primary(out))
      return false;
    for (;;) {
      if (accept(".")) {
        std::string name;
        if (!identifier(name))
          return false;
        out = add({op::member, out, -1, -1, nullptr, std::move(name)});
      } else if (accept("[")) {
        int i;
        if (!expr(i))
          return false;
        if (!accept("]"))
          return fail("expected ']'");
        out = binary(op::index, out, i);
      } else {
        return true;
      }
    }
  }

  bool string_literal(int& out) {
    char q = src[pos++];
    std::string s;
    while (pos < src.size() && src[pos] != q) {
      char c = src[pos++];
      if (c == '\\' && pos < src.size()) {
        char e = src[pos++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      s += c;
    }
    if (pos >= src.size())
      return fail("unterminated string");
    ++pos;
    out = add({op::literal, -1, -1, -1, boost::json::string(s), {}});
    return true;
  }

  bool number_literal(int& out) {
    std::size_t start = pos;
    while (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos])))
      ++pos;
    bool real = false;
    if (pos < src.size() && src[pos] == '.') {
      real = true;
      ++pos;
      while (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos])))
        ++pos;
    }
    std::string text(src.substr(start, pos - start));
    if (!real && text.size() < 16)
      out = add({op::literal, -1, -1, -1, std::int64_t{std::stoll(text)}, {}});
    else
      out = add({op::literal, -1, -1, -1, std::strtod(text.c_str(), nullptr), {}});
    return true;
  }

  bool primary(int& out) {
    skip_space();
    if (pos >= src.size())
      return fail("unexpected end of expression");
    char c = src[pos];
    if (c == '(') {
      ++pos;
      if (!expr(out))
        return false;
      if (!accept(")"))
        return fail("expected ')'");
      return true;
    }
    if (c == '\'' || c == '"')
      return string_literal(out);
    if (std::isdigit(static_cast<unsigned char>(c)))
      return number_literal(out);
    if (accept_word("true")) {
      out = add({op::literal, -1, -1, -1, true, {}});
      return true;
    }
    if (accept_word("false")) {
      out = add({op::literal, -1, -1, -1, false, {}});
      return true;
    }
    if (accept_word("null") || accept_word("undefined")) {
      out = add({op::literal, -1, -1, -1, nullptr, {}});
      return true;
    }
    if (accept_word("$")) {
      reads_input = true;
      out = add({op::root, -1, -1, -1, nullptr, {}});
      return true;
    }
    std::string name;
    if (!identifier(name))
      return fail("expected a value");
    reads_input = true;
    out = add({op::name, -1, -1, -1, nullptr, std::move(name)});
    return true;
  }

  // -- evaluation -----------------------------------------------------------
  bool eval(int i, const boost::json::value& in, val& out, std::string& error) const {
    const node& n = nodes[static_cast<std::size_t>(i)];
    val x, y;
    auto arith_fail = [&](const char* what) {
      error = std::string("cannot ") + what + " " + boost::json::serialize(x.get()) + " and "
              + boost::json::serialize(y.get());
      return false;
    };
    switch (n.kind) {
      case op::literal: out.ref = &n.value; return true;
      case op::root: out.ref = &in; return true;
      case op::name: {
        const auto* obj = in.if_object();
        const auto* v = obj == nullptr ? nullptr : obj->if_contains(n.text);
        out.ref = v != nullptr ? v : &null_value();
        return true;
      }
      case op::member: {
        if (!eval(n.a, in, x, error))
          return false;
        const auto& base = x.get();
        const boost::json::value* v = nullptr;
        if (const auto* obj = base.if_object())
          v = obj->if_contains(n.text);
        if (v == nullptr && n.text == "length") {
          if (const auto* arr = base.if_array())
            return set(out, x, static_cast<std::int64_t>(arr->size()));
          if (const auto* s = base.if_string())
            return set(out, x, static_cast<std::int64_t>(s->size()));
        }
        return borrow(out, x, v);
      }
      case op::index: {
        if (!eval(n.a, in, x, error) || !eval(n.b, in, y, error))
          return false;
        const auto& base = x.get();
        const auto& key = y.get();
        const boost::json::value* v = nullptr;
        if (const auto* obj = base.if_object(); obj != nullptr && key.is_string())
          v = obj->if_contains(key.get_string());
        else if (const auto* arr = base.if_array(); arr != nullptr && is_number(key)) {
          double d = as_double(key);
          if (d >= 0 && d < static_cast<double>(arr->size()) && std::floor(d) == d)
            v = &(*arr)[static_cast<std::size_t>(d)];
        }
        return borrow(out, x, v);
      }
      case op::not_:
        if (!eval(n.a, in, x, error))
          return false;
        out.owned = !truthy(x.get());
        return true;
      case op::neg:
        if (!eval(n.a, in, x, error))
          return false;
        if (!is_number(x.get()))
          return arith_fail("negate");
        out.owned = number(-as_double(x.get()));
        return true;
      case op::and_:
      case op::or_: {
        if (!eval(n.a, in, x, error))
          return false;
        bool t = truthy(x.get());
        if ((n.kind == op::and_) != t) {
          out = std::move(x);
          return true;
        }
        return eval(n.b, in, out, error);
      }
      case op::cond:
        if (!eval(n.a, in, x, error))
          return false;
        return eval(truthy(x.get()) ? n.b : n.c, in, out, error);
      default: break;
    }
    if (!eval(n.a, in, x, error) || !eval(n.b, in, y, error))
      return false;
    const auto& l = x.get();
    const auto& r = y.get();
    switch (n.kind) {
      case op::eq: out.owned = equal(l, r); return true;
      case op::ne: out.owned = !equal(l, r); return true;
      case op::lt:
      case op::le:
      case op::gt:
      case op::ge: {
        int cmp;
        if (is_number(l) && is_number(r)) {
          double a = as_double(l), b = as_double(r);
          cmp = a < b ? -1 : a > b ? 1 : 0;
        } else if (l.is_string() && r.is_string()) {
          cmp = l.get_string().subview().compare(r.get_string().subview());
        } else {
          out.owned = false;  // JavaScript compares mixed kinds as false here
          return true;
        }
        out.owned = n.kind == op::lt   ? cmp < 0
                    : n.kind == op::le ? cmp <= 0
                    : n.kind == op::gt ? cmp > 0
                                       : cmp >= 0;
        return true;
      }
      case op::add:
        if (l.is_string() || r.is_string()) {
          std::string s = case_label(l);
          s += case_label(r);
          out.owned = boost::json::string(s);
          return true;
        }
        [[fallthrough]];
      default: break;
    }
    if (!is_number(l) || !is_number(r))
      return arith_fail("do arithmetic on");
    double a = as_double(l), b = as_double(r);
    switch (n.kind) {
      case op::add: out.owned = number(a + b); return true;
      case op::sub: out.owned = number(a - b); return true;
      case op::mul: out.owned = number(a * b); return true;
      case op::div:
      case op::mod:
        if (b == 0)
          return arith_fail("divide");
        out.owned = number(n.kind == op::div ? a / b : std::fmod(a, b));
        return true;
      default: return false;
    }
  }

  static const boost::json::value& null_value() {
    static const boost::json::value null;
    return null;
  }

  // `from` may own what `v` points into: keep ownership with the result.
  static bool borrow(val& out, val& from, const boost::json::value* v) {
    if (v == nullptr) {
      out.ref = &null_value();
    } else if (from.ref != nullptr) {
      out.ref = v;
    } else {
      out.owned = *v;
    }
    return true;
  }

  static bool set(val& out, val&, boost::json::value v) {
    out.owned = std::move(v);
    return true;
  }
};

safe_expr::safe_expr() : impl_(std::make_unique<impl>()) {
}
safe_expr::~safe_expr() = default;
safe_expr::safe_expr(safe_expr&&) noexcept = default;
safe_expr& safe_expr::operator=(safe_expr&&) noexcept = default;

bool safe_expr::compile(std::string_view text, std::string& error) {
  impl_ = std::make_unique<impl>();
  impl_->src = text;
  int root = -1;
  if (!impl_->program(root)) {
    error = impl_->err.empty() ? "invalid expression" : impl_->err;
    return false;
  }
  impl_->root = root;
  impl_->src = {};
  return true;
}

bool safe_expr::evaluate(const boost::json::value& root, boost::json::value& out,
                         std::string& error) const {
  if (impl_->root < 0) {
    error = "expression was not compiled";
    return false;
  }
  val v;
  if (!impl_->eval(impl_->root, root, v, error))
    return false;
  out = v.get();
  return true;
}

bool safe_expr::is_constant() const {
  return !impl_->reads_input;
}

bool truthy(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return false;
    case boost::json::kind::bool_: return v.get_bool();
    case boost::json::kind::int64: return v.get_int64() != 0;
    case boost::json::kind::uint64: return v.get_uint64() != 0;
    case boost::json::kind::double_: return v.get_double() != 0 && !std::isnan(v.get_double());
    case boost::json::kind::string: return !v.get_string().empty();
    default: return true;
  }
}

std::string case_label(const boost::json::value& v) {
  if (const auto* s = v.if_string())
    return std::string(*s);
  return boost::json::serialize(v);
}

} // namespace nf::flow
