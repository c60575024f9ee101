#define CAF_SUITE http.signals

// Conductor's blocking points against a real node: a synchronous execution answers where the
// workflow waits (a WAIT of its own or of a running sub-workflow, or a task named by
// waitUntilTaskRef) in the shape its returnStrategy asks for, and a signal completes the WAIT
// the workflow is blocked on without naming it. Every refusal names its field and changes
// nothing.

#include <caf/test/dsl.hpp>

#include <chrono>

#include <boost/json.hpp>

#include "tests/http/error_body.hpp"
#include "tests/support/http_node.hpp"
#include "tests/support/http_workflow.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

constexpr auto defs = R"([
  {"name": "two_gates", "version": 1, "tasks": [
    {"name": "a", "taskReferenceName": "a", "type": "WAIT"},
    {"name": "mark", "taskReferenceName": "mark", "type": "SET_VARIABLE",
     "inputParameters": {"between": true}},
    {"name": "b", "taskReferenceName": "b", "type": "WAIT"}],
   "outputParameters": {"a": "${a.output}", "b": "${b.output}"}},
  {"name": "nested", "version": 1, "tasks": [
    {"name": "child", "taskReferenceName": "child", "type": "SUB_WORKFLOW",
     "subWorkflowParam": {"name": "two_gates", "version": 1}},
    {"name": "after", "taskReferenceName": "after", "type": "WAIT"}],
   "outputParameters": {"child": "${child.output}", "after": "${after.output}"}},
  {"name": "pause_then_set", "version": 1, "tasks": [
    {"name": "pause", "taskReferenceName": "pause", "type": "WAIT",
     "inputParameters": {"duration": "1s"}},
    {"name": "set", "taskReferenceName": "set", "type": "SET_VARIABLE",
     "inputParameters": {"done": true}}]},
  {"name": "long_pause", "version": 1, "tasks": [
    {"name": "pause", "taskReferenceName": "pause", "type": "WAIT",
     "inputParameters": {"duration": "1h"}}]},
  {"name": "working", "version": 1, "tasks": [
    {"name": "first", "taskReferenceName": "first", "type": "SET_VARIABLE",
     "inputParameters": {"x": 1}},
    {"name": "sig_nobody_polls", "taskReferenceName": "work"}]}
])";

struct fixture : test::http_node {
  fixture() : http_node{"http_signals", defs} {}

  boost::json::object execute(const std::string& name, const std::string& query = {}) {
    auto r = http->post("/api/workflow/execute/" + name + "/1?waitForSeconds=30" + query, "");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.json().as_object();
  }
  boost::json::object workflow(const std::string& id) {
    return test::workflow_over_http(*http, id).as_object();
  }
  // The status of the task `ref` of workflow `id` ("" when it has none yet).
  std::string task_status(const std::string& id, const std::string& ref) {
    auto wf = workflow(id);
    for (const auto& t : wf.at("tasks").as_array())
      if (t.at("referenceTaskName") == ref.c_str())
        return std::string{t.at("status").as_string()};
    return {};
  }
  bool await_pending(const std::string& id, const std::string& ref) {
    return f.await([&] { return task_status(id, ref) == "IN_PROGRESS"; }, 20s);
  }
  std::string str(const boost::json::object& o, const char* key) {
    return std::string{o.at(key).as_string()};
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_signals_tests, fixture)

CAF_TEST(execute answers where the workflow blocks in the shape returnStrategy asks for) {
  // Blocked at its own WAIT: answered at once, with the workflow.
  auto own = execute("two_gates");
  CAF_CHECK_EQUAL(str(own, "responseType"), "TARGET_WORKFLOW");
  CAF_CHECK_EQUAL(str(own, "status"), "RUNNING");
  CAF_CHECK_EQUAL(str(own, "targetWorkflowId"), str(own, "workflowId"));
  CAF_CHECK_EQUAL(str(own, "targetWorkflowStatus"), "RUNNING");
  CAF_CHECK_EQUAL(own.at("tasks").as_array().back().at("referenceTaskName").as_string(), "a");

  // Blocked in a sub-workflow: the blocking task, which is the sub-workflow's.
  auto task = execute("nested", "&returnStrategy=BLOCKING_TASK");
  CAF_CHECK_EQUAL(str(task, "responseType"), "BLOCKING_TASK");
  CAF_CHECK_EQUAL(str(task, "referenceTaskName"), "a");
  CAF_CHECK_EQUAL(str(task, "taskType"), "WAIT");
  CAF_CHECK_EQUAL(str(task, "status"), "IN_PROGRESS");
  auto parent = str(task, "targetWorkflowId");
  auto child = str(task, "workflowId");
  CAF_CHECK_NOT_EQUAL(parent, child);
  CAF_CHECK_EQUAL(str(workflow(child), "parentWorkflowId"), parent);

  auto holder = execute("nested", "&returnStrategy=BLOCKING_WORKFLOW");
  CAF_CHECK_EQUAL(str(holder, "responseType"), "BLOCKING_WORKFLOW");
  CAF_CHECK_EQUAL(str(holder, "workflowName"), "two_gates");
  CAF_CHECK_EQUAL(str(holder, "parentWorkflowId"), str(holder, "targetWorkflowId"));

  auto input = execute("nested", "&returnStrategy=BLOCKING_TASK_INPUT");
  CAF_CHECK_EQUAL(str(input, "responseType"), "BLOCKING_TASK_INPUT");
  CAF_CHECK(input.at("input").is_object());
  CAF_CHECK(!input.contains("tasks"));

  // No WAIT: answered once the task named is scheduled, long before the 30 s.
  auto t0 = std::chrono::steady_clock::now();
  auto reached = execute("working", "&waitUntilTaskRef=elsewhere,%20work");
  CAF_CHECK(std::chrono::steady_clock::now() - t0 < 20s);
  CAF_CHECK_EQUAL(str(reached, "status"), "RUNNING");
  CAF_CHECK_EQUAL(reached.at("tasks").as_array().back().at("referenceTaskName").as_string(),
                  "work");
  // A timed WAIT ends by itself: the answer waits it out.
  CAF_CHECK_EQUAL(str(execute("pause_then_set"), "status"), "COMPLETED");
  // SYNCHRONOUS is answered as DURABLE: every start is committed first.
  CAF_CHECK_EQUAL(str(execute("two_gates", "&consistency=SYNCHRONOUS"), "status"), "RUNNING");

  auto before = f.count(R"(SELECT count(*) FROM "WorkflowExecutions")");
  check_error(http->post("/api/workflow/execute/two_gates/1?consistency=REGION_DURABLE", ""),
              400, "consistency");
  check_error(http->post("/api/workflow/execute/two_gates/1?returnStrategy=LATEST", ""), 400,
              "returnStrategy");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"), before);
}

CAF_TEST(a signal completes the WAIT the workflow is blocked on in it or in a sub-workflow) {
  auto started = execute("nested", "&returnStrategy=BLOCKING_TASK");
  auto parent = str(started, "targetWorkflowId");
  auto child = str(started, "workflowId");

  // The sub-workflow's first WAIT, then where it blocks next: its second.
  auto r = http->post("/api/tasks/" + parent + "/COMPLETED/signal/sync"
                        "?returnStrategy=BLOCKING_WORKFLOW",
                      R"({"approved": "first"})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto next = r.json().as_object();
  CAF_CHECK_EQUAL(str(next, "responseType"), "BLOCKING_WORKFLOW");
  CAF_CHECK_EQUAL(str(next, "workflowId"), child);
  CAF_CHECK_EQUAL(str(next, "targetWorkflowId"), parent);
  auto task = [&](const char* ref) {
    for (const auto& t : next.at("tasks").as_array())
      if (t.at("referenceTaskName") == ref)
        return t.as_object();
    CAF_FAIL("no task " << ref);
  };
  CAF_CHECK_EQUAL(next.at("tasks").as_array().size(), 3u);
  CAF_CHECK_EQUAL(str(task("a"), "status"), "COMPLETED");
  CAF_CHECK_EQUAL(task("a").at("outputData").at("approved").as_string(), "first");
  CAF_CHECK_EQUAL(str(task("b"), "status"), "IN_PROGRESS");

  // Fire and forget: the second WAIT; the sub-workflow ends and the parent's own WAIT waits.
  auto plain = http->post("/api/tasks/" + parent + "/COMPLETED/signal", R"({"approved": 2})");
  CAF_CHECK_EQUAL(plain.status, 200u);
  CAF_CHECK(plain.body.empty());
  CAF_REQUIRE(await_pending(parent, "after"));
  CAF_CHECK_EQUAL(str(workflow(child), "status"), "COMPLETED");

  // The last: the workflow ends, and every strategy answers the workflow.
  r = http->post("/api/tasks/" + parent + "/COMPLETED/signal/sync?returnStrategy=BLOCKING_TASK",
                 R"({"done": true})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto end = r.json().as_object();
  CAF_CHECK_EQUAL(str(end, "responseType"), "TARGET_WORKFLOW");
  CAF_CHECK_EQUAL(str(end, "status"), "COMPLETED");
  CAF_CHECK_EQUAL(str(end, "targetWorkflowStatus"), "COMPLETED");
  CAF_CHECK(end.at("output").at("after").at("done").as_bool());
  CAF_CHECK_EQUAL(end.at("output").at("child").at("b").at("approved").as_int64(), 2);

  // A signal ends a timed WAIT early.
  auto begun = http->post("/api/workflow/execute/long_pause/1?waitForSeconds=1", "");
  CAF_REQUIRE_EQUAL(begun.status, 200u);
  auto paused = str(begun.json().as_object(), "workflowId");
  r = http->post("/api/tasks/" + paused + "/COMPLETED/signal/sync", R"({"early": true})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK_EQUAL(str(r.json().as_object(), "status"), "COMPLETED");

  // Nothing waits in an ended workflow, nor in one whose task is a worker's.
  check_error(http->post("/api/tasks/" + parent + "/COMPLETED/signal", "{}"), 409);
  auto busy = str(execute("working", "&waitUntilTaskRef=work"), "workflowId");
  check_error(http->post("/api/tasks/" + busy + "/COMPLETED/signal", "{}"), 409);
}

CAF_TEST(a failed signal fails the workflow and a bad one changes nothing) {
  auto id = str(execute("two_gates"), "workflowId");
  check_error(http->post("/api/tasks/" + id + "/IN_PROGRESS/signal", "{}"), 400, "status");
  check_error(http->post("/api/tasks/" + id + "/COMPLETED/signal", "[1]"), 400, "body");
  check_error(http->post("/api/tasks/" + id + "/COMPLETED/signal/sync?returnStrategy=ALL", "{}"),
              400, "returnStrategy");
  check_error(http->post("/api/tasks/not-an-id/COMPLETED/signal", "{}"), 400, "workflowId");
  CAF_CHECK_EQUAL(task_status(id, "a"), "IN_PROGRESS");

  auto r = http->post("/api/tasks/" + id + "/FAILED_WITH_TERMINAL_ERROR/signal/sync",
                      R"({"reason": "rejected"})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto failed = r.json().as_object();
  CAF_CHECK_EQUAL(str(failed, "status"), "FAILED");
  CAF_CHECK_EQUAL(task_status(id, "a"), "FAILED_WITH_TERMINAL_ERROR");
}

CAF_TEST_FIXTURE_SCOPE_END()
