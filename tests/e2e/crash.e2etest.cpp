#define CAF_SUITE e2e.crash
#include "caf/test/unit_test.hpp"

#include <condition_variable>
#include <set>
#include <tuple>

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int workflows = 1000;
constexpr int tasks_per_workflow = 2;

using identity = std::tuple<std::string, std::string, int32_t>; // workflow, ref, iteration

} // namespace

// Two tasks each: a workflow caught between them by the kill continues on the
// restarted node from what the tables say.
CAF_TEST(kill -9 of the node while 1000 workflows run loses nothing and repeats nothing) {
  test::e2e_fixture f{"e2e_crash"};
  f.start_node();
  // A lease outlives the restart (a worker's retried report still lands); one that
  // does not is timed out and retried as attempt + 1.
  f.define(R"([{"name": "crash_step", "retryCount": 3, "retryDelaySeconds": 0,
                "responseTimeoutSeconds": 10, "timeoutPolicy": "RETRY"},
    {"name": "e2e_crash", "version": 1, "inputParameters": ["n"], "tasks": [
      {"name": "crash_step", "taskReferenceName": "a", "inputParameters": {"n": "${workflow.input.n}"}},
      {"name": "crash_step", "taskReferenceName": "b", "inputParameters": {"n": "${a.output.n}"}}],
     "outputParameters": {"n": "${b.output.n}"}}])");

  // Task identities whose completion the node accepted, and every time one of them
  // was handed out (or accepted) again afterwards.
  std::set<identity> accepted;
  int64_t executed_after_accept = 0;
  test::worker_pool workers{f.client_opts(), {"crash_step"}, 6, test::echo_handler(), 16};
  workers.on_leased([&](const msg::leased_task& t) {
    if (accepted.count({t.workflow_id, t.ref, t.iteration}) > 0)
      ++executed_after_accept;
  });
  workers.on_accepted([&](const msg::leased_task& t, test::task_outcome::kind_t) {
    if (!accepted.insert({t.workflow_id, t.ref, t.iteration}).second)
      ++executed_after_accept;
  });

  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { // for the log: where a slow run spent its time
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now()
                                                                 - t0)
      .count();
  };
  {
    client starter{f.client_opts(30s)};
    std::mutex mx;
    std::condition_variable cv;
    int answered = 0;
    int failed = 0;
    for (int i = 0; i < workflows; ++i) {
      msg::start_request r;
      r.workflow_name = "e2e_crash";
      r.input_json = R"({"n": )" + std::to_string(i) + "}";
      r.idempotency_key = "crash-" + std::to_string(i);
      starter.start_async(r, [&](caf::expected<msg::start_reply> rep) {
        std::lock_guard<std::mutex> g{mx};
        ++answered;
        failed += rep ? 0 : 1;
        cv.notify_all();
      });
    }
    std::unique_lock<std::mutex> g{mx};
    CAF_REQUIRE(cv.wait_for(g, 120s, [&] { return answered == workflows; }));
    CAF_REQUIRE_EQUAL(failed, 0);
  }
  CAF_MESSAGE("all started " << elapsed() << " ms in");
  // Kill the node in the middle of the run.
  const std::string completed_sql =
    R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "workflowName" = 'e2e_crash' AND "status" = 'COMPLETED')";
  CAF_REQUIRE(f.await([&] { return f.count(completed_sql) >= workflows / 8; }, 120s));
  f.kill_node();
  auto at_kill = f.count(completed_sql);
  CAF_MESSAGE(at_kill << " of " << workflows << " workflows had completed at the kill, "
                      << elapsed() << " ms in");
  CAF_CHECK_LESS(at_kill, workflows);
  f.start_node();
  CAF_MESSAGE("restarted " << elapsed() << " ms in");
  CAF_REQUIRE(f.await_count(completed_sql, workflows, 180s));
  CAF_MESSAGE("all completed " << elapsed() << " ms in");
  workers.stop();

  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "status" <> 'COMPLETED')"),
                  0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions"
                             WHERE "output"->'n' IS DISTINCT FROM "input"->'n')"),
                  0);
  CAF_CHECK_EQUAL(executed_after_accept, 0);
  CAF_CHECK_LESS_OR_EQUAL(accepted.size(), static_cast<size_t>(tasks_per_workflow * workflows));
  // The same from the tables: one completed attempt per task identity, and no attempt
  // scheduled after a completed one.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM (
      SELECT 1 FROM "TaskExecutions" WHERE "status" = 'COMPLETED'
       GROUP BY "workflowId", "refName", "iteration" HAVING count(*) > 1) d)"),
                  0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskExecutions" t JOIN "TaskExecutions" c
      ON c."workflowId" = t."workflowId" AND c."refName" = t."refName"
     AND c."iteration" = t."iteration" AND c."status" = 'COMPLETED' AND t."attempt" > c."attempt")"),
                  0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "status" = 'COMPLETED')"),
                  tasks_per_workflow * workflows);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  CAF_MESSAGE("retried attempts: "
              << f.count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "attempt" > 0)")
              << ", reports rejected: " << workers.rejected());
  CAF_CHECK(f.stop_node());
}
