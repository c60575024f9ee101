#define CAF_SUITE store.explain_frontier
#include "caf/test/unit_test.hpp"

#include <set>

#include <boost/json.hpp>

#include "store/decide_support.hpp"
#include "store/decisions.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

/// A scan node of the plan that ran (EXPLAIN ANALYZE: "Actual Loops" > 0). A
/// Bitmap Index Scan names no relation: it takes its Bitmap Heap Scan parent's.
struct scan {
  std::string node, relation, index, condition;
};

void collect(const boost::json::object& plan, std::vector<scan>& out,
             const std::string& parent_relation = {}) {
  auto str = [&](const char* k) {
    auto it = plan.find(k);
    return it != plan.end() && it->value().is_string() ? std::string(it->value().get_string())
                                                       : std::string{};
  };
  auto loops = plan.find("Actual Loops");
  bool ran = loops != plan.end() && loops->value().to_number<double>() > 0;
  auto relation = str("Relation Name").empty() ? parent_relation : str("Relation Name");
  if (ran && !relation.empty() && (!str("Relation Name").empty() || !str("Index Name").empty()))
    out.push_back({str("Node Type"), relation, str("Index Name"), str("Index Cond")});
  if (auto it = plan.find("Plans"); it != plan.end())
    for (const auto& child : it->value().as_array())
      collect(child.as_object(), out, str("Relation Name"));
}

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("explain_frontier") {
    // 3000 workflows x 20 task rows (48000 terminal and seen, one frontier row
    // each, one unprocessed every 10th): history far outweighs the frontier, as in
    // production, so a plan that ignores the partial index would be visibly wrong.
    sql(R"(
      INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "attempt", "taskType",
                                    "taskDefName", "status", "endedAt", "deciderSeenAt")
      SELECT w.id, '00000000-0000-0000-0000-000000000001', 't' || i, 0, 'SIMPLE', 'work',
             CASE WHEN i = 20 THEN 'SCHEDULED' ELSE 'COMPLETED' END::task_execution_status,
             CASE WHEN i = 20 THEN NULL ELSE now() END,
             CASE WHEN i = 20 OR (i = 19 AND w.n % 10 = 0) THEN NULL ELSE now() END
        FROM (SELECT uuidv7() AS id, n FROM generate_series(1, 3000) n) w,
             generate_series(1, 20) i)");
    sql(R"(ANALYZE "TaskExecutions")");
    sql("SET plan_cache_mode = force_generic_plan");
  }

  std::vector<scan> explain(const statement& st, const std::vector<std::string>& workflows) {
    return explain(st, params::of(text_array(workflows)));
  }

  std::vector<scan> explain(const statement& st, const params& p) {
    auto r = conn.exec(std::string{"EXPLAIN (ANALYZE, FORMAT JSON) "} + st.sql, p);
    NF_REQUIRE_OK(r);
    boost::system::error_code ec;
    auto doc = boost::json::parse(r->str(0, 0), ec);
    CAF_REQUIRE(!ec);
    std::vector<scan> out;
    collect(doc.as_array().at(0).as_object().at("Plan").as_object(), out);
    return out;
  }

  /// The one index that served `relation`, which no sequential scan read.
  static std::string index_on(const std::vector<scan>& scans, const std::string& relation) {
    std::set<std::string> indexes;
    for (const auto& s : scans)
      if (s.relation == relation) {
        CAF_CHECK_NOT_EQUAL(s.node, "Seq Scan");
        if (!s.index.empty())
          indexes.insert(s.index);
      }
    CAF_CHECK_EQUAL(indexes.size(), 1u);
    return indexes.empty() ? std::string{} : *indexes.begin();
  }

  std::set<std::string> partitions(const std::vector<scan>& scans) {
    std::set<std::string> out;
    for (const auto& s : scans)
      if (s.relation.rfind("TaskExecutions_p", 0) == 0)
        out.insert(s.relation);
    return out;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(explain_frontier_tests, fixture)

CAF_TEST(the frontier read touches one partition through its frontier index) {
  auto wf = scalar(R"(SELECT "workflowId" FROM "TaskExecutions" OFFSET 12345 LIMIT 1)");
  auto scans = explain(frontier_statement(), {wf});
  auto parts = partitions(scans);
  CAF_REQUIRE_EQUAL(parts.size(), 1u);
  auto part = *parts.begin();
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" t
                             JOIN pg_class c ON c.oid = t.tableoid
                            WHERE t."workflowId" = $1 AND c.relname = $2)",
                        params::of(wf, part)),
                  20);
  CAF_CHECK_EQUAL(index_on(scans, part), part + "_frontier_idx");
}

CAF_TEST(the snapshot read of one workflow touches one partition by index) {
  auto wf = scalar(R"(SELECT "workflowId" FROM "TaskExecutions" OFFSET 777 LIMIT 1)");
  auto scans = explain(snapshot_tasks_statement(), {wf});
  auto parts = partitions(scans);
  CAF_REQUIRE_EQUAL(parts.size(), 1u);
  auto part = *parts.begin();
  // The primary key or the identity index: both lead with "workflowId".
  auto index = index_on(scans, part);
  CAF_CHECK(index == part + "_pkey" || index == part + "_identity_idx");
}

CAF_TEST(the snapshot read past the rows a decider knows ranges over the primary key) {
  auto wf = scalar(R"(SELECT "workflowId" FROM "TaskExecutions" OFFSET 999 LIMIT 1)");
  auto after = scalar(R"(SELECT "id" FROM "TaskExecutions" WHERE "workflowId" = $1
                          ORDER BY "id" OFFSET 14 LIMIT 1)",
                      params::of(wf));
  auto p = params::of(text_array(std::vector<std::string>{wf}),
                      text_array(std::vector<std::string>{after}));
  auto scans = explain(snapshot_tasks_after_statement(), p);
  auto parts = partitions(scans);
  CAF_REQUIRE_EQUAL(parts.size(), 1u);
  auto part = *parts.begin();
  CAF_CHECK_EQUAL(index_on(scans, part), part + "_pkey");
  // Both columns of the key bound the scan: the known rows are not visited.
  for (const auto& s : scans)
    if (s.relation == part && !s.index.empty())
      CAF_CHECK_NOT_EQUAL(s.condition.find("w.after"), std::string::npos);
  auto rows = conn.exec(snapshot_tasks_after_statement().sql, p);
  NF_REQUIRE_OK(rows);
  CAF_CHECK_EQUAL(rows->rows(), 5);
}

CAF_TEST(a batch of workflows prunes to the partitions of its own ids) {
  auto ids = sql(R"(SELECT DISTINCT "workflowId"::text FROM "TaskExecutions" LIMIT 3)");
  std::vector<std::string> wfs;
  for (int i = 0; i < ids.rows(); ++i)
    wfs.push_back(ids.str(i, 0));
  auto scans = explain(frontier_statement(), wfs);
  auto owners = sql(R"(SELECT DISTINCT c.relname FROM "TaskExecutions" t
                        JOIN pg_class c ON c.oid = t.tableoid
                       WHERE t."workflowId" = ANY($1::uuid[]))",
                    params::of(text_array(wfs)));
  std::set<std::string> expected;
  for (int i = 0; i < owners.rows(); ++i)
    expected.insert(owners.str(i, 0));
  CAF_CHECK_EQUAL(partitions(scans), expected);
  CAF_CHECK_LESS(partitions(scans).size(), 16u);
}

// A batch beyond the variants' eight keys runs the statement as written: each workflow's
// probe finds its rows by its own id, and the batch's array is no part of it (an array in
// a probe's condition is sorted and searched again for every row).
CAF_TEST(a large batch probes each workflow by its own id and no array of ids) {
  auto ids = sql(R"(SELECT DISTINCT "workflowId"::text FROM "TaskExecutions" LIMIT 40)");
  std::vector<std::string> wfs;
  for (int i = 0; i < ids.rows(); ++i)
    wfs.push_back(ids.str(i, 0));
  CAF_REQUIRE_EQUAL(wfs.size(), 40u);
  for (const auto* st : {&frontier_statement(), &snapshot_tasks_statement()}) {
    CAF_MESSAGE(st->name);
    size_t probes = 0;
    for (const auto& s : explain(*st, wfs))
      if (s.relation.rfind("TaskExecutions_p", 0) == 0) {
        CAF_CHECK_NOT_EQUAL(s.node, "Seq Scan");
        if (s.index.empty())
          continue; // a Bitmap Heap Scan: its Bitmap Index Scan child holds the condition
        ++probes;
        CAF_CHECK_NOT_EQUAL(s.condition.find("w.id"), std::string::npos);
        CAF_CHECK_EQUAL(s.condition.find("ANY"), std::string::npos);
      }
    CAF_CHECK_GREATER(probes, 0u);
  }
}

CAF_TEST(the history facts read walks only the facts not the whole history) {
  // One long-running workflow: 2,000 task events and two signals among them.
  auto wf = scalar(R"(SELECT "workflowId" FROM "TaskExecutions" OFFSET 4242 LIMIT 1)");
  sql(R"(INSERT INTO "WorkflowEvents" ("workflowId", "seq", "namespaceId", "eventType", "payload")
         SELECT $1::uuid, i, '00000000-0000-0000-0000-000000000001',
                CASE WHEN i IN (700, 1400) THEN 'SIGNAL_RECEIVED' ELSE 'TASK_COMPLETED' END
                  ::workflow_event_type,
                CASE WHEN i IN (700, 1400) THEN '{"name": "go"}' ELSE '{}' END::jsonb
           FROM generate_series(1, 2000) i)",
      params::of(wf));
  sql(R"(ANALYZE "WorkflowEvents")");
  auto part = scalar(R"(SELECT c.relname FROM "WorkflowEvents" e JOIN pg_class c ON c.oid = e.tableoid
                         WHERE e."workflowId" = $1 LIMIT 1)",
                     params::of(wf));
  // The partition holding the history is read through the facts index (the empty months
  // ahead may be scanned: there is nothing in them).
  auto scans = explain(history_facts_statement(), {wf});
  CAF_CHECK_EQUAL(index_on(scans, part), part + "_facts_idx");
  auto facts = sql(history_facts_statement().sql, params::of(text_array(std::vector<std::string>{wf})));
  CAF_CHECK_EQUAL(facts.rows(), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
