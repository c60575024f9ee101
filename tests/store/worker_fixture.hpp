#pragma once

// Test data for the worker-path suites (lease, complete, timers, wakeup, explain): rows
// inserted with plain SQL that follows the schema's CHECKs, plus the race helpers
// (wait until a backend blocks on a lock, snapshot a workflow's rows).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "caf/test/unit_test.hpp"

#include "store/ids.hpp"
#include "store/pg/connection.hpp"
#include "proto/errors.hpp"
#include "store/queues.hpp"
#include "tests/support/test_database.hpp"

namespace nf::test {

/// One migrated database per suite (creating one costs seconds), emptied before each test.
inline test_database& suite_database(const std::string& suite) {
  static std::map<std::string, std::unique_ptr<test_database>> dbs;
  auto& db = dbs[suite];
  if (!db)
    db = std::make_unique<test_database>(suite);
  return *db;
}

/// An enabled webhook sink in the default namespace (nothing listens at its address). The
/// engine writes an event's outbox row only while an enabled sink exists (I7,
/// store/decision_apply.cpp, decide.outbox): the tests of those rows enable one first.
inline void enable_webhook_sink(store::connection& conn) {
  auto r = conn.exec(R"(INSERT INTO "WebhookSinks" ("namespaceId", "url")
                        VALUES ($1, 'http://127.0.0.1:9/'))",
                     store::params::of(default_namespace));
  if (!r)
    CAF_FAIL("enable_webhook_sink: " << nf::message_of(r.error()));
}

struct worker_fixture {
  test_database& db;
  store::connection conn;

  explicit worker_fixture(const std::string& suite)
    : db{suite_database(suite)}, conn{db.connect()} {
    // DELETE, not TRUNCATE: these tables hold a handful of rows, and TRUNCATE recreates
    // every partition's files (about a second).
    for (const char* t : {"WorkflowExecutions", "TaskExecutions", "TaskQueues", "DecideQueues",
                          "Timers", "OutboxEvents", "WorkflowEvents", "RateLimitBuckets",
                          "TaskDefinitions", "IdempotencyKeys", "WebhookSinks"})
      sql(std::string{"DELETE FROM \""} + t + "\"");
  }

  /// Runs ad-hoc SQL that must succeed; returns its result.
  store::result sql(const std::string& text, const store::params& p = {}) {
    auto r = conn.exec(text, p);
    if (!r)
      CAF_FAIL("sql failed: " << nf::message_of(r.error()) << "\n" << text);
    return std::move(*r);
  }

  std::string scalar(const std::string& text, const store::params& p = {}) {
    auto r = sql(text, p);
    if (r.rows() != 1 || r.is_null(0, 0))
      return "";
    return r.str(0, 0);
  }

  int64_t count(const std::string& text, const store::params& p = {}) {
    return std::stoll(scalar(text, p));
  }

  /// A RUNNING workflow (uuidv7 id, "startedAt" = its timestamp, shard by the SQL formula).
  workflow_id insert_workflow(int priority = 0) {
    return workflow_id{scalar(R"(
      WITH n AS (SELECT uuidv7() AS id)
      INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId", "workflowName",
                                        "workflowVersion", "priority", "shard")
      SELECT id, uuid_extract_timestamp(id), '00000000-0000-0000-0000-000000000001', 'wf', 1, $1,
             ('x' || right(id::text, 4))::bit(16)::int % (SELECT "partitionCount" FROM "ClusterSettings")
        FROM n RETURNING "id")",
                              store::params::of(priority))};
  }

  int16_t shard_of(const workflow_id& wf) {
    return static_cast<int16_t>(count(R"(SELECT "shard" FROM "WorkflowExecutions" WHERE "id" = $1)",
                                      store::params::of(wf)));
  }

  /// A SCHEDULED SIMPLE task, with its "TaskQueues" row unless `enqueue` is false.
  task_id insert_task(const workflow_id& wf, const std::string& ref, const std::string& queue,
                      bool enqueue = true, int attempt = 0, int priority = 0) {
    task_id t{scalar(R"(
      INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "attempt", "taskType",
                                    "taskDefName", "queueName", "input")
      VALUES ($1, '00000000-0000-0000-0000-000000000001', $2, $3, 'SIMPLE', $4, $4,
              jsonb_build_object('ref', $2::text))
      RETURNING "id")",
                     store::params::of(wf, ref, attempt, queue))};
    if (enqueue)
      sql(R"(INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard")
             SELECT $1, $2, $3, 'SIMPLE', $4, "shard" FROM "WorkflowExecutions" WHERE "id" = $3)",
          store::params::of(queue, t, wf, priority));
    return t;
  }

  /// Leases exactly one task of `queue` (the test requires it).
  store::leased_task lease_one(const std::string& queue, const std::string& worker = "w1",
                               int start_to_close = 0) {
    store::lease_request r;
    r.queue = queue;
    r.worker_id = worker;
    r.lease_seconds = 300;
    r.start_to_close_seconds = start_to_close;
    auto got = store::lease_tasks(conn, r);
    CAF_REQUIRE(got);
    CAF_REQUIRE_EQUAL(got->size(), 1u);
    return got->front();
  }

  /// Puts a leased task back as a requeue would: unleased queue row, task SCHEDULED.
  void requeue(const task_id& t) {
    sql(R"(UPDATE "TaskQueues" SET "leaseToken" = NULL, "leaseExpiresAt" = NULL, "leasedBy" = NULL
            WHERE "taskId" = $1)",
        store::params::of(t));
    sql(R"(UPDATE "TaskExecutions" SET "status" = 'SCHEDULED' WHERE "id" = $1)", store::params::of(t));
  }

  /// "seq:TYPE,…" of a workflow's history.
  std::string events(const workflow_id& wf) {
    return scalar(R"(SELECT string_agg("seq"::text || ':' || "eventType"::text, ',' ORDER BY "seq")
                       FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                  store::params::of(wf));
  }

  std::string task_status(const task_id& t) {
    return scalar(R"(SELECT "status"::text FROM "TaskExecutions" WHERE "id" = $1)",
                  store::params::of(t));
  }

  /// Everything the worker path may write about a workflow, as one comparable string.
  /// With `with_timers` false the "Timers" rows are left out (a no-op firing still marks
  /// its own timer claimed).
  std::string snapshot(const workflow_id& wf, bool with_timers = true) {
    return scalar(R"(SELECT concat_ws(E'\n',
      (SELECT string_agg(row_to_json(t)::text, ',' ORDER BY "id") FROM "TaskExecutions" t WHERE "workflowId" = $1),
      (SELECT string_agg(row_to_json(q)::text, ',' ORDER BY "id") FROM "TaskQueues" q WHERE "workflowId" = $1),
      (SELECT string_agg(row_to_json(e)::text, ',' ORDER BY "seq") FROM "WorkflowEvents" e WHERE "workflowId" = $1),
      (SELECT string_agg(row_to_json(d)::text, ',') FROM "DecideQueues" d WHERE "workflowId" = $1),
      (SELECT string_agg(row_to_json(o)::text, ',' ORDER BY "id") FROM "OutboxEvents" o WHERE "workflowId" = $1),
      (SELECT string_agg(row_to_json(m)::text, ',' ORDER BY "id") FROM "Timers" m WHERE "workflowId" = $1 AND $2),
      (SELECT row_to_json(w)::text FROM "WorkflowExecutions" w WHERE "id" = $1)))",
                  store::params::of(wf, with_timers));
  }

  /// Polls (from this fixture's own connection) until backend `pid` waits on a lock, or
  /// `finished()` says the other side is done without ever blocking. True = it blocked.
  bool wait_until_blocked(int pid, const std::function<bool()>& finished) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (count(R"(SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock')",
                store::params::of(pid))
          > 0)
        return true;
      if (finished())
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CAF_FAIL("backend " << pid << " neither blocked nor finished within 20 s");
    return false;
  }
};

} // namespace nf::test
