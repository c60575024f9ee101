#define CAF_SUITE e2e.task_types
#include "caf/test/unit_test.hpp"

#include <set>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// Every task type of the language, nested: a SWITCH holding a DO_WHILE whose body
// has a worker task and a SET_VARIABLE; a FORK_JOIN whose branches hold a worker
// task then an HTTP call, a SUB_WORKFLOW (worker task + JSON_TRANSFORM inside) and a
// timed WAIT; a FORK_JOIN_DYNAMIC; a WAIT for a signal; a JSON_TRANSFORM; a
// TERMINATE whose output is the workflow's.
constexpr const char* definitions = R"([
  {"name": "echo", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "e2e_child", "version": 1, "inputParameters": ["v"], "tasks": [
    {"name": "echo", "taskReferenceName": "c1", "inputParameters": {"v": "${workflow.input.v}"}},
    {"name": "shape_child", "taskReferenceName": "c2", "type": "JSON_TRANSFORM",
     "inputParameters": {"src": "${c1.output}", "mapping": {"got": "$.src.v"}}}],
   "outputParameters": {"got": "${c2.output.result.got}"}},
  {"name": "e2e_all", "version": 1, "inputParameters": ["kind", "greeting", "url"],
   "variables": {"greeting": null, "last": 0},
   "tasks": [
    {"name": "set_greeting", "taskReferenceName": "set", "type": "SET_VARIABLE",
     "inputParameters": {"greeting": "${workflow.input.greeting}"}},
    {"name": "echo", "taskReferenceName": "prep",
     "inputParameters": {"kind": "${workflow.input.kind}",
       "dyn": [{"name": "echo", "taskReferenceName": "d1"}, {"name": "echo", "taskReferenceName": "d2"}],
       "dynIn": {"d1": {"n": 1}, "d2": {"n": 2}}}},
    {"name": "route", "taskReferenceName": "route", "type": "SWITCH", "evaluatorType": "javascript",
     "expression": "$.kind == 'loop' ? 'loop' : 'other'", "inputParameters": {"kind": "${prep.output.kind}"},
     "decisionCases": {"loop": [
       {"name": "loop", "taskReferenceName": "loop", "type": "DO_WHILE",
        "loopCondition": "$.loop['iteration'] < 3",
        "loopOver": [
          {"name": "echo", "taskReferenceName": "body", "inputParameters": {"i": "${loop.output.iteration}"}},
          {"name": "count", "taskReferenceName": "count", "type": "SET_VARIABLE",
           "inputParameters": {"last": "${body.output.i}"}}]}]},
     "defaultCase": [{"name": "echo", "taskReferenceName": "wrong_case"}]},
    {"name": "fork", "taskReferenceName": "fork", "type": "FORK_JOIN", "forkTasks": [
      [{"name": "echo", "taskReferenceName": "a", "inputParameters": {"x": 1}},
       {"name": "call", "taskReferenceName": "hw", "type": "HTTP",
        "inputParameters": {"http_request": {"uri": "${workflow.input.url}", "method": "POST",
                                             "body": {"from": "${a.output.x}"}}}}],
      [{"name": "child", "taskReferenceName": "child", "type": "SUB_WORKFLOW",
        "subWorkflowParam": {"name": "e2e_child", "version": 1},
        "inputParameters": {"v": "${workflow.variables.greeting}"}}],
      [{"name": "nap", "taskReferenceName": "nap", "type": "WAIT", "inputParameters": {"duration": "1s"}}]]},
    {"name": "join", "taskReferenceName": "join", "type": "JOIN", "joinOn": ["hw", "child", "nap"]},
    {"name": "dyn", "taskReferenceName": "dyn", "type": "FORK_JOIN_DYNAMIC",
     "dynamicForkTasksParam": "tasks", "dynamicForkTasksInputParamName": "inputs",
     "inputParameters": {"tasks": "${prep.output.dyn}", "inputs": "${prep.output.dynIn}"}},
    {"name": "dynjoin", "taskReferenceName": "dynjoin", "type": "JOIN"},
    {"name": "gate", "taskReferenceName": "gate", "type": "WAIT", "inputParameters": {"signal": "go"}},
    {"name": "shape", "taskReferenceName": "shape", "type": "JSON_TRANSFORM",
     "inputParameters": {"src": "${dynjoin.output}", "mapping": {"d1": "$.src.d1.n", "d2": "$.src.d2.n"}}},
    {"name": "stop", "taskReferenceName": "stop", "type": "TERMINATE",
     "inputParameters": {"terminationStatus": "COMPLETED", "workflowOutput": {
       "last": "${workflow.variables.last}", "http": "${hw.output.response.body.echoed}",
       "child": "${child.output.got}", "dyn": "${shape.output.result}",
       "by": "${gate.output.payload.by}"}}}
  ]}
])";

} // namespace

CAF_TEST(every task type completes end to end and nested) {
  test::e2e_fixture f{"e2e_task_types"};
  test::http_test_server http;
  http.on_request([](const test::seen_request& r, size_t) {
    boost::json::error_code ec;
    auto body = boost::json::parse(r.body, ec);
    test::canned_reply c;
    c.body = boost::json::serialize(boost::json::object{
      {"echoed", ec ? boost::json::value{} : body.as_object()["from"]}});
    return c;
  });
  f.start_node();
  f.define(definitions);
  test::worker_pool workers{f.client_opts(), {"echo"}, 2, test::echo_handler()};

  auto input = boost::json::serialize(boost::json::object{
    {"kind", "loop"}, {"greeting", "hi"}, {"url", http.url("/echo")}});
  auto id = f.start("e2e_all", input);
  // The signal goes to a WAIT that exists: wait for the gate to be reached.
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = ')" + id
                              + R"(' AND "refName" = 'gate' AND "status" = 'IN_PROGRESS')",
                            1));
  auto sig = f.api->signal(id, "go", R"({"by": "ann"})");
  CAF_REQUIRE(sig);
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");

  auto wf = f.get(id);
  CAF_REQUIRE(wf.is_object());
  auto want_output = boost::json::parse(
    R"({"last":3,"http":1,"child":"hi","dyn":{"d1":1,"d2":2},"by":"ann"})");
  CAF_CHECK(wf.at("output") == want_output);
  if (wf.at("output") != want_output)
    CAF_MESSAGE("output: " << boost::json::serialize(wf.at("output")));
  // Every task ended as it should; the case not taken never ran.
  std::multiset<std::string> seen;
  for (const auto& t : wf.at("tasks").as_array()) {
    const auto& o = t.as_object();
    auto ref = std::string{o.at("referenceTaskName").as_string()};
    auto it = o.at("iteration").as_int64();
    auto status = std::string{o.at("status").as_string()};
    seen.insert(ref + (it > 0 ? "@" + std::to_string(it) : "") + "=" + status);
  }
  std::multiset<std::string> want{
    "set=COMPLETED",    "prep=COMPLETED",   "route=COMPLETED",  "loop=COMPLETED",
    "body@1=COMPLETED", "count@1=COMPLETED", "body@2=COMPLETED", "count@2=COMPLETED",
    "body@3=COMPLETED", "count@3=COMPLETED", "fork=COMPLETED",   "a=COMPLETED",
    "hw=COMPLETED",     "child=COMPLETED",  "nap=COMPLETED",    "join=COMPLETED",
    "dyn=COMPLETED",    "d1=COMPLETED",     "d2=COMPLETED",     "dynjoin=COMPLETED",
    "gate=COMPLETED",   "shape=COMPLETED",  "stop=COMPLETED"};
  CAF_CHECK_EQUAL(seen.size(), want.size());
  CAF_CHECK(seen == want);
  if (seen != want)
    for (const auto& s : seen)
      CAF_MESSAGE("task " << s);
  // The sub-workflow ran as a workflow of its own and completed.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions"
                             WHERE "parentWorkflowId" = $1 AND "status" = 'COMPLETED')",
                          store::params::of(id)),
                  1);
  auto calls = http.requests();
  CAF_REQUIRE_EQUAL(calls.size(), 1u);
  CAF_CHECK_EQUAL(calls[0].method, "POST");
  CAF_CHECK_EQUAL(calls[0].body, R"({"from":1})");
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  CAF_CHECK(f.stop_node());
  // Nothing went wrong, so nothing was complained about: not even at the node's start,
  // before membership had said who owns the HTTP queue's partition.
  auto complaints = f.node_log_complaints();
  CAF_CHECK(complaints.empty());
  for (const auto& line : complaints)
    CAF_MESSAGE("node log: " << line);
}

// One evaluation runs at most flow::max_inline_steps_per_decide inline steps and then
// asks to be evaluated again (decide_again). A loop of inline tasks longer than that
// must go on in the next evaluation: with the workflow's DecideQueues row deleted
// after the first, nothing woke it and it stayed RUNNING after 500 iterations.
CAF_TEST(a loop of inline tasks longer than one evaluation runs to its end) {
  test::e2e_fixture f{"e2e_long_inline_loop"};
  f.start_node();
  f.define(R"([{"name": "e2e_long_loop", "version": 1, "tasks": [
    {"name": "loop", "taskReferenceName": "loop", "type": "DO_WHILE",
     "loopCondition": "$.loop['iteration'] < 1500",
     "loopOver": [{"name": "count", "taskReferenceName": "count", "type": "SET_VARIABLE",
                   "inputParameters": {"last": "${loop.output.iteration}"}}]}]}])");
  auto id = f.start("e2e_long_loop");
  CAF_REQUIRE_EQUAL(f.await_end(id, 30s), "COMPLETED");
  CAF_CHECK(f.get(id).at("variables").at("last") == 1500);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskExecutions"
                             WHERE "workflowId" = $1 AND "refName" = 'count')",
                          store::params::of(id)),
                  1500);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  CAF_CHECK(f.stop_node());
}
