#pragma once

// Reads the schema a migrated database really has and writes it as the C++
// header store/schema/schema_catalog.hpp (the generated table of tables, columns,
// indexes, enum labels and functions that sql_check.hpp checks statements
// against). Header-only on purpose: the nodeflow-catalog tool and the
// store.catalog test are its only two users, and the test binary links nothing
// but nf_store.

#include <algorithm>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"
#include "proto/errors.hpp"

namespace nf::store::catalog {

struct column {
  std::string name;
  std::string type; ///< format_type(): "uuid", "timestamp with time zone", "text[]", an enum name
  bool not_null = false;
};

struct table {
  std::string name;
  std::vector<column> columns; ///< in attnum order, as the migrations declared them
};

struct index {
  std::string name;
  std::string table;
  std::string definition; ///< pg_get_indexdef(): columns, order and partial predicate
};

struct enum_type {
  std::string name;
  std::vector<std::string> labels; ///< in enumsortorder
};

struct function {
  std::string name;
  std::string arguments;
  std::string result;
};

/// Everything of schema `public` that statements may name. Partitions are left
/// out (the partition manager creates and drops them at run time), so the model
/// depends only on the migrations, never on the day it was read.
struct model {
  std::vector<table> tables;         ///< sorted by name
  std::vector<index> indexes;        ///< sorted by name
  std::vector<enum_type> enums;      ///< sorted by name
  std::vector<function> functions;   ///< sorted by name, then arguments
};

namespace detail {

// Plain (unprepared) queries: the tool runs once, and these are catalog reads
// whose names sql_check could not know anyway.
inline constexpr const char* tables_sql = R"(
  SELECT c.relname AS table_name, a.attname AS column_name,
         format_type(a.atttypid, a.atttypmod) AS column_type, a.attnotnull AS not_null
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
   WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
   ORDER BY c.relname, a.attnum)";

inline constexpr const char* indexes_sql = R"(
  SELECT i.relname AS index_name, c.relname AS table_name, pg_get_indexdef(i.oid) AS definition
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class c ON c.oid = x.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition)";

inline constexpr const char* enums_sql = R"(
  SELECT t.typname AS enum_name, e.enumlabel AS label
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_enum e ON e.enumtypid = t.oid
   WHERE n.nspname = 'public'
   ORDER BY t.typname, e.enumsortorder)";

inline constexpr const char* functions_sql = R"(
  SELECT p.proname AS function_name, pg_get_function_identity_arguments(p.oid) AS arguments,
         pg_get_function_result(p.oid) AS result_type
    FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = 'public'
     -- An extension's functions are not the schema's: a server with the optional `vector`
     -- extension (migration 0032) has the same catalog as one without.
     AND NOT EXISTS (SELECT 1 FROM pg_depend d
                      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                        AND d.deptype = 'e'))";

inline caf::expected<result> query(connection& conn, const char* sql) {
  auto r = conn.exec(sql);
  if (!r)
    return make_error(code_of(r.error()), "reading the catalog: " + message_of(r.error()));
  return r;
}

// A C++ string literal (the definitions hold double quotes, never newlines).
inline std::string lit(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

} // namespace detail

/// Reads the model from a migrated database.
inline caf::expected<model> read(connection& conn) {
  model m;
  auto t = detail::query(conn, detail::tables_sql);
  if (!t)
    return std::move(t.error());
  const int table_name = t->column_named("table_name"),
            column_name = t->column_named("column_name"),
            column_type = t->column_named("column_type"), not_null = t->column_named("not_null");
  for (int i = 0; i < t->rows(); ++i) {
    if (m.tables.empty() || m.tables.back().name != t->text(i, table_name))
      m.tables.push_back(table{t->str(i, table_name), {}});
    m.tables.back().columns.push_back(
      column{t->str(i, column_name), t->str(i, column_type), t->boolean(i, not_null)});
  }
  auto x = detail::query(conn, detail::indexes_sql);
  if (!x)
    return std::move(x.error());
  const int index_name = x->column_named("index_name"), indexed = x->column_named("table_name"),
            definition = x->column_named("definition");
  for (int i = 0; i < x->rows(); ++i)
    m.indexes.push_back(index{x->str(i, index_name), x->str(i, indexed), x->str(i, definition)});
  auto e = detail::query(conn, detail::enums_sql);
  if (!e)
    return std::move(e.error());
  const int enum_name = e->column_named("enum_name"), label = e->column_named("label");
  for (int i = 0; i < e->rows(); ++i) {
    if (m.enums.empty() || m.enums.back().name != e->text(i, enum_name))
      m.enums.push_back(enum_type{e->str(i, enum_name), {}});
    m.enums.back().labels.push_back(e->str(i, label));
  }
  auto f = detail::query(conn, detail::functions_sql);
  if (!f)
    return std::move(f.error());
  const int function_name = f->column_named("function_name"),
            arguments = f->column_named("arguments"), result_type = f->column_named("result_type");
  for (int i = 0; i < f->rows(); ++i)
    m.functions.push_back(
      function{f->str(i, function_name), f->str(i, arguments), f->str(i, result_type)});
  // Byte order, not the server's collation: the header must not depend on it,
  // and sql_check.hpp binary-searches these arrays with std::string_view's order.
  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::sort(m.tables.begin(), m.tables.end(), by_name);
  std::sort(m.indexes.begin(), m.indexes.end(), by_name);
  std::sort(m.enums.begin(), m.enums.end(), by_name);
  std::sort(m.functions.begin(), m.functions.end(), [](const function& a, const function& b) {
    return a.name != b.name ? a.name < b.name : a.arguments < b.arguments;
  });
  return m;
}

/// The header text for `m`: same model, same bytes.
inline std::string render(const model& m) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line("// GENERATED by nodeflow-catalog from a database migrated with migrations/. Do not edit.");
  line("// After adding a migration, regenerate (see store/README.md, \"Schema catalog\"):");
  line("//   NODEFLOW_DSN=postgresql://... ninja -C BUILD regenerate_schema_catalog");
  line("// The store.catalog test fails while this file differs from what the migrations create.");
  line("#pragma once");
  line("");
  line("#include <cstddef>");
  line("#include <string_view>");
  line("");
  line("namespace nf::store::schema {");
  line("");
  line("struct column_info { std::string_view name; std::string_view type; bool not_null; };");
  line("struct table_info { std::string_view name; std::size_t first_column; std::size_t column_count; };");
  line("struct index_info { std::string_view name; std::string_view table; std::string_view definition; };");
  line("struct enum_info { std::string_view name; std::size_t first_label; std::size_t label_count; };");
  line("struct function_info { std::string_view name; std::string_view arguments; std::string_view result; };");
  line("");
  line("/// Columns of every table, table by table (in `tables` order), in declaration order.");
  line("inline constexpr column_info columns[] = {");
  for (const auto& t : m.tables) {
    line("  // " + t.name);
    for (const auto& c : t.columns)
      line("  {" + detail::lit(c.name) + ", " + detail::lit(c.type) + ", "
           + (c.not_null ? "true" : "false") + "},");
  }
  line("};");
  line("");
  line("/// Tables of schema public (partitioned parents, never their partitions), sorted.");
  line("inline constexpr table_info tables[] = {");
  // {name, first, count} rows of an array whose elements index a flat array.
  auto ranges = [&](const auto& items, auto size_of) {
    size_t first = 0;
    for (const auto& item : items) {
      line("  {" + detail::lit(item.name) + ", " + std::to_string(first) + ", "
           + std::to_string(size_of(item)) + "},");
      first += size_of(item);
    }
  };
  ranges(m.tables, [](const table& t) { return t.columns.size(); });
  line("};");
  line("");
  line("/// Indexes on those tables, sorted by name.");
  line("inline constexpr index_info indexes[] = {");
  for (const auto& x : m.indexes) {
    line("  {" + detail::lit(x.name) + ", " + detail::lit(x.table) + ",");
    line("   " + detail::lit(x.definition) + "},");
  }
  line("};");
  line("");
  line("/// Labels of every enum type, type by type (in `enums` order), in sort order.");
  line("inline constexpr std::string_view enum_labels[] = {");
  for (const auto& e : m.enums) {
    line("  // " + e.name);
    for (const auto& l : e.labels)
      line("  " + detail::lit(l) + ",");
  }
  line("};");
  line("");
  line("/// Enum types, sorted by name.");
  line("inline constexpr enum_info enums[] = {");
  ranges(m.enums, [](const enum_type& e) { return e.labels.size(); });
  line("};");
  line("");
  line("/// Functions the migrations define, sorted by name.");
  line("inline constexpr function_info functions[] = {");
  for (const auto& f : m.functions)
    line("  {" + detail::lit(f.name) + ", " + detail::lit(f.arguments) + ", " + detail::lit(f.result)
         + "},");
  line("};");
  line("");
  line("} // namespace nf::store::schema");
  return out;
}

/// A unified-diff-like summary of two texts ("-" only in `a`, "+" only in
/// `b`, a line of context around each change); empty when they are equal.
inline std::string diff(const std::string& a, const std::string& b, const std::string& a_name,
                        const std::string& b_name) {
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < s.size()) {
      auto nl = s.find('\n', at);
      if (nl == std::string::npos)
        nl = s.size();
      out.push_back(s.substr(at, nl - at));
      at = nl + 1;
    }
    return out;
  };
  auto x = split(a), y = split(b);
  // Longest common subsequence table, from the back.
  std::vector<std::vector<int>> lcs(x.size() + 1, std::vector<int>(y.size() + 1, 0));
  for (size_t i = x.size(); i-- > 0;)
    for (size_t j = y.size(); j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct op {
    char kind;
    std::string text;
    size_t line;
  };
  std::vector<op> ops;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (i < x.size() && j < y.size() && x[i] == y[j]) {
      ops.push_back({' ', x[i], i + 1});
      ++i;
      ++j;
    } else if (i < x.size() && (j == y.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', x[i], i + 1});
      ++i;
    } else {
      ops.push_back({'+', y[j], j + 1});
      ++j;
    }
  }
  auto shown = [&](size_t k) {
    for (size_t d = k > 0 ? k - 1 : 0; d <= k + 1 && d < ops.size(); ++d)
      if (ops[d].kind != ' ')
        return true;
    return false;
  };
  std::string out;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!shown(k))
      continue;
    if (out.empty())
      out = "--- " + a_name + "\n+++ " + b_name + "\n";
    if (k == 0 || !shown(k - 1))
      out += "@@ near line " + std::to_string(ops[k].line) + " @@\n";
    out += ops[k].kind + ops[k].text + "\n";
  }
  return out;
}

} // namespace nf::store::catalog
