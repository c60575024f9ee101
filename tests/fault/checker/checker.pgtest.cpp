#define CAF_SUITE fault.checker
#include "caf/test/unit_test.hpp"

// The history checker against a real history: a node runs workflows with a retry after a lost
// lease, a WAIT, a workflow timeout and a webhook sink, and every rule passes with something
// checked. Then each rule is broken on purpose, one at a time, the way a fault would break it,
// and exactly that rule fails.

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/fault/checker/history_checker.hpp"
#include "tests/support/check_saying.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// fc_flaky's first attempt is abandoned (its one-second lease expires: TIMED_OUT, policy
// RETRY) or failed, and its retry waits a second; fc_slow times out while it waits.
constexpr const char* definitions = R"([
  {"name": "fc_step", "responseTimeoutSeconds": 60, "retryCount": 0},
  {"name": "fc_flaky", "responseTimeoutSeconds": 1, "retryCount": 2, "retryDelaySeconds": 1,
   "timeoutPolicy": "RETRY"},
  {"name": "fc_work", "version": 1, "tasks": [
    {"name": "fc_step", "taskReferenceName": "first", "inputParameters": {"n": "${workflow.input.n}"}},
    {"name": "fc_pause", "taskReferenceName": "pause", "type": "WAIT",
     "inputParameters": {"duration": "1s"}},
    {"name": "fc_flaky", "taskReferenceName": "flaky", "inputParameters": {"n": "${workflow.input.n}"}}]},
  {"name": "fc_slow", "version": 1, "timeoutSeconds": 1, "timeoutPolicy": "TIME_OUT_WF", "tasks": [
    {"name": "fc_long", "taskReferenceName": "long", "type": "WAIT",
     "inputParameters": {"duration": "60s"}}]}])";

const std::vector<std::string> rule_names{"ends",
                                          "one_accepted_completion",
                                          "no_attempt_after_completion",
                                          "gap_free_seqs",
                                          "no_early_timer",
                                          "outbox_delivered",
                                          "rows_in_right_partitions"};

const fault::rule_result& rule_of(const fault::check_report& r, const std::string& name) {
  for (const auto& x : r.rules)
    if (x.rule == name)
      return x;
  CAF_FAIL("no rule " << name << " in the report:\n" << r.text());
  static fault::rule_result none;
  return none;
}

// One run, its history kept for the injections.
struct checked_run {
  test::http_test_server sink;
  test::e2e_fixture f{"fault_checker"};
  std::vector<std::string> work; ///< fc_work ids, n = 0, 1, 2, ...
  std::string slow;
  std::string log_path;
  std::vector<std::string> deliveries; ///< the sink's bodies, in arrival order

  checked_run() {
    f.sql(R"(INSERT INTO "WebhookSinks" ("namespaceId", "url", "maxAttempts", "timeoutMs")
             VALUES ('00000000-0000-0000-0000-000000000001', $1, 10, 2000))",
          store::params::of(sink.url("/events")));
    f.start_node();
    f.define(definitions);
    test::worker_pool workers{f.client_opts(), {"fc_step", "fc_flaky"}, 2,
                              [](const msg::leased_task& t) {
                                if (t.task_def_name == "fc_flaky" && t.attempt == 0) {
                                  if (t.input_json.find("\"n\":1") != std::string::npos)
                                    return test::task_outcome::failed("on purpose");
                                  return test::task_outcome::abandoned();
                                }
                                return test::task_outcome::completed(t.input_json);
                              }};
    for (int n = 0; n < 3; ++n)
      work.push_back(f.start("fc_work", R"({"n": )" + std::to_string(n) + "}"));
    slow = f.start("fc_slow");
    for (const auto& id : work)
      CAF_REQUIRE_EQUAL(f.await_end(id, 30s), "COMPLETED");
    CAF_REQUIRE_EQUAL(f.await_end(slow, 30s), "TIMED_OUT");
    CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "publishedAt" IS NULL)",
                              0, 30s));
    workers.stop();
    CAF_REQUIRE(f.stop_node());
    for (const auto& r : sink.requests())
      deliveries.push_back(r.body);
    log_path = f.dir + "/sink.log";
    write_log(deliveries);
  }

  void write_log(const std::vector<std::string>& lines) {
    std::ofstream out{log_path, std::ios::trunc};
    for (const auto& l : lines)
      out << l << "\n";
  }

  fault::check_report check(int64_t since_ms = 0) {
    fault::check_options o;
    o.dsn = f.db.dsn();
    o.expected_ends = {{"fc_work", "COMPLETED"}, {"fc_slow", "TIMED_OUT"}};
    o.since_ms = since_ms;
    o.sink_log_path = log_path;
    auto r = fault::check_history(o);
    CAF_MESSAGE("\n" << r.text());
    return r;
  }

  void expect_clean() {
    auto r = check();
    CAF_CHECK(r.ok());
    CAF_CHECK_EQUAL(r.rules.size(), rule_names.size());
    for (const auto& name : rule_names)
      CAF_CHECK_GREATER(rule_of(r, name).checked, 0);
  }

  /// Exactly `rule` fails, and its example says `saying`.
  void expect_only(const std::string& rule, const std::string& saying) {
    auto r = check();
    CAF_CHECK(!r.ok());
    for (const auto& x : r.rules) {
      if (x.rule == rule) {
        CAF_CHECK_GREATER(x.violations, 0);
        CHECK_SAYING(x.examples.find(saying) != std::string::npos,
                          rule << " says: " << x.examples);
      } else {
        CHECK_SAYING(x.violations == 0, x.rule << " fails too: " << x.examples);
      }
    }
    CAF_CHECK(r.text().find("FAIL " + rule + ": ") != std::string::npos);
  }

  std::string scalar(const std::string& sql, const store::params& p = {}) {
    return f.scalar(sql, p);
  }
};

/// A copy of a completed task row of `wf` at `ref` as its next attempt, with `status` and
/// the times `times` (an SQL select list for "scheduledAt", "startedAt", "endedAt").
void add_attempt(checked_run& run, const std::string& wf, const std::string& ref,
                 const std::string& status, const std::string& times) {
  run.f.sql(R"(INSERT INTO "TaskExecutions" ("id", "workflowId", "namespaceId", "refName",
                 "iteration", "attempt", "taskType", "taskDefName", "queueName", "status",
                 "input", "output", "scheduledAt", "startedAt", "endedAt")
               SELECT uuidv7(), "workflowId", "namespaceId", "refName", "iteration",
                      "attempt" + 1, "taskType", "taskDefName", "queueName", $3::task_execution_status,
                      "input", "output", )" + times + R"(
                 FROM "TaskExecutions" WHERE "workflowId" = $1 AND "refName" = $2 AND "attempt" = 0)",
            store::params::of(wf, ref, status));
}

/// Moves the "at" of `wf`'s `type` events (of attempt `attempt` of `ref`, when given) by `by`:
/// a deadline missed shows in the event the decision wrote as much as in the row's stamp.
void move_events(checked_run& run, const std::string& wf, const std::string& type,
                 const std::string& by, const std::string& ref = {}, int attempt = 0) {
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "at" = "at" + $3::interval
                WHERE "workflowId" = $1 AND "eventType" = $2::workflow_event_type
                  AND ($4 = '' OR "taskId" = (SELECT "id" FROM "TaskExecutions"
                                               WHERE "workflowId" = $1 AND "refName" = $4
                                                 AND "attempt" = $5::int)))",
            store::params::of(wf, type, by, ref, attempt));
}

void drop_attempt(checked_run& run, const std::string& wf, const std::string& ref) {
  run.f.sql(R"(DELETE FROM "TaskExecutions" WHERE "workflowId" = $1 AND "refName" = $2 AND "attempt" = 1)",
            store::params::of(wf, ref));
}

int shell(const std::string& cmd, std::string& out) {
  std::string file = std::string{std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp"}
                     + "/fault_checker_cli." + std::to_string(::getpid());
  int rc = std::system((cmd + " > " + file + " 2>&1").c_str());
  std::ifstream in{file};
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  std::remove(file.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

} // namespace

CAF_TEST(each rule passes on a clean history and fails alone on its own violation) {
  checked_run run;
  CAF_MESSAGE(run.deliveries.size() << " deliveries");
  run.expect_clean();
  // The history has the evidence the timer rule reads: a lost lease, a retry delay, a wait.
  CAF_CHECK_EQUAL(run.scalar(R"(SELECT "status" FROM "TaskExecutions"
                                 WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 0)",
                             store::params::of(run.work[0])),
                  "TIMED_OUT");

  // Only executions started since: a bound after the run checks nothing.
  auto later = std::stoll(run.scalar(R"(SELECT floor(extract(epoch FROM now()) * 1000 + 3600000)::bigint)"));
  auto none = run.check(later);
  CAF_CHECK_EQUAL(rule_of(none, "ends").checked, 0);
  CAF_CHECK_EQUAL(rule_of(none, "gap_free_seqs").checked, 0);

  CAF_MESSAGE("ends: a workflow left RUNNING");
  auto ended = run.scalar(R"(SELECT "endedAt"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                          store::params::of(run.work[1]));
  run.f.sql(R"(UPDATE "WorkflowExecutions" SET "status" = 'RUNNING', "endedAt" = NULL WHERE "id" = $1)",
            store::params::of(run.work[1]));
  run.expect_only("ends", run.work[1] + " (fc_work) is RUNNING, expected COMPLETED");
  run.f.sql(R"(UPDATE "WorkflowExecutions" SET "status" = 'COMPLETED', "endedAt" = $2::timestamptz WHERE "id" = $1)",
            store::params::of(run.work[1], ended));

  CAF_MESSAGE("one_accepted_completion: a second COMPLETED attempt");
  add_attempt(run, run.work[0], "first", "COMPLETED", R"("scheduledAt", "startedAt", "endedAt")");
  run.expect_only("one_accepted_completion", "first#0 completed by attempts 0,1");
  drop_attempt(run, run.work[0], "first");

  CAF_MESSAGE("no_attempt_after_completion: an attempt scheduled after the completion");
  add_attempt(run, run.work[0], "first", "SCHEDULED", "now(), NULL, NULL");
  run.expect_only("no_attempt_after_completion", "first#0 attempt 1 (SCHEDULED");
  drop_attempt(run, run.work[0], "first");

  CAF_MESSAGE("gap_free_seqs: an event missing from the middle");
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "seq" = "seq" + 1000 WHERE "workflowId" = $1 AND "seq" = 2)",
            store::params::of(run.work[2]));
  run.expect_only("gap_free_seqs", "seq 2 missing");
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "seq" = "seq" - 1000 WHERE "workflowId" = $1 AND "seq" = 1002)",
            store::params::of(run.work[2]));

  CAF_MESSAGE("no_early_timer: a task TIMED_OUT before its lease could expire");
  auto timed_out = run.scalar(R"(SELECT "endedAt"::text FROM "TaskExecutions"
                                  WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 0)",
                              store::params::of(run.work[0]));
  run.f.sql(R"(UPDATE "TaskExecutions" SET "endedAt" = "startedAt" + interval '100 milliseconds'
                WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 0)",
            store::params::of(run.work[0]));
  move_events(run, run.work[0], "TASK_TIMED_OUT", "-5 seconds", "flaky", 0);
  run.expect_only("no_early_timer", "ms before its responseTimeoutSeconds deadline");
  move_events(run, run.work[0], "TASK_TIMED_OUT", "5 seconds", "flaky", 0);
  run.f.sql(R"(UPDATE "TaskExecutions" SET "endedAt" = $2::timestamptz
                WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 0)",
            store::params::of(run.work[0], timed_out));

  CAF_MESSAGE("no_early_timer: a workflow TIMED_OUT early");
  auto slow_end = run.scalar(R"(SELECT "endedAt"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                             store::params::of(run.slow));
  run.f.sql(R"(UPDATE "WorkflowExecutions" SET "endedAt" = "startedAt" + interval '200 milliseconds' WHERE "id" = $1)",
            store::params::of(run.slow));
  move_events(run, run.slow, "WORKFLOW_TIMED_OUT", "-5 seconds");
  run.expect_only("no_early_timer", run.slow + " TIMED_OUT");
  move_events(run, run.slow, "WORKFLOW_TIMED_OUT", "5 seconds");
  run.f.sql(R"(UPDATE "WorkflowExecutions" SET "endedAt" = $2::timestamptz WHERE "id" = $1)",
            store::params::of(run.slow, slow_end));

  CAF_MESSAGE("no_early_timer: a WAIT that ended before its duration");
  auto wait_end = run.scalar(R"(SELECT "endedAt"::text FROM "TaskExecutions"
                                 WHERE "workflowId" = $1 AND "refName" = 'pause')",
                             store::params::of(run.work[1]));
  run.f.sql(R"(UPDATE "TaskExecutions" SET "endedAt" = "scheduledAt" + interval '10 milliseconds'
                WHERE "workflowId" = $1 AND "refName" = 'pause')",
            store::params::of(run.work[1]));
  // Its row's stamp alone is early: the event the decision wrote says when it decided.
  CAF_CHECK(run.check().ok());
  move_events(run, run.work[1], "TASK_COMPLETED", "-5 seconds", "pause", 0);
  run.expect_only("no_early_timer", "ms before its wake");
  move_events(run, run.work[1], "TASK_COMPLETED", "5 seconds", "pause", 0);
  run.f.sql(R"(UPDATE "TaskExecutions" SET "endedAt" = $2::timestamptz
                WHERE "workflowId" = $1 AND "refName" = 'pause')",
            store::params::of(run.work[1], wait_end));

  CAF_MESSAGE("no_early_timer: a retry started before its delay");
  auto retry_start = run.scalar(R"(SELECT "startedAt"::text FROM "TaskExecutions"
                                    WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 1)",
                                store::params::of(run.work[1]));
  run.f.sql(R"(UPDATE "TaskExecutions" SET "startedAt" = "scheduledAt" + interval '20 milliseconds'
                WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 1)",
            store::params::of(run.work[1]));
  move_events(run, run.work[1], "TASK_STARTED", "-5 seconds", "flaky", 1);
  run.expect_only("no_early_timer", "ms before its retry delay of 1000 ms");
  move_events(run, run.work[1], "TASK_STARTED", "5 seconds", "flaky", 1);
  run.f.sql(R"(UPDATE "TaskExecutions" SET "startedAt" = $2::timestamptz
                WHERE "workflowId" = $1 AND "refName" = 'flaky' AND "attempt" = 1)",
            store::params::of(run.work[1], retry_start));

  CAF_MESSAGE("no_early_timer: a timer claimed before it was due");
  auto timer = run.scalar(R"(SELECT min("id") FROM "Timers" WHERE "kind" = 'wait' AND "claimedAt" IS NOT NULL)");
  CAF_REQUIRE(!timer.empty());
  auto claimed = run.scalar(R"(SELECT "claimedAt"::text FROM "Timers" WHERE "id" = $1)",
                            store::params::of(timer));
  run.f.sql(R"(UPDATE "Timers" SET "claimedAt" = "fireAt" - interval '5 seconds' WHERE "id" = $1)",
            store::params::of(timer));
  run.expect_only("no_early_timer", "wait timer " + timer + " of workflow");
  run.f.sql(R"(UPDATE "Timers" SET "claimedAt" = $2::timestamptz WHERE "id" = $1)",
            store::params::of(timer, claimed));

  CAF_MESSAGE("no_early_timer: a timer's event written before the timer was due");
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "at" = "at" - interval '5 seconds'
                WHERE "workflowId" = $1 AND "eventType" = 'TIMER_FIRED')",
            store::params::of(run.slow));
  run.expect_only("no_early_timer", "TIMER_FIRED (workflow " + run.slow);
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "at" = "at" + interval '5 seconds'
                WHERE "workflowId" = $1 AND "eventType" = 'TIMER_FIRED')",
            store::params::of(run.slow));

  CAF_MESSAGE("outbox_delivered: a published event the sink never got");
  auto owed = run.scalar(R"(SELECT "eventId"::text FROM "OutboxEvents"
                             WHERE "publishedAt" > "createdAt" ORDER BY "id" LIMIT 1)");
  CAF_REQUIRE(!owed.empty());
  std::vector<std::string> without;
  for (const auto& d : run.deliveries)
    if (d.find(owed) == std::string::npos)
      without.push_back(d);
  CAF_REQUIRE_LESS(without.size(), run.deliveries.size());
  run.write_log(without);
  run.expect_only("outbox_delivered", "event " + owed + " (");

  CAF_MESSAGE("outbox_delivered: a redelivery with another body");
  auto altered = run.deliveries;
  auto again = boost::json::parse(run.deliveries.front()).as_object();
  again["payload"] = boost::json::object{{"changed", true}};
  altered.push_back(boost::json::serialize(again));
  run.write_log(altered);
  run.expect_only("outbox_delivered", "with a body unlike line 1's");

  CAF_MESSAGE("outbox_delivered: a delivery of no outbox row");
  auto stray = run.deliveries;
  auto unknown = boost::json::parse(run.deliveries.front()).as_object();
  unknown["eventId"] = "01900000-0000-7000-8000-000000000000";
  stray.push_back(boost::json::serialize(unknown));
  run.write_log(stray);
  run.expect_only("outbox_delivered", "which is no outbox row");

  CAF_MESSAGE("outbox_delivered: a redelivery, byte for byte, is fine");
  auto twice = run.deliveries;
  twice.push_back(run.deliveries.front());
  run.write_log(twice);
  CAF_CHECK(run.check().ok());
  run.write_log(run.deliveries);

  CAF_MESSAGE("rows_in_right_partitions: an event time from a clock ten minutes ahead");
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "at" = "at" + interval '10 minutes'
                WHERE "workflowId" = $1 AND "eventType" = 'WORKFLOW_COMPLETED')",
            store::params::of(run.work[2]));
  run.expect_only("rows_in_right_partitions", "(WORKFLOW_COMPLETED) at");
  run.f.sql(R"(UPDATE "WorkflowEvents" SET "at" = "at" - interval '10 minutes'
                WHERE "workflowId" = $1 AND "eventType" = 'WORKFLOW_COMPLETED')",
            store::params::of(run.work[2]));

  CAF_MESSAGE("rows_in_right_partitions: a workflow id made on a clock five minutes behind");
  run.f.sql(R"(WITH w AS (SELECT uuidv7(interval '-5 minutes') AS id)
               INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId", "workflowName",
                 "workflowVersion", "status", "shard", "lastSeq", "endedAt")
               SELECT w.id, uuid_extract_timestamp(w.id), '00000000-0000-0000-0000-000000000001',
                      'fc_skewed', 1, 'COMPLETED', 0, 1, now() FROM w)");
  auto skewed = run.scalar(R"(SELECT "id" FROM "WorkflowExecutions" WHERE "workflowName" = 'fc_skewed')");
  run.f.sql(R"(INSERT INTO "WorkflowEvents" ("workflowId", "seq", "namespaceId", "eventType")
               VALUES ($1, 1, '00000000-0000-0000-0000-000000000001', 'WORKFLOW_STARTED'))",
            store::params::of(skewed));
  run.expect_only("rows_in_right_partitions", "workflow " + skewed + " startedAt");
  run.f.sql(R"(DELETE FROM "WorkflowEvents" WHERE "workflowId" = $1)", store::params::of(skewed));
  run.f.sql(R"(DELETE FROM "WorkflowExecutions" WHERE "id" = $1)", store::params::of(skewed));

  // Every injection undone: clean again.
  run.expect_clean();

  CAF_MESSAGE("the command: a clean run exits 0, a broken one 1, a bad flag 2");
  std::string out;
  std::string dsn = "'" + run.f.db.dsn() + "'";
  std::string cmd = std::string{NF_CHECK_HISTORY_BIN} + " --dsn " + dsn
                    + " --expect fc_work=COMPLETED --expect fc_slow=TIMED_OUT --sink-log "
                    + run.log_path;
  CAF_CHECK_EQUAL(shell(cmd, out), 0);
  CAF_CHECK(out.find("PASS ends: 4 checked") != std::string::npos);
  CAF_CHECK(out.find("PASS outbox_delivered: ") != std::string::npos);
  CAF_CHECK_EQUAL(shell(std::string{NF_CHECK_HISTORY_BIN} + " --dsn " + dsn
                          + " --expect fc_work=FAILED", out),
                  1);
  CAF_CHECK(out.find("FAIL ends: 3 of 3, e.g. workflow ") != std::string::npos);
  CAF_CHECK_EQUAL(shell(std::string{NF_CHECK_HISTORY_BIN} + " --dsn " + dsn
                          + " --expect fc_work=DONE", out),
                  2);
  CAF_CHECK(out.find("'DONE' is no workflow status") != std::string::npos);
  CAF_CHECK_EQUAL(shell(std::string{NF_CHECK_HISTORY_BIN} + " --since-ms 5", out), 2);
  CAF_CHECK(out.find("--dsn is required") != std::string::npos);
  CAF_CHECK_EQUAL(shell(std::string{NF_CHECK_HISTORY_BIN} + " --dsn " + dsn + " --since-ms x", out), 2);
  CAF_CHECK(out.find("--since-ms needs a whole number") != std::string::npos);
  CAF_CHECK_EQUAL(shell(std::string{NF_CHECK_HISTORY_BIN} + " --dsn " + dsn + " --frobnicate", out), 2);
  CAF_CHECK(out.find("unknown argument '--frobnicate'") != std::string::npos);
}
