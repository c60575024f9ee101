#pragma once

// Shared by the decide-path suites (definitions, start, decide, events, explain_frontier,
// bad_input): a migrated database per suite emptied before each test, ad-hoc SQL, a
// registered one-task workflow, and the race helper that waits until a backend blocks
// on a lock (explicit interleavings, never sleep-and-hope).

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "caf/test/unit_test.hpp"

#include "store/definitions.hpp"
#include "store/pg/connection.hpp"
#include "proto/errors.hpp"
#include "store/workflows.hpp"
#include "tests/store/worker_fixture.hpp"
#include "tests/support/test_database.hpp"

namespace nf::test {

/// Every table the engine writes, for "nothing was written" checks.
inline const char* const engine_tables[] = {
  "TaskDefinitions", "WorkflowDefinitions", "WorkflowExecutions", "IdempotencyKeys",
  "TaskExecutions",  "TaskQueues",          "DecideQueues",       "Timers",
  "OutboxEvents",    "WorkflowEvents",      "TaskOutputCache",    "RateLimitBuckets",
  "RequestIds"};

struct decide_fixture {
  test_database* db;
  store::connection conn;
  int partitions = 0;

  explicit decide_fixture(const std::string& suite)
    : db{&suite_database(suite)}, conn{db->connect()} {
    // Each test starts from empty tables (DELETE: TRUNCATE rewrites every partition).
    for (const char* t : engine_tables)
      sql(std::string{"DELETE FROM \""} + t + "\"");
    sql(R"(DELETE FROM "WebhookSinks")"); // no outbox rows until a test enables a sink
    auto p = store::load_partition_count(conn);
    CAF_REQUIRE(p);
    partitions = *p;
  }

  /// Ad-hoc SQL that must succeed.
  store::result sql(const std::string& text, const store::params& p = {}) {
    auto r = conn.exec(text, p);
    if (!r)
      CAF_FAIL("sql failed: " << nf::message_of(r.error()) << "\n" << text);
    return std::move(*r);
  }

  int64_t count(const std::string& text, const store::params& p = {}) {
    auto r = sql(text, p);
    return r.is_null(0, 0) ? 0 : r.i64(0, 0);
  }

  std::string scalar(const std::string& text, const store::params& p = {}) {
    auto r = sql(text, p);
    return r.rows() == 0 || r.is_null(0, 0) ? std::string{} : r.str(0, 0);
  }

  std::map<std::string, int64_t> table_counts() {
    std::map<std::string, int64_t> out;
    for (const char* t : engine_tables)
      out[t] = count(std::string{"SELECT count(*) FROM \""} + t + "\"");
    return out;
  }

  /// Registers a workflow whose only task is the SIMPLE task `task` (queue = its name).
  void define_workflow(const std::string& name, int timeout_seconds = 0,
                       const std::string& task = "work") {
    auto r = store::put_workflow_def_json(conn, default_namespace, R"({"name": ")" + name
      + R"(", "version": 1, "timeoutSeconds": )" + std::to_string(timeout_seconds)
      + R"(, "variables": {"v": 1}, "tasks": [{"name": ")" + task
      + R"(", "taskReferenceName": "a", "type": "SIMPLE"}]})");
    if (!r)
      CAF_FAIL("define_workflow: " << nf::message_of(r.error()));
  }

  store::start_result start(const std::string& name,
                            std::optional<std::string> key = std::nullopt) {
    store::start_request req;
    req.name = name;
    req.idempotency_key = std::move(key);
    auto r = store::start_workflow(conn, req, partitions);
    if (!r)
      CAF_FAIL("start: " << nf::message_of(r.error()));
    return *r;
  }

  /// Polls (from `observer`) until backend `pid` waits on a heavyweight lock.
  static bool wait_until_blocked(store::connection& observer, int pid,
                                 std::chrono::seconds limit = std::chrono::seconds{10}) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = observer.exec(
        R"(SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock')",
        store::params::of(int64_t{pid}));
      if (r && r->i64(0, 0) == 1)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds{2});
    }
    return false;
  }
};

} // namespace nf::test

/// CAF_REQUIRE for a caf::expected that prints the store error's message when it fails.
#define NF_REQUIRE_OK(expr)                                                                  \
  do {                                                                                     \
    const auto& nf_result_ = (expr);                                                       \
    if (!nf_result_)                                                                       \
      CAF_FAIL(#expr << " failed: " << ::nf::message_of(nf_result_.error()));       \
  } while (false)
