#define CAF_SUITE store.explain_worker
#include "caf/test/unit_test.hpp"

#include <optional>
#include <set>

#include <boost/json.hpp>

#include "store/outbox.hpp"
#include "store/pg/pruning.hpp"
#include "store/queue_partitions.hpp"
#include "store/queues.hpp"
#include "store/task_transitions.hpp"
#include "store/tasks.hpp"
#include "store/timers.hpp"
#include "tests/store/plan_reads.hpp"
#include "tests/store/worker_fixture.hpp"

#include "store/events.hpp"
#include "store/index_scans.hpp"
#include "store/lease_sweep.hpp"

using namespace nf;
using namespace nf::store;
using nf::test::for_each_scan;
using nf::test::rows_read;

namespace {

/// How many "Timers" partitions a plan names: those it sets up, and those its Appends
/// prune when the executor starts ("Subplans Removed"; a plan over "Timers" alone).
size_t timer_partitions_named(const boost::json::object& plan) {
  size_t n = 0;
  if (auto it = plan.find("Relation Name"); it != plan.end())
    n += std::string{it->value().get_string()}.rfind("Timers_", 0) == 0 ? 1 : 0;
  if (auto it = plan.find("Subplans Removed"); it != plan.end())
    n += static_cast<size_t>(it->value().to_number<int64_t>());
  if (auto it = plan.find("Plans"); it != plan.end())
    for (const auto& child : it->value().as_array())
      n += timer_partitions_named(child.as_object());
  return n;
}

/// How each "Timers" partition is read in `node`: the indexes of its scan, the bitmap index
/// scans under a bitmap heap scan included, or "<Seq Scan>".
void timer_reads(const boost::json::object& node, std::map<std::string, std::set<std::string>>& out,
                 std::set<std::string>* scan = nullptr) {
  if (auto* rel = node.if_contains("Relation Name");
      rel && std::string{rel->as_string()}.rfind("Timers_", 0) == 0
      && std::string{node.at("Node Type").as_string()}.find("Scan") != std::string::npos) {
    scan = &out[std::string{rel->as_string()}];
    if (node.at("Node Type").as_string() == "Seq Scan")
      scan->insert("<Seq Scan>");
  }
  if (auto* i = node.if_contains("Index Name"); i && scan)
    scan->insert(std::string{i->as_string()});
  if (auto* plans = node.if_contains("Plans"))
    for (const auto& child : plans->as_array())
      timer_reads(child.as_object(), out, scan);
}

/// The scan nodes of one plan subtree: relation → index names used on it.
struct scans {
  std::map<std::string, std::set<std::string>> by_relation;
};

void collect(const boost::json::object& node, bool skip_initplans, scans& out) {
  if (auto* rel = node.if_contains("Relation Name")) {
    auto& idx = out.by_relation[std::string{rel->as_string()}];
    if (auto* i = node.if_contains("Index Name"))
      idx.insert(std::string{i->as_string()});
    else
      idx.insert("<" + std::string{node.at("Node Type").as_string()} + ">");
  }
  if (auto* plans = node.if_contains("Plans"))
    for (const auto& child : plans->as_array()) {
      const auto& c = child.as_object();
      if (skip_initplans && c.if_contains("Parent Relationship")
          && c.at("Parent Relationship").as_string() == "InitPlan")
        continue;
      collect(c, skip_initplans, out);
    }
}

/// Every node type in a plan subtree.
void node_types(const boost::json::object& node, std::multiset<std::string>& out) {
  out.insert(std::string{node.at("Node Type").as_string()});
  if (auto* plans = node.if_contains("Plans"))
    for (const auto& child : plans->as_array())
      node_types(child.as_object(), out);
}

/// The buffers the scans of `table`'s partitions touched, those through `except_index`
/// (a suffix of the index name) left out. A bitmap heap scan counts its index scans.
double blocks_read(const boost::json::object& plan, const std::string& table,
                   const std::string& except_index) {
  double blocks = 0;
  for_each_scan(plan, [&](const boost::json::object& node, const std::string& rel) {
    if (rel.rfind(table + "_", 0) != 0 || node.at("Node Type") == "Bitmap Index Scan")
      return;
    if (auto* index = node.if_contains("Index Name")) {
      std::string name{index->as_string()};
      if (name.size() >= except_index.size()
          && name.compare(name.size() - except_index.size(), except_index.size(), except_index) == 0)
        return;
    }
    double n = node.at("Shared Hit Blocks").to_number<double>()
               + node.at("Shared Read Blocks").to_number<double>();
    CAF_MESSAGE(rel << ": " << n << " buffers touched by a " << node.at("Node Type").as_string());
    blocks += n;
  });
  return blocks;
}

/// The task rows a plan read, each read checked to go through its partition's primary key.
double task_rows_read(const boost::json::object& plan) {
  return rows_read(plan, "TaskExecutions",
                   [](const boost::json::object& node, const std::string& rel, double) {
                     auto* index = node.if_contains("Index Name");
                     CAF_CHECK(index != nullptr && index->as_string() == rel + "_pkey");
                   });
}

/// Rows a plan compared and threw away in its joins' filters.
double removed_by_join_filters(const boost::json::object& node) {
  double n = 0;
  if (auto* r = node.if_contains("Rows Removed by Join Filter"))
    n += r->to_number<double>() * node.at("Actual Loops").to_number<double>();
  if (auto* plans = node.if_contains("Plans"))
    for (const auto& child : plans->as_array())
      n += removed_by_join_filters(child.as_object());
  return n;
}

/// The subtree named `name` ("CTE c"), or nullptr.
const boost::json::object* find_subplan(const boost::json::object& node, const std::string& name) {
  if (auto* n = node.if_contains("Subplan Name"); n && n->as_string() == name)
    return &node;
  if (auto* plans = node.if_contains("Plans"))
    for (const auto& child : plans->as_array())
      if (auto* hit = find_subplan(child.as_object(), name))
        return hit;
  return nullptr;
}

/// The scans under the plan's "CTE c" (the claim), failing the test when there is none.
scans claim_scans(const boost::json::object& plan, bool skip_initplans) {
  scans out;
  const auto* cte = find_subplan(plan, "CTE c");
  CAF_REQUIRE(cte != nullptr);
  collect(*cte, skip_initplans, out);
  return out;
}

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("explain_worker") {
    // The repositories' statements are generic plans in production (prepared once per
    // connection); force that here so pruning is shown for the parameterised form.
    sql("SET plan_cache_mode = force_generic_plan");
  }

  /// Prepares the report's read as written (and makes its generic plan) by completing tasks
  /// that do not exist, of more workflows than a pruning variant takes
  /// (store/pg/pruning.hpp): a large batch runs the array form, a small one its own variant
  /// (the pruning suite).
  void prepare_read_leases_as_written() {
    CAF_REQUIRE(complete_tasks(conn, missing_tasks()));
  }

  /// Reports of tasks that do not exist, of more workflows than a pruning variant takes: a
  /// repository's statement run with them prepares the form as written.
  std::vector<store::task_result> missing_tasks() {
    std::vector<store::task_result> missing;
    for (size_t i = 0; i <= store::max_pruning_keys; ++i) {
      store::task_result r;
      r.workflow = workflow_id{scalar("SELECT uuidv7()")};
      r.task = task_id{scalar("SELECT uuidv7()")};
      r.token = lease_token{scalar("SELECT uuidv7()")};
      missing.push_back(r);
    }
    return missing;
  }

  /// 200 running workflows fanned out to 50 SIMPLE tasks each, for the queue "fan" (none of
  /// them enqueued yet).
  void insert_fan_out() {
    for (int i = 0; i < 200; ++i)
      insert_workflow();
    sql(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType",
                                          "taskDefName", "queueName")
           SELECT w."id", w."namespaceId", 'work' || g, 'SIMPLE', 't', 'fan'
             FROM "WorkflowExecutions" w, generate_series(1, 50) g)");
  }

  /// Enqueues every task row (or the first `limit`).
  void enqueue_tasks(std::optional<int> limit = std::nullopt) {
    sql(R"(INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard")
           SELECT "queueName", "id", "workflowId", 'SIMPLE', 0, 0 FROM "TaskExecutions")"
        + (limit ? " LIMIT " + std::to_string(*limit) : std::string{}));
  }

  /// 1,000 task rows as array literals: their workflow ids, their ids, and how many
  /// workflows they belong to.
  store::result batch_of_1000_tasks() {
    return sql(R"(SELECT '{' || string_agg("workflowId"::text, ',') || '}',
                         '{' || string_agg("id"::text, ',') || '}', count(DISTINCT "workflowId")
                    FROM (SELECT "workflowId", "id" FROM "TaskExecutions" LIMIT 1000) b)");
  }

  /// The report's read of 1,000 task rows as it ran (EXPLAIN ANALYZE).
  boost::json::object explain_read_of_1000_tasks() {
    auto batch = batch_of_1000_tasks();
    auto plan = explain_analyze("EXECUTE \"task.read_leases\"('" + batch.str(0, 0) + "', '"
                                + batch.str(0, 1) + "')");
    CAF_CHECK_EQUAL(plan.at("Actual Rows").to_number<double>(), 1000.0);
    return plan;
  }

  /// The plan of `execute` as it ran (EXPLAIN ANALYZE).
  boost::json::object explain_analyze(const std::string& execute) {
    auto text = scalar("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + execute);
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    CAF_REQUIRE(!ec);
    return v.as_array().at(0).as_object().at("Plan").as_object();
  }

  /// The lessor's claim of 64 rows of the queue "fan" as it ran (EXPLAIN ANALYZE); a lease
  /// of one row first prepares the repository's statement on this connection.
  boost::json::object explain_claim_of_64() {
    lease_request r;
    r.queue = "fan";
    r.max_tasks = 1;
    r.worker_id = "explain";
    CAF_REQUIRE(lease_tasks(conn, r));
    auto plan = explain_analyze("EXECUTE \"" + prepared_like("lease.claim_batch@%")
                                + R"("('fan', 64, 300, array_fill('w'::text, ARRAY[64]), NULL))");
    CAF_CHECK_EQUAL(plan.at("Actual Rows").to_number<double>(), 64.0);
    return plan;
  }

  /// The name of the one statement prepared on this connection whose name is LIKE
  /// `pattern`.
  std::string prepared_like(const std::string& pattern) {
    auto r = sql("SELECT name FROM pg_prepared_statements WHERE name LIKE $1",
                 params::of(pattern));
    CAF_REQUIRE_EQUAL(r.rows(), 1);
    return r.str(0, 0);
  }

  boost::json::object explain(const std::string& execute) {
    auto text = scalar("EXPLAIN (FORMAT JSON) " + execute);
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    CAF_REQUIRE(!ec);
    CAF_MESSAGE("plan: " << text);
    return v.as_array().at(0).as_object().at("Plan").as_object();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(explain_worker_tests, fixture)

CAF_TEST(the dequeue claim scans the dequeue index of exactly one queue partition) {
  // 40 queues × 500 rows, a third of them leased, all workflows fictitious (the claim
  // never reads them).
  sql(R"(INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard",
                                    "leaseToken", "leaseExpiresAt")
         SELECT 'queue' || (g % 40), uuidv7(), uuidv7(), 'SIMPLE', g % 3, g % 16,
                CASE WHEN g % 3 = 0 THEN uuidv7() END,
                CASE WHEN g % 3 = 0 THEN now() + interval '1 hour' END
           FROM generate_series(1, 20000) g)");
  sql(R"(ANALYZE "TaskQueues")");
  // Prepare the repository's own statement on this connection by using it once.
  lease_request r;
  r.queue = "queue7";
  r.max_tasks = 1;
  r.worker_id = "explain";
  CAF_REQUIRE(lease_tasks(conn, r));
  auto partition = scalar(R"(SELECT tableoid::regclass::text FROM "TaskQueues" WHERE "queueName" = 'queue7' LIMIT 1)");
  // regclass prints quoted mixed-case names.
  if (!partition.empty() && partition.front() == '"')
    partition = partition.substr(1, partition.size() - 2);
  CAF_REQUIRE(!partition.empty());
  auto plan = explain("EXECUTE \"" + prepared_like("lease.claim_batch@%")
                      + R"("('queue7', 10, 300, array_fill('w'::text, ARRAY[10]), NULL))");
  auto dequeue = claim_scans(plan, true);
  CAF_CHECK_EQUAL(dequeue.by_relation.size(), 1u);
  CAF_REQUIRE_EQUAL(dequeue.by_relation.count(partition), 1u);
  CAF_CHECK((dequeue.by_relation[partition] == std::set<std::string>{partition + "_dequeue_idx"}));
  // The whole statement (claim, stamp, task read) touches no other queue partition.
  scans all;
  collect(plan, false, all);
  for (const auto& [rel, _] : all.by_relation)
    if (rel.rfind("TaskQueues_", 0) == 0)
      CAF_CHECK_EQUAL(rel, partition);
}

CAF_TEST(the dequeue claim reads each leased task s row by its own keys) {
  // A young database: 10,000 task rows of 200 fanned-out workflows, 1,000 of them queued,
  // 64 claimed. The claim's estimate of its own rows is small, so a join of the leased rows
  // with every task partition, read whole and hashed, looks cheaper to the planner than
  // sixteen partitions' probes per row, and each lease then reads every task row there is.
  insert_fan_out();
  enqueue_tasks(1000);
  sql(R"(ANALYZE "TaskExecutions")");
  sql(R"(ANALYZE "TaskQueues")");
  auto plan = explain_claim_of_64();
  // The claim reads no task row: its tasks are read apart, only when it claimed some.
  CAF_CHECK_EQUAL(task_rows_read(plan), 0.0);
  // Per leased queue row: once by the dequeue index, once by the update's fetch, never a
  // join with the whole queue (936 rows stay queued).
  CAF_CHECK_LESS_OR_EQUAL(rows_read(plan, "TaskQueues", [](auto&&...) {}), 2 * 64.0);
  // One row read per leased task, through the primary key of the task's partition.
  auto leased = sql(R"(SELECT '{' || string_agg("workflowId"::text, ',' ORDER BY "id") || '}',
                             '{' || string_agg("taskId"::text, ',' ORDER BY "id") || '}'
                        FROM "TaskQueues" WHERE "queueName" = 'fan' AND "leasedBy" = 'w')");
  auto read = explain_analyze("EXECUTE \"lease.claimed_tasks\"('" + leased.str(0, 0) + "', '"
                              + leased.str(0, 1) + "')");
  CAF_CHECK_EQUAL(read.at("Actual Rows").to_number<double>(), 64.0);
  CAF_CHECK_EQUAL(task_rows_read(read), 64.0);
}

CAF_TEST(the timer claim scans only the due timer partitions) {
  // Hourly partitions for the past 60 hours as well (the migration creates only the
  // current hour and later): the claim must skip those older than its 48 h horizon, and
  // with [now() - 48 h, now()] fully covered it must skip DEFAULT too.
  sql(R"(DO $$
    DECLARE h timestamptz := date_trunc('hour', now(), 'UTC'); lo timestamptz;
    BEGIN
      FOR i IN 1..60 LOOP
        lo := h - make_interval(hours => i);
        CONTINUE WHEN to_regclass(format('%I', 'Timers_' || to_char(lo AT TIME ZONE 'UTC',
                                         '"y"YYYY"m"MM"d"DD"h"HH24'))) IS NOT NULL;
        EXECUTE format('CREATE TABLE %I PARTITION OF "Timers" FOR VALUES FROM (%L) TO (%L)',
                       'Timers_' || to_char(lo AT TIME ZONE 'UTC', '"y"YYYY"m"MM"d"DD"h"HH24'),
                       lo, lo + interval '1 hour');
      END LOOP;
    END $$)");
  sql(R"(SELECT "rename_partition_indexes"('"Timers"'))");
  // 20,000 timers over the next 48 hours and a few due now.
  sql(R"(INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt")
         SELECT now() + (g * interval '8 seconds'), g % 16, 'workflowTimeout', w, uuid_extract_timestamp(w)
           FROM (SELECT g, uuidv7() AS w FROM generate_series(1, 20000) g) x)");
  sql(R"(INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt")
         SELECT now() - interval '1 second', g % 16, 'workflowTimeout', w, uuid_extract_timestamp(w)
           FROM (SELECT g, uuidv7() AS w FROM generate_series(1, 20) g) x)");
  sql(R"(ANALYZE "Timers")");
  // Prepare the repository's claim on this connection, set up as the timer's own: fire with
  // a shard nobody uses.
  CAF_REQUIRE(prefer_index_scans(conn));
  CAF_REQUIRE(fire_due_timers(conn, fire_options{{shard_id{999}}, 1, 48}));
  // Partitions whose hour overlaps [now() - 48 h, now()].
  auto due = sql(R"(
    WITH p AS MATERIALIZED (
      SELECT c.relname,
             CASE WHEN c.relname ~ '^Timers_y' THEN
               to_timestamp(substr(c.relname, 9), 'YYYY"m"MM"d"DD"h"HH24') END AS lo
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = '"Timers"'::regclass)
    SELECT relname FROM p WHERE lo <= now() AND lo + interval '1 hour' > now() - interval '48 hours')");
  std::set<std::string> allowed;
  for (int i = 0; i < due.rows(); ++i)
    allowed.insert(due.str(i, 0));
  CAF_REQUIRE_EQUAL(allowed.size(), 49u);
  // Older and far-future partitions exist, and must not be scanned.
  CAF_REQUIRE_GREATER(count(R"(SELECT count(*) FROM pg_inherits WHERE inhparent = '"Timers"'::regclass)"),
                      49 + 40);
  // The engine runs the variant for the hours up to now: its plan leaves out the hours
  // ahead and those older than the horizon, where the statement as written names every hour
  // and prunes them only when the executor starts.
  // "Timers" is named twice, in the claim and in the UPDATE; the window is the horizon's 49
  // hours.
  auto variant = prepared_like("timer.claim_due@h%");
  CAF_CHECK_LESS_OR_EQUAL(timer_partitions_named(explain("EXECUTE \"" + variant
                                                         + "\"(48, NULL, 100)")),
                          2u * 49u);
  CAF_REQUIRE(conn.prepare(timer_claim_statement()));
  CAF_CHECK_GREATER_OR_EQUAL(
    timer_partitions_named(explain(R"(EXECUTE "timer.claim_due"(48, NULL, 100))")),
    2u * (49u + 40u));
  auto plan = explain("EXECUTE \"" + variant + "\"(48, NULL, 100)");
  // The claim names "Timers" alone: what the claimed timers point at is read apart
  // (timer.claimed_targets), so no vacuum of another table makes its plan be built again.
  std::set<std::string> others;
  for_each_scan(plan, [&](const boost::json::object&, const std::string& rel) {
    if (rel != "Timers" && rel.rfind("Timers_", 0) != 0)
      others.insert(rel);
  });
  CAF_CHECK(others.empty());
  for (const auto& rel : others)
    CAF_MESSAGE("the claim reads " << rel);
  // The earliest due rows in the index's order, hour after hour, up to the limit: nothing
  // sorted.
  std::multiset<std::string> types;
  node_types(*find_subplan(plan, "CTE c"), types);
  CAF_CHECK_EQUAL(types.count("Sort"), 0u);
  auto claim = claim_scans(plan, false);
  CAF_CHECK_EQUAL(claim.by_relation.size(), 49u);
  CAF_CHECK_EQUAL(claim.by_relation.count("Timers_default"), 0u);
  for (const auto& [rel, indexes] : claim.by_relation) {
    CAF_CHECK_EQUAL(allowed.count(rel), 1u);
    CAF_CHECK((indexes == std::set<std::string>{rel + "_due_idx"}));
  }
  // The outer UPDATE prunes the same way.
  scans all;
  collect(plan, false, all);
  for (const auto& [rel, _] : all.by_relation)
    if (rel.rfind("Timers_", 0) == 0)
      CAF_CHECK_EQUAL(allowed.count(rel), 1u);
}

CAF_TEST(a completion s timer cancel sets up only the partitions up to the task s deadline) {
  // A definition whose latest timer is its startToClose, 60 s after the lease.
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name", "timeoutSeconds")
         VALUES ('00000000-0000-0000-0000-000000000001', 'brief', 60))");
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "brief");
  auto leased = lease_one("brief", "w1", 60);
  task_result done;
  done.workflow = wf;
  done.task = task;
  done.token = leased.token;
  CAF_REQUIRE(complete_task(conn, done)); // prepares the cancel's variant on this connection
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1
                            AND "kind" = 'startToClose')",
                        params::of(task)),
                  0);
  // The engine ran the variant for the hours from a minute ago to the deadline, each way
  // ten minutes wider: two at most, though the claim test made 60 hours of partitions
  // behind. "Timers" is named twice, in the ids locked and in the delete.
  auto variant = prepared_like("timer.cancel_for_tasks_in_hours@h%");
  auto execute_variant = "EXECUTE \"" + variant + "\"(ARRAY['" + task.str() + "']::uuid[])";
  CAF_CHECK_LESS_OR_EQUAL(timer_partitions_named(explain(execute_variant)), 2u * 2u);
  // A plan made while those partitions are young (never analysed, as a new hour's is until
  // autovacuum comes) still finds the timers by task, or the locked ones by key: a bound on
  // "fireAt" the planner could use on the due index would look selective there, and the plan
  // would walk every pending timer of the hour.
  sql(R"(SELECT pg_clear_relation_stats('public', c.relname),
                pg_clear_attribute_stats('public', c.relname, a.attname, false)
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('fireAt', 'taskId')
          WHERE i.inhparent = '"Timers"'::regclass)");
  CAF_REQUIRE(prefer_index_scans(conn));  // as the engine's connections do
  std::map<std::string, std::set<std::string>> young;
  timer_reads(explain(execute_variant), young);
  CAF_CHECK(!young.empty());
  for (const auto& [rel, how] : young) {
    CAF_CHECK_EQUAL(how.count(rel + "_due_idx"), 0u);
    CAF_CHECK(!how.empty());
    for (const auto& h : how)
      CAF_CHECK(h == rel + "_task_idx" || h == rel + "_pkey");
  }
  // As written, for a task whose deadline is not near: bounded by now() and a parameter, it
  // sets up the hours up to the deadline when the executor starts, and every hourly
  // partition ahead (the migration makes 48) when the deadline is unknown.
  CAF_REQUIRE(conn.prepare(timer_cancel_statement()));
  auto partitions = [&](int64_t within_s) {
    std::map<std::string, std::set<std::string>> reads;
    timer_reads(explain(R"(EXECUTE "timer.cancel_for_tasks"(ARRAY[')" + task.str()
                        + R"(']::uuid[], ARRAY[now()]::timestamptz[], )"
                        + std::to_string(within_s) + ")"),
                reads);
    return reads.size();
  };
  CAF_CHECK_LESS_OR_EQUAL(partitions(61), 3u);
  CAF_CHECK_GREATER_OR_EQUAL(partitions(10LL * 366 * 24 * 3600), 48u);
}

namespace {

/// 20,000 due events over 16 shards: a claim that walked the index in "nextAttemptAt"
/// order and filtered shards would sort or scan past the other fifteen.
void insert_due_events(fixture& f) {
  // Deliverable, as when a sink is enabled ("publishedAt" NULL).
  f.sql(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "workflowId", "eventType", "payload",
                                        "nextAttemptAt", "publishedAt")
           SELECT g % 16, uuidv7(), uuidv7(), 'TASK_COMPLETED', '{}', now() - g * interval '1 ms',
                  NULL
             FROM generate_series(1, 20000) g)");
  f.sql(R"(ANALYZE "OutboxEvents")");
}

/// The claim's CTE range-scans the deliverable index with the shard in its index
/// condition (not a filter over every shard's rows), and sorts nothing.
void check_bounded_claim(const boost::json::object& plan, const std::string& shard_cond) {
  auto claim = claim_scans(plan, true);
  CAF_CHECK((claim.by_relation == std::map<std::string, std::set<std::string>>{
               {"OutboxEvents", {"OutboxEvents_deliverable_idx"}}}));
  std::multiset<std::string> types;
  node_types(*find_subplan(plan, "CTE c"), types);
  CAF_CHECK_EQUAL(types.count("Sort"), 0u);
  auto text = boost::json::serialize(*find_subplan(plan, "CTE c"));
  // "((shard = …))" alone, or "((shard = …) AND (…))": the index condition starts with it.
  auto cond = std::string{"\"Index Cond\":\"(("} + shard_cond + ")";
  CAF_CHECK(text.find(cond) != std::string::npos);
}

} // namespace

CAF_TEST(the relay's claim reads only its own shard's range of the deliverable index) {
  insert_due_events(*this);
  // Prepare the repository's one-shard claim on this connection (a shard nobody uses).
  CAF_REQUIRE(claim_outbox(conn, outbox_claim{{shard_id{99}}, 1, 30}));
  check_bounded_claim(explain(R"(EXECUTE "outbox.claim_one"(3, 10, 30))"), "shard = $1");
}

CAF_TEST(a claim over several shards of a node takes them in order and sorts nothing) {
  // The node's outbox relay claims for all its shards at once. A "shard" = ANY(...) claim
  // would read every due event of those shards and sort them all.
  insert_due_events(*this);
  auto got = claim_outbox(conn, outbox_claim{{shard_id{5}, shard_id{3}}, 10, 30});
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->size(), 10u);
  for (const auto& e : *got)
    CAF_CHECK_EQUAL(e.shard, 5); // the first shard fills the batch
  check_bounded_claim(explain(R"(EXECUTE "outbox.claim_each"('{3,4,5}', 10, 30))"),
                      "shard = s.shard");
}

CAF_TEST(a batched read of tasks by id probes indexes and never scans a partition) {
  // 20,000 tasks: a generic plan that joined the id arrays by hashing would scan all 16
  // task partitions (and the queue partitions) for a batch of one.
  sql(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType",
                                        "taskDefName", "queueName")
         SELECT uuidv7(), uuidv7(), 'work', 'SIMPLE', 't', 'q' || (g % 64)
           FROM generate_series(1, 20000) g)");
  sql(R"(INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard")
         SELECT "queueName", "id", "workflowId", 'SIMPLE', 0, 0 FROM "TaskExecutions")");
  sql(R"(ANALYZE "TaskExecutions")");
  sql(R"(ANALYZE "TaskQueues")");
  prepare_read_leases_as_written();
  auto one = sql(R"(SELECT "workflowId", "id" FROM "TaskExecutions" LIMIT 1)");
  auto plan = explain("EXECUTE \"task.read_leases\"('{" + one.str(0, 0) + "}', '{" + one.str(0, 1) + "}')");
  // Every read of a task or queue partition is bounded by the batch's ids (an index
  // condition, or a filter where the planner found a small partition cheaper to read
  // whole): by the id arrays, or row by row by the row's own ids. A hash join over
  // unbounded scans of every partition is what this rules out.
  size_t bounded = 0;
  for_each_scan(plan, [&](const boost::json::object& node, const std::string& rel) {
    if (rel.rfind("TaskExecutions_", 0) != 0 && rel.rfind("TaskQueues_", 0) != 0)
      return;
    auto text = boost::json::serialize(node);
    bool has_ids = text.find("ANY ($") != std::string::npos
                   || text.find("= u.wf)") != std::string::npos
                   || text.find("= u.tid)") != std::string::npos;
    if (!has_ids)
      CAF_MESSAGE(rel << " is read without the ids");
    CAF_CHECK(has_ids);
    ++bounded;
  });
  CAF_CHECK_GREATER(bounded, 0u);
}

CAF_TEST(the read of a large batch of completions probes each queue row once) {
  // The plan is made while the queues are empty (a fresh database, or a fan-out before its
  // tasks are scheduled) and kept while they fill. Probing the queue index with the whole
  // batch's ids once per row is what this rules out: 1,000 completions made a million searches.
  insert_fan_out();
  // The queue has been busy before and is empty now: its pages hold dead rows only.
  enqueue_tasks();
  sql(R"(DELETE FROM "TaskQueues")");
  sql(R"(ANALYZE "TaskExecutions")");
  sql(R"(ANALYZE "TaskQueues")");
  prepare_read_leases_as_written(); // the generic plan is made now
  enqueue_tasks();
  auto plan = explain_read_of_1000_tasks();
  // About the batch size squared when each completion is matched against the whole batch's
  // queue rows.
  CAF_CHECK_LESS(removed_by_join_filters(plan), 1000.0);
  size_t queue_scans = 0;
  for_each_scan(plan, [&](const boost::json::object& node, const std::string& rel) {
    if (rel.rfind("TaskQueues_", 0) != 0 || node.at("Actual Loops").to_number<double>() == 0)
      return;
    ++queue_scans;
    auto node_text = boost::json::serialize(node);
    bool per_row_batch = node.at("Actual Loops").to_number<double>() > 1
                         && node_text.find("ANY ($2)") != std::string::npos;
    if (per_row_batch)
      CAF_MESSAGE(rel << " searched for the whole batch once per row: " << node_text);
    CAF_CHECK(!per_row_batch);
  });
  CAF_CHECK_GREATER(queue_scans, 0u);
}

CAF_TEST(ends unseen again in a large batch are found by their keys and not matched pair by pair) {
  // The plan of the statement as written (a batch of more workflows than a variant takes)
  // once joined the pairs to the rows both arrays find by a nested loop: ~500,000 rows
  // compared for a fork's 1,000 tasks. decide.mark_seen had the same shape.
  insert_fan_out();
  sql(R"(ANALYZE "TaskExecutions")");
  auto batch = batch_of_1000_tasks();
  CAF_REQUIRE_GREATER(std::stoul(batch.str(0, 2)), store::max_pruning_keys);
  {
    // Prepares the repository's statement on this connection.
    store::transaction tx{conn};
    CAF_REQUIRE(tx.begin());
    CAF_REQUIRE(store::unsee_tasks(tx, missing_tasks()));
    tx.rollback();
  }
  sql(R"(UPDATE "TaskExecutions" SET "deciderSeenAt" = now())");
  auto plan = explain_analyze("EXECUTE \"task.unsee\"('" + batch.str(0, 0) + "', '"
                              + batch.str(0, 1) + "')");
  CAF_CHECK_LESS(removed_by_join_filters(plan), 1000.0);
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*) FROM "TaskExecutions" WHERE "deciderSeenAt" IS NULL)"),
                  "1000");
}

CAF_TEST(the report s read probes a task by its key after a history of one task workflows) {
  // The last ANALYZE saw one task row per workflow, so "workflowId" alone looked as selective
  // as the whole key, and the report's read is prepared then. A fan-out follows: a probe
  // through the identity index filtered on "id" would read all 50 rows of a workflow for
  // each completion (migration 0015 is what rules it out).
  sql(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType",
                                        "taskDefName", "queueName")
         SELECT uuidv7(), '00000000-0000-0000-0000-000000000001', 'work', 'SIMPLE', 't', 'one'
           FROM generate_series(1, 20000))");
  sql(R"(ANALYZE "TaskExecutions")");
  sql(R"(DELETE FROM "TaskExecutions")");
  prepare_read_leases_as_written();
  insert_fan_out();
  enqueue_tasks();
  auto plan = explain_read_of_1000_tasks();
  // One task row per completion, through the primary key of its partition.
  CAF_CHECK_EQUAL(task_rows_read(plan), 1000.0);
}

CAF_TEST(an execution row is probed by its key when its plan was made on a young partition) {
  // The engine's connections price sequential scans out (store/index_scans.hpp). Planned
  // while the month's partition held ten rows, the seq allocation would otherwise scan the
  // partition on every call as it grows, until an ANALYZE replans it.
  CAF_REQUIRE(prefer_index_scans(conn));
  std::vector<workflow_events> batch;
  for (int i = 0; i < 10; ++i)
    batch.push_back({insert_workflow(), {event_write{"WORKFLOW_PAUSED", {}, {}, {}}}});
  sql(R"(ANALYZE "WorkflowExecutions")");
  {
    // Ten workflows: more keys than a variant spells out, so the variant that bounds only
    // their start times (`/r`, store/pg/pruning.hpp) is prepared, and its plan made, now.
    transaction tx{conn};
    CAF_REQUIRE(tx.begin());
    CAF_REQUIRE(append_events(tx, batch));
    CAF_REQUIRE(tx.commit());
  }
  sql(R"(INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId", "workflowName",
                                            "workflowVersion", "priority", "shard")
         SELECT id, uuid_extract_timestamp(id), '00000000-0000-0000-0000-000000000001', 'wf', 1, 0,
                ('x' || right(id::text, 4))::bit(16)::int % (SELECT "partitionCount" FROM "ClusterSettings")
           FROM (SELECT uuidv7() AS id FROM generate_series(1, 5000)) n)");
  auto wf = batch.front().id.str();
  auto plan = explain_analyze("EXECUTE \"events.append/r\"('{" + wf + "}', '{1}', '{" + wf
                              + "}', '{1}', '{WORKFLOW_RESUMED}', '{NULL}', '{NULL}', '{NULL}', "
                                "'{NULL}', '{\"{}\"}', '"
                              + wf + "', '" + wf + "')");
  CAF_CHECK_EQUAL(rows_read(plan, "WorkflowExecutions", [](const auto&, const auto&, double) {}),
                  1.0);
}

CAF_TEST(the dequeue claim reads only the rows it claims of a queue analyzed while empty) {
  // A queue is empty most of the time, and autovacuum analyzes it so: its statistics say
  // no rows on pages it still has, and the planner takes it for a one-row table. Then a
  // backlog comes: the claim must still read its head in the dequeue index's order, and
  // the update of the claimed rows fetch them alone, not read the queue whole for each
  // lease. The other queue partitions are empty too, as in a young database: over an
  // Append of them all, the plan sorted the queue's backlog. The queue had a backlog
  // before, and the analyse that found it empty kept that one's column statistics: the
  // ordered read then tied with a bitmap scan of the ("queueName", "taskId") index under
  // a Sort, which read all 5,000 rows, on a session with the planner's sorts allowed.
  sql(R"(TRUNCATE "TaskQueues")");
  insert_fan_out();
  enqueue_tasks(1000);
  sql(R"(ANALYZE "TaskExecutions")");
  sql(R"(ANALYZE "TaskQueues")");
  sql(R"(DELETE FROM "TaskQueues")");
  sql(R"(ANALYZE "TaskQueues")");
  CAF_REQUIRE_GREATER_OR_EQUAL(count(R"(SELECT count(*) FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
                                         WHERE i.inhparent = '"TaskQueues"'::regclass
                                           AND c.reltuples = 0 AND c.relpages > 0
                                           AND EXISTS (SELECT 1 FROM pg_stats s
                                                        WHERE s.tablename = c.relname
                                                          AND s.attname = 'queueName'))"),
                               1);
  enqueue_tasks(5000);
  CAF_REQUIRE(prefer_index_order(conn)); // as the lessor's connection does
  auto plan = explain_claim_of_64();
  CAF_CHECK_LESS_OR_EQUAL(rows_read(plan, "TaskQueues", [](auto&&...) {}), 2 * 64.0);
}

CAF_TEST(the dequeue claim fetches only the rows it claims beside the other queues of its partition) {
  // A partition holds every queue that hashes to it: 199 more here, filled together with
  // "fan" so that their ids interleave. Probed by "id" alone, the update of the claimed
  // rows was a skip scan of the primary key, one descent per queue of the partition:
  // 157-1,574 buffers, 4-15 ms, for a claim of 64 beside 100-300 such queues (315 here).
  sql(R"(TRUNCATE "TaskQueues")");
  insert_fan_out();
  auto partition = queue_partition(conn, "fan");
  CAF_REQUIRE(partition);
  sql(R"(WITH b AS (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_class c
                     WHERE c.oid = format('%I', $1::text)::regclass),
              names AS (SELECT array_agg(n) AS a FROM (
                SELECT 'other' || i AS n FROM generate_series(1, 5000) i, b
                 WHERE satisfies_hash_partition('"TaskQueues"'::regclass,
                         substring(b.bound from 'modulus (\d+)')::int,
                         substring(b.bound from 'remainder (\d+)')::int, 'other' || i)
                 LIMIT 199) s),
              tasks AS (SELECT row_number() OVER (ORDER BY "id") AS k, "id", "workflowId"
                          FROM "TaskExecutions")
         INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard")
         SELECT CASE WHEN g % 200 = 0 THEN 'fan' ELSE names.a[g % 200] END,
                COALESCE(t."id", uuidv7()), COALESCE(t."workflowId", uuidv7()), 'SIMPLE', 0, 0
           FROM generate_series(1, 40000) g CROSS JOIN names
           LEFT JOIN tasks t ON g % 200 = 0 AND t.k = g / 200
          ORDER BY g)",
      params::of(*partition));
  CAF_REQUIRE_EQUAL(count("SELECT count(DISTINCT \"queueName\") FROM \"" + *partition + "\""), 200);
  sql(R"(ANALYZE "TaskQueues")");
  CAF_REQUIRE(prefer_index_scans(conn)); // as the engine's connections do
  auto plan = explain_claim_of_64();
  CAF_CHECK_LESS_OR_EQUAL(rows_read(plan, "TaskQueues", [](auto&&...) {}), 2 * 64.0);
  // The claim's own scan of the dequeue index aside, one buffer per row fetched at most.
  CAF_CHECK_LESS_OR_EQUAL(blocks_read(plan, "TaskQueues", "_dequeue_idx"), 64.0);
}

CAF_TEST(the lease sweep s scan names the queue partitions alone) {
  // It runs on every poll of the node's timer and nearly always finds nothing: the task
  // rows of what it finds are read apart, so no vacuum of "TaskExecutions" makes its plan
  // be built again.
  CAF_REQUIRE(sweep_expired_leases(conn, 10));
  std::set<std::string> read;
  for_each_scan(explain(R"(EXECUTE "lease.read_expired"(10))"),
                [&](const boost::json::object&, const std::string& rel) { read.insert(rel); });
  CAF_CHECK(!read.empty());
  for (const auto& rel : read) {
    CAF_MESSAGE("the sweep reads " << rel);
    CAF_CHECK_EQUAL(rel.rfind("TaskQueues_", 0), 0u);
  }
}

CAF_TEST_FIXTURE_SCOPE_END()
