#define CAF_SUITE e2e.no_nudges
#include "caf/test/unit_test.hpp"

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

// I9: the actors' messages are hints. With engine.nudges = false no actor wakes
// another; only each actor's slow poll of its tables moves work along.
CAF_TEST(with nudges disabled every workflow still completes) {
  test::e2e_fixture f{"e2e_no_nudges", {{"engine.nudges", "false"}}};
  f.start_node();
  auto status = f.api->status();
  CAF_REQUIRE(status);
  CAF_REQUIRE(boost::json::parse(*status).at("node").at("nudges") == false);
  f.define(R"([{"name": "step", "responseTimeoutSeconds": 60},
    {"name": "e2e_quiet_child", "version": 1, "tasks": [
      {"name": "step", "taskReferenceName": "inner", "inputParameters": {"v": "${workflow.input.v}"}}],
     "outputParameters": {"v": "${inner.output.v}"}},
    {"name": "e2e_quiet", "version": 1, "tasks": [
      {"name": "step", "taskReferenceName": "first", "inputParameters": {"v": "${workflow.input.n}"}},
      {"name": "fork", "taskReferenceName": "fork", "type": "FORK_JOIN", "forkTasks": [
        [{"name": "step", "taskReferenceName": "left", "inputParameters": {"v": "${first.output.v}"}}],
        [{"name": "nap", "taskReferenceName": "nap", "type": "WAIT", "inputParameters": {"duration": "1s"}}]]},
      {"name": "join", "taskReferenceName": "join", "type": "JOIN", "joinOn": ["left", "nap"]},
      {"name": "child", "taskReferenceName": "child", "type": "SUB_WORKFLOW",
       "subWorkflowParam": {"name": "e2e_quiet_child", "version": 1},
       "inputParameters": {"v": "${left.output.v}"}}],
     "outputParameters": {"n": "${child.output.v}"}}])");
  test::worker_pool workers{f.client_opts(), {"step"}, 2, test::echo_handler(), 8};
  constexpr int n = 20;
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i)
    ids.push_back(f.start("e2e_quiet", R"({"n": )" + std::to_string(i) + "}"));
  for (int i = 0; i < n; ++i) {
    CAF_REQUIRE_EQUAL(f.await_end(ids[i], 120s), "COMPLETED");
    CAF_CHECK(f.get(ids[i]).at("output") == boost::json::parse(R"({"n": )" + std::to_string(i) + "}"));
  }
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "status" = 'COMPLETED')"),
                  2 * n);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  CAF_CHECK(f.stop_node());
}
