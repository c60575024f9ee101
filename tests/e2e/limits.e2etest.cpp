#define CAF_SUITE e2e.limits
#include "caf/test/unit_test.hpp"

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int conc_limit = 3;   // concurrentExecLimit of "conc_limited"
constexpr int rate_limit = 4;   // rateLimitPerFrequency of "rate_limited" ...
constexpr int rate_seconds = 1; // ... per rateLimitFrequencyInSeconds
constexpr int conc_workflows = 24;
constexpr int rate_workflows = 16;

} // namespace

CAF_TEST(a rate limit and a concurrency limit are never exceeded) {
  test::e2e_fixture f{"e2e_limits"};
  f.start_node();
  f.define(R"([
    {"name": "conc_limited", "concurrentExecLimit": 3, "responseTimeoutSeconds": 60},
    {"name": "rate_limited", "rateLimitPerFrequency": 4, "rateLimitFrequencyInSeconds": 1,
     "responseTimeoutSeconds": 60},
    {"name": "e2e_conc", "version": 1, "tasks": [{"name": "conc_limited", "taskReferenceName": "c"}]},
    {"name": "e2e_rate", "version": 1, "tasks": [{"name": "rate_limited", "taskReferenceName": "r"}]}])");
  std::vector<std::string> ids;
  for (int i = 0; i < conc_workflows; ++i)
    ids.push_back(f.start("e2e_conc"));
  for (int i = 0; i < rate_workflows; ++i)
    ids.push_back(f.start("e2e_rate"));
  // Every task queued before any worker polls: each rate window then opens with a
  // lease that takes work, so the windows can be read back from the history.
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskQueues")", conc_workflows + rate_workflows));
  // Far more workers than either limit allows; conc tasks take a while each.
  test::worker_pool conc_workers{f.client_opts(), {"conc_limited"}, 8,
                                 [](const msg::leased_task& t) {
                                   std::this_thread::sleep_for(150ms);
                                   return test::task_outcome::completed(t.input_json);
                                 }};
  test::worker_pool rate_workers{f.client_opts(), {"rate_limited"}, 4, test::echo_handler(), 8};
  for (const auto& id : ids)
    CAF_REQUIRE_EQUAL(f.await_end(id, 120s), "COMPLETED");

  // Concurrency: running tasks of conc_limited at any moment, from TASK_STARTED
  // (+1) and the task's end (-1); at equal times ends count first.
  auto most_running = f.count(R"(
    WITH ev AS (
      SELECT e."at", CASE WHEN e."eventType" = 'TASK_STARTED' THEN 1 ELSE -1 END AS d
        FROM "WorkflowEvents" e JOIN "WorkflowExecutions" w ON w."id" = e."workflowId"
       WHERE w."workflowName" = 'e2e_conc' AND e."refName" = 'c'
         AND e."eventType" IN ('TASK_STARTED', 'TASK_COMPLETED', 'TASK_FAILED', 'TASK_TIMED_OUT'))
    SELECT max(running) FROM (
      SELECT sum(d) OVER (ORDER BY "at", d ROWS UNBOUNDED PRECEDING) AS running FROM ev) x)");
  CAF_MESSAGE("most conc_limited tasks running at once: " << most_running);
  CAF_CHECK_LESS_OR_EQUAL(most_running, conc_limit);
  CAF_CHECK_GREATER_OR_EQUAL(most_running, 1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" e JOIN "WorkflowExecutions" w
                               ON w."id" = e."workflowId" WHERE w."workflowName" = 'e2e_conc'
                              AND e."eventType" = 'TASK_STARTED')"),
                  conc_workflows);

  // Rate: the limit's windows as the engine opens them: a window starts at the
  // first lease at least rate_seconds after the current window's start. No window
  // may hold more than rate_limit leases.
  // Read on the clock the windows are kept on: the lease transaction's now(), which is the
  // task's "startedAt" (an event's "at" is read later, when its row is made).
  auto starts = f.sql(R"(
    SELECT (extract(epoch FROM t."startedAt") * 1000000)::bigint AS us
      FROM "TaskExecutions" t JOIN "WorkflowExecutions" w ON w."id" = t."workflowId"
     WHERE w."workflowName" = 'e2e_rate' AND t."refName" = 'r' ORDER BY 1)");
  CAF_REQUIRE_EQUAL(starts.rows(), rate_workflows);
  int64_t window_start = 0;
  int in_window = 0;
  int windows = 0;
  int fullest = 0;
  for (int i = 0; i < starts.rows(); ++i) {
    auto us = std::stoll(starts.str(i, 0));
    if (windows == 0 || us - window_start >= int64_t{rate_seconds} * 1000000) {
      window_start = us;
      in_window = 0;
      ++windows;
    }
    fullest = std::max(fullest, ++in_window);
  }
  CAF_MESSAGE("rate_limited leases: " << starts.rows() << " in " << windows
                                      << " windows, fullest " << fullest);
  CAF_CHECK_LESS_OR_EQUAL(fullest, rate_limit);
  CAF_CHECK_GREATER_OR_EQUAL(windows, rate_workflows / rate_limit);
  conc_workers.stop();
  rate_workers.stop();
  CAF_CHECK(f.stop_node());
}
