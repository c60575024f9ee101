#include "store/pg/result.hpp"

#include <cassert>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include <libpq-fe.h>

namespace nf::store {

void result::deleter::operator()(pg_result* r) const {
  PQclear(r);
}

result::result(pg_result* res) : res_(res, deleter{}) {
}

int result::rows() const {
  return res_ ? PQntuples(res_.get()) : 0;
}

int result::columns() const {
  return res_ ? PQnfields(res_.get()) : 0;
}

int64_t result::affected() const {
  if (!res_)
    return 0;
  const char* n = PQcmdTuples(res_.get());
  return (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
}

bool result::is_null(int row, int col) const {
  assert(row < rows() && col < columns());
  return PQgetisnull(res_.get(), row, col) != 0;
}

std::string_view result::text(int row, int col) const {
  assert(row < rows() && col < columns());
  return {PQgetvalue(res_.get(), row, col),
          static_cast<size_t>(PQgetlength(res_.get(), row, col))};
}

int result::column_named(std::string_view name, int from) const {
  for (int col = from; col < columns(); ++col)
    if (name == PQfname(res_.get(), col))
      return col;
  // An assertion that stays in release builds, which the tests run: a decoder that names a
  // column its statement lacks would otherwise read column -1 of every row as empty.
  std::fprintf(stderr, "nodeflow: no result column named %.*s\n", static_cast<int>(name.size()),
               name.data());
  std::abort();
}

int64_t result::i64(int row, int col) const {
  assert(!is_null(row, col));
  auto t = text(row, col);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  assert(ec == std::errc{} && ptr == t.data() + t.size());
  (void) ptr;
  (void) ec;
  return v;
}

double result::f64(int row, int col) const {
  assert(!is_null(row, col));
  return std::strtod(PQgetvalue(res_.get(), row, col), nullptr);
}

bool result::boolean(int row, int col) const {
  assert(!is_null(row, col));
  return text(row, col) == "t";
}

std::optional<std::string> result::opt_str(int row, int col) const {
  if (is_null(row, col))
    return std::nullopt;
  return str(row, col);
}

std::optional<int64_t> result::opt_i64(int row, int col) const {
  if (is_null(row, col))
    return std::nullopt;
  return i64(row, col);
}

} // namespace nf::store
