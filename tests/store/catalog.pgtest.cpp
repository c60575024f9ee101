#define CAF_SUITE store.catalog
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "flow/definitions.hpp"
#include "flow/status.hpp"
#include "flow/task_type.hpp"
#include "store/schema/catalog/catalog.hpp"
#include "store/schema/schema_catalog.hpp"
#include "store/schema/sql_check.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::store;

namespace {

// The model the code was compiled against: store/schema/schema_catalog.hpp.
catalog::model compiled_catalog() {
  catalog::model m;
  for (const auto& t : schema::tables) {
    catalog::table table{std::string{t.name}, {}};
    for (size_t i = 0; i < t.column_count; ++i) {
      const auto& c = schema::columns[t.first_column + i];
      table.columns.push_back(catalog::column{std::string{c.name}, std::string{c.type}, c.not_null});
    }
    m.tables.push_back(std::move(table));
  }
  for (const auto& x : schema::indexes)
    m.indexes.push_back(
      catalog::index{std::string{x.name}, std::string{x.table}, std::string{x.definition}});
  for (const auto& e : schema::enums) {
    catalog::enum_type type{std::string{e.name}, {}};
    for (size_t i = 0; i < e.label_count; ++i)
      type.labels.emplace_back(schema::enum_labels[e.first_label + i]);
    m.enums.push_back(std::move(type));
  }
  for (const auto& f : schema::functions)
    m.functions.push_back(
      catalog::function{std::string{f.name}, std::string{f.arguments}, std::string{f.result}});
  return m;
}

std::set<std::string> db_labels(std::string_view enum_name) {
  for (const auto& e : schema::enums)
    if (e.name == enum_name) {
      std::set<std::string> out;
      for (size_t i = 0; i < e.label_count; ++i)
        out.emplace(schema::enum_labels[e.first_label + i]);
      return out;
    }
  CAF_FAIL("no enum type " << enum_name << " in the schema catalog");
  return {};
}

// Every label the database has parses in flow and prints back the same, and
// the first N enumerators (N = the database's count) print labels it has.
// flow offers no list of all its values (but task_type_labels()), so an extra
// trailing enumerator in flow is not seen here.
template <class Enum, class Parse>
std::set<std::string> flow_labels(const std::set<std::string>& db, Parse parse) {
  std::set<std::string> out;
  for (const auto& label : db) {
    auto e = parse(label);
    if (!e) {
      CAF_MESSAGE("flow cannot parse the database label " << label);
      continue;
    }
    out.emplace(to_string(*e));
  }
  for (size_t i = 0; i < db.size(); ++i)
    out.emplace(to_string(static_cast<Enum>(i)));
  return out;
}

std::set<std::string> split_labels(std::string_view list) {
  std::set<std::string> out;
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    out.emplace(item);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

} // namespace

CAF_TEST(the checked-in schema catalog is what the migrations create) {
  nf::test::test_database db{"catalog"};
  auto conn = db.connect();
  auto live = catalog::read(conn);
  CAF_REQUIRE(live);
  auto want = catalog::render(*live);
  auto have = catalog::render(compiled_catalog());
  auto diff = catalog::diff(have, want, "store/schema/schema_catalog.hpp (checked in)",
                            "schema of a freshly migrated database");
  if (!diff.empty())
    CAF_MESSAGE("the schema catalog is stale; regenerate it (store/README.md, \"Schema "
                "catalog\"):\n"
                << diff);
  CAF_CHECK(diff.empty());
  // Partitions are run-time state, never part of the catalog.
  for (const auto& t : live->tables)
    CAF_CHECK(t.name.find("_default") == std::string::npos && t.name.find("_p0") == std::string::npos);
}

CAF_TEST(sql_check knows the schema and rejects what it does not have) {
  static_assert(sql_identifiers_known(R"(SELECT "refName" FROM "TaskExecutions" WHERE "workflowId" = $1)"));
  static_assert(!sql_identifiers_known(R"(SELECT "refNam" FROM "TaskExecutions")"));
  // A column must belong to a table the statement names.
  static_assert(!sql_identifiers_known(R"(SELECT "queueName" FROM "WorkflowExecutions")"));
  static_assert(sql_identifiers_known(R"(SELECT "rename_partition_indexes"('"Nope"'))"));
  static_assert(sql_identifiers_known(R"(SELECT 1 -- "nope"
                                         /* "nope" */ FROM "Timers" WHERE $1 = $tag$"nope"$tag$)"));
  static_assert(!sql_identifiers_known(R"(SELECT 1 FROM unnest($1::text[]) AS t("name", "sql"))"));
  static_assert(sql_identifiers_known(R"(SELECT * FROM "TaskQueues" WHERE "queueName" = $1 AND "TaskQueues_task_idx" IS NULL)"));
  static_assert(sql_identifiers_known(R"(SELECT $1::task_execution_status, "timer_kind")"));
  CAF_CHECK(sql_identifiers_known(R"(UPDATE "Timers" SET "claimedAt" = now() WHERE "id" = $1)"));
  CAF_CHECK(!sql_identifiers_known(R"(UPDATE "Timers" SET "claimed" = now())"));
  // Built at run time: constructing never checks (and never throws).
  std::string runtime_sql = R"(SELECT "whatever" FROM "Nowhere")";
  statement st{"test.runtime", runtime_sql.c_str()};
  CAF_CHECK_EQUAL(std::string{st.sql}, runtime_sql);
}

CAF_TEST(flow enum labels equal the database enum labels) {
  auto wf = db_labels("workflow_execution_status");
  CAF_CHECK_EQUAL(flow_labels<nf::flow::workflow_status>(wf, nf::flow::parse_workflow_status), wf);
  auto ts = db_labels("task_execution_status");
  CAF_CHECK_EQUAL(flow_labels<nf::flow::task_status>(ts, nf::flow::parse_task_status), ts);
  auto tt = db_labels("task_execution_type");
  CAF_CHECK_EQUAL(split_labels(nf::flow::task_type_labels()), tt);
  CAF_CHECK_EQUAL(flow_labels<nf::flow::task_type>(tt, nf::flow::parse_task_type), tt);
  auto rl = db_labels("task_definition_retry_logic");
  CAF_CHECK_EQUAL(flow_labels<nf::flow::retry_logic>(rl, nf::flow::parse_retry_logic), rl);
  auto tp = db_labels("task_definition_timeout_policy");
  CAF_CHECK_EQUAL(flow_labels<nf::flow::timeout_policy>(tp, nf::flow::parse_timeout_policy), tp);
  // Workflows take the same flow enum minus RETRY (flow/definitions.hpp).
  auto wp = db_labels("workflow_definition_timeout_policy");
  auto flow_wp = flow_labels<nf::flow::timeout_policy>(tp, nf::flow::parse_timeout_policy);
  flow_wp.erase(std::string{to_string(nf::flow::timeout_policy::retry)});
  CAF_CHECK_EQUAL(flow_wp, wp);
}

CAF_TEST(the frontier index lists exactly the statuses flow calls terminal) {
  // The frontier query must repeat this predicate verbatim (docs/schema.md);
  // flow's notion of "terminal" has to be the same set.
  std::string_view def;
  for (const auto& x : schema::indexes)
    if (x.name == "TaskExecutions_frontier_idx")
      def = x.definition;
  CAF_REQUIRE(!def.empty());
  std::set<std::string> in_index;
  for (auto at = def.find('\''); at != std::string_view::npos; at = def.find('\'', at)) {
    auto end = def.find('\'', at + 1);
    in_index.emplace(def.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  std::set<std::string> terminal;
  for (const auto& label : db_labels("task_execution_status"))
    if (auto s = nf::flow::parse_task_status(label); s && nf::flow::is_terminal(*s))
      terminal.insert(label);
  CAF_CHECK_EQUAL(in_index, terminal);
}
