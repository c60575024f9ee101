#define CAF_SUITE e2e.retries
#include "caf/test/unit_test.hpp"

#include <csignal>
#include <map>
#include <optional>

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

struct attempt_row {
  std::string status;
  int64_t scheduled_ms = 0;
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
};

// The attempts of one task reference, by attempt number, from the history tables.
std::map<int, attempt_row> attempts(test::e2e_fixture& f, const std::string& wf,
                                    const std::string& ref) {
  auto r = f.sql(R"(SELECT "attempt", "status"::text,
                           (extract(epoch FROM "scheduledAt") * 1000)::bigint,
                           coalesce((extract(epoch FROM "startedAt") * 1000)::bigint, 0),
                           coalesce((extract(epoch FROM "endedAt") * 1000)::bigint, 0)
                      FROM "TaskExecutions" WHERE "workflowId" = $1 AND "refName" = $2)",
                 store::params::of(wf, ref));
  std::map<int, attempt_row> out;
  for (int i = 0; i < r.rows(); ++i)
    out[std::stoi(r.str(i, 0))] = attempt_row{r.str(i, 1), std::stoll(r.str(i, 2)),
                                              std::stoll(r.str(i, 3)), std::stoll(r.str(i, 4))};
  return out;
}

} // namespace

CAF_TEST(a failing task is retried with exponential backoff until it succeeds) {
  test::e2e_fixture f{"e2e_retries_backoff"};
  f.start_node();
  f.define(R"([{"name": "flaky", "retryCount": 2, "retryLogic": "EXPONENTIAL_BACKOFF",
                "retryDelaySeconds": 1, "responseTimeoutSeconds": 30},
    {"name": "e2e_flaky", "version": 1, "tasks": [
      {"name": "flaky", "taskReferenceName": "flaky", "inputParameters": {"v": 7}}],
     "outputParameters": {"v": "${flaky.output.v}", "attempt": "${flaky.output.attempt}"}}])");
  // Fails attempts 0 and 1, completes attempt 2.
  test::worker_pool workers{f.client_opts(), {"flaky"}, 1, [](const msg::leased_task& t) {
    if (t.attempt < 2)
      return test::task_outcome::failed("attempt " + std::to_string(t.attempt) + " fails");
    return test::task_outcome::completed(R"({"v": 7, "attempt": )" + std::to_string(t.attempt)
                                         + "}");
  }};
  auto id = f.start("e2e_flaky");
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  auto a = attempts(f, id, "flaky");
  CAF_REQUIRE_EQUAL(a.size(), 3u);
  CAF_CHECK_EQUAL(a[0].status, "FAILED");
  CAF_CHECK_EQUAL(a[1].status, "FAILED");
  CAF_CHECK_EQUAL(a[2].status, "COMPLETED");
  // Backoff: 1 s after the first failure, 2 s after the second (EXPONENTIAL_BACKOFF),
  // measured from the failure to the next attempt's lease. A few ms of slack for
  // timestamps taken at the start of different transactions.
  CAF_CHECK_GREATER_OR_EQUAL(a[1].started_ms - a[0].ended_ms, 1000 - 20);
  CAF_CHECK_GREATER_OR_EQUAL(a[2].started_ms - a[1].ended_ms, 2000 - 20);
  CAF_MESSAGE("retry gaps: " << a[1].started_ms - a[0].ended_ms << " ms, "
                             << a[2].started_ms - a[1].ended_ms << " ms");
  auto wf = f.get(id);
  CAF_CHECK(wf.at("output") == boost::json::parse(R"({"v": 7, "attempt": 2})"));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_FAILED')", store::params::of(id)),
                  2);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  CAF_CHECK(f.stop_node());
}

CAF_TEST(an optional task that fails for good completes with errors and its workflow goes on) {
  test::e2e_fixture f{"e2e_retries_optional"};
  f.start_node();
  // Once alone, once in a fork whose join waits for it; the first retried once.
  f.define(R"([{"name": "opt_step", "retryCount": 1, "retryDelaySeconds": 0,
                "responseTimeoutSeconds": 30},
    {"name": "ok_step", "retryCount": 0, "responseTimeoutSeconds": 30},
    {"name": "e2e_optional", "version": 1, "tasks": [
      {"name": "opt_step", "taskReferenceName": "alone", "optional": true},
      {"name": "fork", "taskReferenceName": "fork", "type": "FORK_JOIN", "forkTasks": [
        [{"name": "opt_step", "taskReferenceName": "forked", "optional": true,
          "taskDefinition": {"name": "opt_step", "retryCount": 0}}],
        [{"name": "ok_step", "taskReferenceName": "beside"}]]},
      {"name": "join", "taskReferenceName": "join", "type": "JOIN",
       "joinOn": ["forked", "beside"]},
      {"name": "ok_step", "taskReferenceName": "after"}],
     "outputParameters": {"after": "${after.output.done}"}}])");
  test::worker_pool workers{f.client_opts(), {"opt_step", "ok_step"}, 1,
                            [](const msg::leased_task& t) {
    if (t.task_def_name == "opt_step")
      return test::task_outcome::failed("optional step fails");
    return test::task_outcome::completed(R"({"done": true})");
  }};
  auto id = f.start("e2e_optional");
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  auto alone = attempts(f, id, "alone");
  CAF_REQUIRE_EQUAL(alone.size(), 2u);
  CAF_CHECK_EQUAL(alone[0].status, "FAILED");
  CAF_CHECK_EQUAL(alone[1].status, "COMPLETED_WITH_ERRORS");
  auto forked = attempts(f, id, "forked");
  CAF_REQUIRE_EQUAL(forked.size(), 1u);
  CAF_CHECK_EQUAL(forked[0].status, "COMPLETED_WITH_ERRORS");
  CAF_CHECK_EQUAL(attempts(f, id, "join")[0].status, "COMPLETED");
  CAF_CHECK(f.get(id).at("output") == boost::json::parse(R"({"after": true})"));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_COMPLETED'
                             AND "refName" IN ('alone', 'forked'))",
                          store::params::of(id)),
                  2);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  CAF_CHECK(f.stop_node());
}

// A node killed while its worker runs a task: the worker's report finds no node, then a
// restarted one that may not own the workflow's partition yet. It is sent again until taken,
// so the attempt that ran completes and nothing is retried.
CAF_TEST(a worker whose node restarts mid task reports the attempt it ran) {
  test::e2e_fixture f{"e2e_retries_node_restart"};
  f.start_node();
  f.define(R"([{"name": "long_step", "retryCount": 2, "retryDelaySeconds": 0,
                "responseTimeoutSeconds": 120},
    {"name": "e2e_restart", "version": 1, "tasks": [
      {"name": "long_step", "taskReferenceName": "step", "inputParameters": {"n": 1}}]}])");
  f.start_worker_process({"--queue", "long_step", "--behavior", "sleep=4000",
                          "--worker-id", "steady"});
  auto id = f.start("e2e_restart");
  // The worker holds the task: leased in the database is not enough, as a node killed before
  // its poll's answer left leaves the task to its lease (responseTimeoutSeconds).
  auto holds = [&] {
    return test::read_file(f.dir + "/worker0.log").find("task_started") != std::string::npos;
  };
  CAF_REQUIRE(f.await(holds, 30s));
  f.kill_node();
  f.start_node();
  CAF_REQUIRE_EQUAL(f.await_end(id, 90s), "COMPLETED");
  auto a = attempts(f, id, "step");
  CAF_CHECK_EQUAL(a.size(), 1u);
  CAF_CHECK_EQUAL(a[0].status, "COMPLETED");
  CAF_CHECK(f.stop_node());
}

CAF_TEST(a worker killed mid task times out and the task is retried while its late result is fenced off) {
  test::e2e_fixture f{"e2e_retries_killed"};
  f.start_node();
  f.define(R"([{"name": "slow_step", "retryCount": 1, "retryDelaySeconds": 0,
                "timeoutSeconds": 2, "responseTimeoutSeconds": 2, "timeoutPolicy": "RETRY"},
    {"name": "e2e_slow", "version": 1, "tasks": [
      {"name": "slow_step", "taskReferenceName": "step", "inputParameters": {"n": 1}}],
     "outputParameters": {"by": "${step.output.by}"}}])");
  // A worker process that takes the task and never answers in time.
  auto& worker = f.start_worker_process({"--queue", "slow_step", "--behavior", "sleep=600000",
                                         "--worker-id", "doomed"});
  auto id = f.start("e2e_slow");
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskQueues" WHERE "workflowId" = ')" + id
                              + R"(' AND "leasedBy" = 'doomed')",
                            1, 30s));
  auto held = f.sql(R"(SELECT "taskId", "leaseToken" FROM "TaskQueues" WHERE "workflowId" = $1)",
                    store::params::of(id));
  CAF_REQUIRE_EQUAL(held.rows(), 1);
  msg::leased_task dead;
  dead.task_id = held.str(0, 0);
  dead.workflow_id = id;
  dead.lease_token = held.str(0, 1);
  worker.stop(SIGKILL);
  // The timeout fires and attempt 1 is scheduled.
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = ')" + id
                              + R"(' AND "refName" = 'step' AND "attempt" = 1)",
                            1, 30s));
  auto a = attempts(f, id, "step");
  CAF_CHECK_EQUAL(a[0].status, "TIMED_OUT");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_TIMED_OUT')", store::params::of(id)),
                  1);
  // The dead worker's result arrives late: rejected, and nothing changes.
  auto before = f.scalar(R"(SELECT string_agg("attempt" || ':' || "status" || ':' || coalesce("output"::text, '-'), ',' ORDER BY "attempt")
                              FROM "TaskExecutions" WHERE "workflowId" = $1)",
                         store::params::of(id));
  auto late = f.api->complete(dead, R"({"by": "doomed"})");
  CAF_REQUIRE(!late);
  CAF_CHECK_EQUAL(describe(late.error()), "lease lost");
  auto late_hb = f.api->heartbeat(dead);
  CAF_REQUIRE(!late_hb);
  CAF_CHECK_EQUAL(describe(late_hb.error()), "lease lost");
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT string_agg("attempt" || ':' || "status" || ':' || coalesce("output"::text, '-'), ',' ORDER BY "attempt")
                              FROM "TaskExecutions" WHERE "workflowId" = $1)",
                           store::params::of(id)),
                  before);
  // A live worker finishes attempt 1.
  test::worker_pool workers{f.client_opts(), {"slow_step"}, 1, [](const msg::leased_task& t) {
    return test::task_outcome::completed(R"({"by": "attempt )" + std::to_string(t.attempt)
                                         + "\"}");
  }};
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  CAF_CHECK(f.get(id).at("output") == boost::json::parse(R"({"by": "attempt 1"})"));
  CAF_CHECK_EQUAL(attempts(f, id, "step").size(), 2u);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  CAF_CHECK(f.stop_node());
}

CAF_TEST(a task leased to a long poll whose client went away goes to the next poller at once) {
  test::e2e_fixture f{"e2e_retries_gone"};
  f.start_node();
  f.define(R"([{"name": "gone_step", "retryCount": 0, "responseTimeoutSeconds": 60},
    {"name": "e2e_gone", "version": 1, "tasks": [
      {"name": "gone_step", "taskReferenceName": "g"}]}])");
  msg::poll_request long_poll;
  long_poll.queue = "gone_step";
  long_poll.worker_id = "gone";
  long_poll.timeout_ms = 20000;
  {
    // A worker parks a long poll, then goes away (its client, and its connection, end)
    // before any task comes.
    client gone{f.client_opts()};
    gone.poll_async(long_poll, [](caf::expected<std::vector<msg::leased_task>>) {});
    std::this_thread::sleep_for(500ms); // parked in the lessor by now
  }
  std::this_thread::sleep_for(300ms);
  // The task comes: leased to the parked poll, whose answer reaches nobody. Its lease goes
  // back at once, so the next worker gets it now, not after responseTimeoutSeconds (60).
  auto wf = f.start("e2e_gone");
  auto t0 = std::chrono::steady_clock::now();
  msg::poll_request next = long_poll;
  next.worker_id = "next";
  next.timeout_ms = 500;
  std::optional<msg::leased_task> got;
  while (!got && std::chrono::steady_clock::now() - t0 < 20s) {
    auto r = f.api->poll(next);
    CAF_REQUIRE(r);
    if (!r->empty())
      got = r->front();
  }
  auto waited = std::chrono::steady_clock::now() - t0;
  CAF_REQUIRE(got);
  CAF_MESSAGE("the next poller got the task after "
              << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
  CAF_CHECK(waited < 5s);
  CAF_CHECK_EQUAL(got->workflow_id, wf);
  // The same attempt, leased twice: handed back, not timed out and retried.
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT count(*) || ' ' || max("pollCount")
                                FROM "TaskExecutions" WHERE "workflowId" = $1)",
                           store::params::of(wf)),
                  "1 2");
  CAF_REQUIRE(f.api->complete(*got));
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  CAF_CHECK(f.stop_node());
}

// responseTimeoutSeconds counts from the last sign of life: a heartbeat is one. An
// evaluation of the workflow between heartbeats (a sibling's completion) must not time out
// a task whose worker is still beating.
CAF_TEST(a heartbeating task outlives its responseTimeoutSeconds while its workflow is decided) {
  test::e2e_fixture f{"e2e_retries_beating"};
  f.start_node();
  f.define(R"([{"name": "beating", "retryCount": 0, "responseTimeoutSeconds": 2,
                "timeoutSeconds": 60},
    {"name": "sibling", "retryCount": 0, "responseTimeoutSeconds": 60},
    {"name": "e2e_beating", "version": 1, "tasks": [
      {"name": "fan", "taskReferenceName": "fan", "type": "FORK_JOIN", "forkTasks": [
        [{"name": "beating", "taskReferenceName": "long"}],
        [{"name": "sibling", "taskReferenceName": "s1"}],
        [{"name": "sibling", "taskReferenceName": "s2"}]]},
      {"name": "join", "taskReferenceName": "join", "type": "JOIN",
       "joinOn": ["long", "s1", "s2"]}]}])");
  auto wf = f.start("e2e_beating");
  auto take = [&](const std::string& queue, size_t n) {
    msg::poll_request p;
    p.queue = queue;
    p.worker_id = "w-" + queue;
    p.max_tasks = static_cast<int>(n);
    p.timeout_ms = 500;
    std::vector<msg::leased_task> got;
    for (int i = 0; i < 20 && got.size() < n; ++i) {
      auto r = f.api->poll(p);
      CAF_REQUIRE(r);
      got.insert(got.end(), r->begin(), r->end());
    }
    CAF_REQUIRE_EQUAL(got.size(), n);
    return got;
  };
  auto beating = take("beating", 1).front();
  auto siblings = take("sibling", 2);
  // Five seconds of heartbeats, each well inside the 2 s response timeout; a sibling
  // completes at 2.5 s and the other at 4 s, so the workflow is decided past the
  // deadline the attempt's start alone would give.
  for (int i = 1; i <= 10; ++i) {
    std::this_thread::sleep_for(500ms);
    CAF_REQUIRE(f.api->heartbeat(beating));
    if (i == 5)
      CAF_REQUIRE(f.api->complete(siblings[0]));
    if (i == 8)
      CAF_REQUIRE(f.api->complete(siblings[1]));
  }
  auto done = f.api->complete(beating);
  CAF_REQUIRE(done);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  auto a = attempts(f, wf, "long");
  CAF_CHECK_EQUAL(a.size(), 1u);
  CAF_CHECK_EQUAL(a[0].status, "COMPLETED");
  CAF_CHECK(f.stop_node());
}

// The client protocol's callback (client::postpone): the task comes back to the next poll,
// as the same attempt, once the seconds have passed.
CAF_TEST(a task its worker postpones comes back to the next poll when due) {
  test::e2e_fixture f{"e2e_retries_postponed"};
  f.start_node();
  f.define(R"([{"name": "later_step", "retryCount": 0, "responseTimeoutSeconds": 60},
    {"name": "e2e_later", "version": 1, "tasks": [
      {"name": "later_step", "taskReferenceName": "l"}]}])");
  auto wf = f.start("e2e_later");
  msg::poll_request p;
  p.queue = "later_step";
  p.worker_id = "w";
  p.timeout_ms = 500;
  auto take = [&](std::chrono::milliseconds within) {
    std::optional<msg::leased_task> got;
    auto until = std::chrono::steady_clock::now() + within;
    while (!got && std::chrono::steady_clock::now() < until) {
      auto r = f.api->poll(p);
      CAF_REQUIRE(r);
      if (!r->empty())
        got = r->front();
    }
    return got;
  };
  auto first = take(20s);
  CAF_REQUIRE(first);
  auto bad = f.api->postpone(*first, -1);
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::code_of(bad.error()), nf::errc::invalid);
  auto due = f.api->postpone(*first, 1);
  CAF_REQUIRE(due);
  CAF_CHECK(!take(300ms));
  auto again = take(20s);
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(again->task_id, first->task_id);
  CAF_CHECK_EQUAL(again->attempt, first->attempt);
  CAF_CHECK(!f.api->complete(*first));  // its lease ended with the postponement
  CAF_REQUIRE(f.api->complete(*again));
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  CAF_CHECK(f.stop_node());
}
