#pragma once

// Compile-time checking of SQL identifiers against the schema the migrations
// create (store/schema/schema_catalog.hpp, generated). Every double-quoted identifier
// of a statement must name a known table, index, function or enum type, or a
// column of one of the tables the statement names (of any table when it names
// none). A statement declared
//
//   constexpr statement claim{"lease.claim_batch", R"(SELECT "queueNam" FROM "TaskQueues")"};
//
// then fails to compile, and the error's constexpr backtrace shows the
// offending identifier: `unknown_sql_identifier(... "queueNam" ...)`. The system
// columns ("ctid", "tableoid", …) are columns of every table.
//
// Write aliases unquoted (`AS t(name, sql)`, `AS granted`): a quoted alias is
// not in the catalog. Text inside '…' literals, $tag$…$tag$ bodies and comments
// is not checked. Build with NF_NO_SQL_CHECK to switch the check off (the
// catalog tool does, so it can always be built to regenerate the catalog).

#include <cstddef>
#include <initializer_list>
#include <string_view>

#ifndef NF_NO_SQL_CHECK
#include "store/schema/schema_catalog.hpp"
#endif

namespace nf::store {

namespace sql_check_detail {

/// One quoted identifier of a statement.
struct token {
  std::string_view text;
  std::size_t end = 0; ///< where scanning resumes
  bool found = false;
};

constexpr bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// The next double-quoted identifier at or after `at`, skipping string
/// literals, dollar-quoted bodies and comments.
constexpr token next_identifier(std::string_view sql, std::size_t at) {
  const std::size_t n = sql.size();
  while (at < n) {
    char c = sql[at];
    if (c == '\'') { // '…' with '' as the escaped quote
      ++at;
      while (at < n) {
        if (sql[at] == '\'' && at + 1 < n && sql[at + 1] == '\'')
          at += 2;
        else if (sql[at] == '\'')
          break;
        else
          ++at;
      }
      ++at;
    } else if (c == '-' && at + 1 < n && sql[at + 1] == '-') {
      while (at < n && sql[at] != '\n')
        ++at;
    } else if (c == '/' && at + 1 < n && sql[at + 1] == '*') {
      at += 2;
      while (at + 1 < n && !(sql[at] == '*' && sql[at + 1] == '/'))
        ++at;
      at += 2;
    } else if (c == '$' && (at == 0 || !is_ident_char(sql[at - 1]))
               && at + 1 < n && !(sql[at + 1] >= '0' && sql[at + 1] <= '9')) {
      // $tag$ … $tag$ ($1 is a parameter, not a tag).
      std::size_t tag_end = at + 1;
      while (tag_end < n && sql[tag_end] != '$' && is_ident_char(sql[tag_end]))
        ++tag_end;
      if (tag_end >= n || sql[tag_end] != '$') {
        ++at;
        continue;
      }
      auto tag = sql.substr(at, tag_end - at + 1);
      auto close = sql.find(tag, tag_end + 1);
      at = close == std::string_view::npos ? n : close + tag.size();
    } else if (c == '"') {
      std::size_t start = at + 1;
      std::size_t end = start;
      while (end < n && sql[end] != '"')
        ++end;
      return token{sql.substr(start, end - start), end + 1, true};
    } else {
      ++at;
    }
  }
  return token{};
}

#ifndef NF_NO_SQL_CHECK

template <class T, std::size_t N>
constexpr const T* find_sorted(const T (&xs)[N], std::string_view name) {
  std::size_t lo = 0, hi = N;
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (xs[mid].name < name)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < N && xs[lo].name == name ? &xs[lo] : nullptr;
}

constexpr bool has_column(const schema::table_info& t, std::string_view name) {
  for (std::size_t i = 0; i < t.column_count; ++i)
    if (schema::columns[t.first_column + i].name == name)
      return true;
  return false;
}

constexpr bool names_object(std::string_view name) {
  return find_sorted(schema::tables, name) || find_sorted(schema::indexes, name)
         || find_sorted(schema::functions, name) || find_sorted(schema::enums, name);
}

/// The columns every table has (a tuple's id, its table's oid, its versions).
constexpr bool is_system_column(std::string_view name) {
  for (std::string_view c : {"ctid", "tableoid", "xmin", "xmax", "cmin", "cmax"})
    if (c == name)
      return true;
  return false;
}

constexpr bool known_in(std::string_view sql, std::string_view name) {
  if (names_object(name) || is_system_column(name))
    return true;
  bool any_table = false;
  for (auto t = next_identifier(sql, 0); t.found; t = next_identifier(sql, t.end)) {
    if (const auto* table = find_sorted(schema::tables, t.text)) {
      any_table = true;
      if (has_column(*table, name))
        return true;
    }
  }
  if (any_table)
    return false;
  for (const auto& table : schema::tables)
    if (has_column(table, name))
      return true;
  return false;
}

#endif

/// Where an unknown identifier sits; `length == 0` when all are known.
struct unknown_identifier {
  std::size_t offset = 0;
  std::size_t length = 0;
};

constexpr unknown_identifier first_unknown(std::string_view sql) {
#ifndef NF_NO_SQL_CHECK
  for (auto t = next_identifier(sql, 0); t.found; t = next_identifier(sql, t.end))
    if (!known_in(sql, t.text))
      return unknown_identifier{t.end - 1 - t.text.size(), t.text.size()};
#else
  (void) sql;
#endif
  return {};
}

/// The identifier, copied so the compiler's constexpr backtrace prints it.
struct unknown_sql_identifier_name {
  char text[64];
};

/// Not a constant expression on purpose: reaching it during constant
/// evaluation is the compile error that names the identifier.
inline void unknown_sql_identifier(unknown_sql_identifier_name) {
}

constexpr void fail_unknown(std::string_view sql, unknown_identifier u) {
  unknown_sql_identifier_name name{};
  for (std::size_t i = 0; i < u.length && i + 1 < sizeof name.text; ++i)
    name.text[i] = sql[u.offset + i];
  if (u.length != 0)
    unknown_sql_identifier(name);
}

} // namespace sql_check_detail

/// True when every double-quoted identifier in `sql` is known to the schema
/// catalog (see the top of this file for the rules).
constexpr bool sql_identifiers_known(const char* sql) {
  return sql_check_detail::first_unknown(sql).length == 0;
}

/// A SQL statement with a stable name, used as the prepared-statement name and
/// in logs and metrics (e.g. "lease.claim_batch"). Declared `constexpr`, its
/// identifiers are checked against the schema catalog at compile time.
struct statement {
  const char* name;
  const char* sql;
  /// K when the statement finds its rows by `= ANY($K::uuid[])` on a partition key: its
  /// small batches then run a variant that prunes partitions (store/pg/pruning.hpp).
  int prune_on = 0;
  /// K when `$K::uuid[]` holds every workflow id whose `"WorkflowExecutions"` row the
  /// statement finds: its `/*started: <column> */` comment then bounds that column by the
  /// ids' start times, which prunes the monthly partitions (store/pg/pruning.hpp).
  int started_on = 0;
  /// The statement this one is a variant of (store/pg/owned_statement.hpp), whose text
  /// declares the parameters' types: a variant's text may no longer name a parameter at
  /// all (a pruning variant spells out its key array), and is prepared with its base's
  /// types so the server still knows that parameter's.
  const statement* typed_as = nullptr;

  constexpr statement(const char* name_, const char* sql_, int prune_on_ = 0,
                      int started_on_ = 0, const statement* typed_as_ = nullptr)
    : name(name_), sql(sql_), prune_on(prune_on_), started_on(started_on_),
      typed_as(typed_as_) {
    // Only while the compiler evaluates it: a statement built at run time (or
    // a non-constexpr one) is not checked, and nothing here ever throws.
    if (__builtin_is_constant_evaluated()) {
      if (auto u = sql_check_detail::first_unknown(sql_); u.length != 0)
        sql_check_detail::fail_unknown(sql_, u);
    }
  }
};

} // namespace nf::store
