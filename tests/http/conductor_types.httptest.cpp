#define CAF_SUITE http.conductor_types

// Conductor's NOOP, DECISION (both forms), SET_VARIABLE, EXCLUSIVE_JOIN, START_WORKFLOW,
// EVENT and HUMAN on a real node, without a worker: the outputs Conductor documents, the
// HUMAN task completed and failed through the API, the EVENT's message on a webhook sink
// and in the workflow's history, and the sinks nodeflow cannot reach refused at
// registration. And DYNAMIC, whose task a worker (played over HTTP) polls by the name the
// input gave.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_workflow.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([
  {"name": "tour_dynamic", "version": 1, "tasks": [
    {"name": "pick", "taskReferenceName": "pick", "type": "DYNAMIC",
     "dynamicTaskNameParam": "taskToRun",
     "inputParameters": {"taskToRun": "${workflow.input.how}", "parcel": 7}}],
   "outputParameters": {"tracking": "${pick.output.tracking}"}},
  {"name": "tour_child", "version": 1, "tasks": [
    {"name": "idle", "taskReferenceName": "idle", "type": "NOOP"}]},
  {"name": "tour", "version": 1, "tasks": [
    {"name": "begin", "taskReferenceName": "begin", "type": "NOOP"},
    {"name": "route", "taskReferenceName": "route", "type": "DECISION",
     "caseValueParam": "kind", "inputParameters": {"kind": "${workflow.input.kind}"},
     "decisionCases": {
       "a": [{"name": "set_a", "taskReferenceName": "set_a", "type": "SET_VARIABLE",
              "inputParameters": {"picked": "a"}}],
       "b": [{"name": "nb", "taskReferenceName": "nb", "type": "NOOP"}]}},
    {"name": "join1", "taskReferenceName": "join1", "type": "EXCLUSIVE_JOIN",
     "joinOn": ["set_a", "nb"]},
    {"name": "size", "taskReferenceName": "size", "type": "DECISION",
     "caseExpression": "$.n > 1 ? 'many' : 'one'", "inputParameters": {"n": "${workflow.input.n}"},
     "decisionCases": {
       "many": [{"name": "shout", "taskReferenceName": "shout", "type": "EVENT",
                 "sink": "conductor", "inputParameters": {"n": "${workflow.input.n}"}}]},
     "defaultCase": [{"name": "one", "taskReferenceName": "one", "type": "NOOP"}]},
    {"name": "join2", "taskReferenceName": "join2", "type": "EXCLUSIVE_JOIN",
     "joinOn": ["shout"], "defaultExclusiveJoinTask": ["one"]},
    {"name": "kick", "taskReferenceName": "kick", "type": "START_WORKFLOW",
     "inputParameters": {"startWorkflow": {"name": "tour_child", "correlationId": "kicked",
                                           "input": {"from": "${workflow.input.kind}"}}}},
    {"name": "notify", "taskReferenceName": "notify", "type": "EVENT",
     "sink": "conductor:tour_events", "inputParameters": {"kind": "${workflow.input.kind}"}},
    {"name": "approve", "taskReferenceName": "approve", "type": "HUMAN"}],
   "outputParameters": {
     "case1": "${route.output.caseOutput}", "case2": "${size.output.caseOutput}",
     "picked": "${workflow.variables.picked}", "joined": "${join2.output.event_produced}",
     "started": "${kick.output.workflowId}", "event": "${notify.output.event_produced}",
     "by": "${approve.output.by}"}}])";

struct fixture {
  test::e2e_fixture f{"http_conductor_types"};
  test::http_test_server sink;
  std::unique_ptr<test::http_client> http;
  fixture() {
    // Before the node starts: the relay reads its sinks when it starts.
    f.sql(R"(INSERT INTO "WebhookSinks" ("namespaceId", "url", "maxAttempts", "timeoutMs")
             VALUES ('00000000-0000-0000-0000-000000000001', $1, 5, 2000))",
          store::params::of(sink.url("/events")));
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(definitions);
  }
  boost::json::value workflow(const std::string& id) {
    return test::workflow_over_http(*http, id);
  }
  // The task of `ref` in the workflow's Conductor shape, or null.
  boost::json::value task(const std::string& id, const std::string& ref) {
    auto wf = workflow(id);
    for (const auto& t : wf.at("tasks").as_array())
      if (t.at("referenceTaskName").as_string() == ref)
        return t;
    return nullptr;
  }
  bool await_task(const std::string& id, const std::string& ref, const std::string& status) {
    return f.await([&] {
      auto t = task(id, ref);
      return !t.is_null() && t.at("status").as_string() == status;
    }, 20s);
  }
  std::string start(const std::string& input) {
    auto r = http->post("/api/workflow/tour?correlationId=c-1", input);
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.body;
  }
  // The webhook deliveries of `type` for workflow `id`.
  std::vector<boost::json::value> delivered(const std::string& type, const std::string& id) {
    std::vector<boost::json::value> out;
    for (const auto& r : sink.requests()) {
      boost::json::error_code ec;
      auto v = boost::json::parse(r.body, ec);
      if (!ec && v.is_object() && v.at("type").as_string() == type
          && v.at("workflowId").as_string() == id)
        out.push_back(v);
    }
    return out;
  }
};

std::string text(const boost::json::value& v) {
  return boost::json::serialize(v);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_conductor_types, fixture)

CAF_TEST(a workflow of Conductor system tasks runs to completion without a worker) {
  auto id = start(R"({"kind": "a", "n": 3})");
  CAF_REQUIRE(await_task(id, "approve", "IN_PROGRESS"));
  CAF_CHECK_EQUAL(workflow(id).at("status").as_string(), "RUNNING");
  // Everything before the HUMAN task ran at once, with Conductor's outputs.
  auto begin = task(id, "begin");
  CAF_CHECK_EQUAL(begin.at("taskType").as_string(), "NOOP");
  CAF_CHECK_EQUAL(begin.at("status").as_string(), "COMPLETED");
  CAF_CHECK_EQUAL(text(task(id, "route").at("outputData")), R"({"caseOutput":["a"]})");
  CAF_CHECK_EQUAL(task(id, "route").at("taskType").as_string(), "DECISION");
  CAF_CHECK(task(id, "nb").is_null());
  CAF_CHECK_EQUAL(task(id, "join1").at("status").as_string(), "COMPLETED");
  CAF_CHECK_EQUAL(text(task(id, "size").at("outputData")), R"({"caseOutput":["many"]})");
  CAF_CHECK(task(id, "one").is_null());
  auto shout = task(id, "shout");
  auto join2 = task(id, "join2");
  CAF_CHECK_EQUAL(text(join2.at("outputData")), text(shout.at("outputData")));
  CAF_CHECK_EQUAL(shout.at("outputData").at("event_produced").as_string(), "conductor:tour:shout");
  // START_WORKFLOW: completed with the id of a workflow that runs on its own.
  auto kick = task(id, "kick");
  CAF_CHECK_EQUAL(kick.at("status").as_string(), "COMPLETED");
  std::string child{kick.at("outputData").at("workflowId").as_string()};
  CAF_REQUIRE(flow::is_uuid(child));
  CAF_CHECK_EQUAL(f.await_end(child), "COMPLETED");
  auto started = workflow(child);
  CAF_CHECK_EQUAL(started.at("workflowName").as_string(), "tour_child");
  CAF_CHECK_EQUAL(started.at("correlationId").as_string(), "kicked");
  CAF_CHECK_EQUAL(started.at("input").at("from").as_string(), "a");
  CAF_CHECK(!started.as_object().contains("parentWorkflowId")
            || started.at("parentWorkflowId").is_null());
  // EVENT: the output Conductor gives, the message on the webhook sink and in the history.
  auto notify = task(id, "notify").at("outputData");
  CAF_CHECK_EQUAL(notify.at("event_produced").as_string(), "conductor:tour:tour_events");
  CAF_CHECK_EQUAL(notify.at("sink").as_string(), "conductor:tour_events");
  CAF_CHECK_EQUAL(notify.at("kind").as_string(), "a");
  CAF_CHECK_EQUAL(notify.at("workflowInstanceId").as_string(), id);
  CAF_CHECK_EQUAL(notify.at("workflowType").as_string(), "tour");
  CAF_CHECK_EQUAL(notify.at("workflowVersion").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(notify.at("correlationId").as_string(), "c-1");
  CAF_REQUIRE(f.await([&] { return delivered("event.published", id).size() == 2; }, 30s));
  for (const auto& e : delivered("event.published", id)) {
    const auto& p = e.at("payload");
    if (p.at("ref").as_string() != "notify")
      continue;
    CAF_CHECK_EQUAL(p.at("queue").as_string(), "conductor:tour:tour_events");
    CAF_CHECK_EQUAL(p.at("message").at("kind").as_string(), "a");
    CAF_CHECK_EQUAL(p.at("message").at("workflowInstanceId").as_string(), id);
    CAF_CHECK(!p.at("message").as_object().contains("event_produced"));
  }
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_COMPLETED'
                             AND "payload"->>'event_produced' = 'conductor:tour:tour_events')",
                          store::params::of(id)),
                  1);
  // HUMAN: completed through the API by its reference name.
  auto done = http->post("/api/tasks/" + id + "/approve/COMPLETED", R"({"by": "ann"})");
  CAF_REQUIRE_EQUAL(done.status, 200u);
  CAF_CHECK_EQUAL(done.body, std::string{task(id, "approve").at("taskId").as_string()});
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  auto out = workflow(id).at("output");
  CAF_CHECK_EQUAL(text(out.at("case1")), R"(["a"])");
  CAF_CHECK_EQUAL(text(out.at("case2")), R"(["many"])");
  CAF_CHECK_EQUAL(out.at("picked").as_string(), "a");
  CAF_CHECK_EQUAL(out.at("joined").as_string(), "conductor:tour:shout");
  CAF_CHECK_EQUAL(out.at("started").as_string(), child);
  CAF_CHECK_EQUAL(out.at("event").as_string(), "conductor:tour:tour_events");
  CAF_CHECK_EQUAL(out.at("by").as_string(), "ann");
  // The workflow's event stream shows the message with the EVENT task's completion.
  test::sse_reader stream{"127.0.0.1", f.http_port, "/api/workflow/" + id + "/events/stream"};
  boost::json::value seen;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (seen.is_null() && !stream.ended() && std::chrono::steady_clock::now() < deadline)
    if (auto ev = stream.next(200ms)) {
      auto data = boost::json::parse(ev->data);
      const auto& ref = data.at("taskRef");
      if (ev->type == "TASK_COMPLETED" && ref.is_string() && ref.as_string() == "notify")
        seen = data.at("payload");
    }
  CAF_REQUIRE(seen.is_object());
  CAF_CHECK_EQUAL(seen.at("event_produced").as_string(), "conductor:tour:tour_events");
  CAF_CHECK_EQUAL(seen.at("message").at("kind").as_string(), "a");
}

CAF_TEST(the other cases and a HUMAN task failed through the API) {
  auto id = start(R"({"kind": "b", "n": 1})");
  CAF_REQUIRE(await_task(id, "approve", "IN_PROGRESS"));
  CAF_CHECK_EQUAL(text(task(id, "route").at("outputData")), R"({"caseOutput":["b"]})");
  CAF_CHECK_EQUAL(task(id, "nb").at("status").as_string(), "COMPLETED");
  CAF_CHECK(task(id, "set_a").is_null());
  CAF_CHECK_EQUAL(text(task(id, "size").at("outputData")), R"({"caseOutput":["one"]})");
  CAF_CHECK_EQUAL(task(id, "join2").at("status").as_string(), "COMPLETED");
  CAF_CHECK(task(id, "shout").is_null());
  auto no = http->post("/api/tasks/" + id + "/approve/FAILED", R"({"by": "bob"})");
  CAF_REQUIRE_EQUAL(no.status, 200u);
  CAF_REQUIRE_EQUAL(f.await_end(id), "FAILED");
  CAF_CHECK_EQUAL(task(id, "approve").at("status").as_string(), "FAILED");
  // A task that is neither WAIT nor HUMAN is not completed by its reference name.
  check_error(http->post("/api/tasks/" + id + "/begin/COMPLETED", "{}"), 400);
}

CAF_TEST(definitions nodeflow cannot run are refused naming the field) {
  auto r = http->post("/api/metadata/workflow", R"({"name": "to_sqs", "version": 1, "tasks": [
    {"name": "e", "taskReferenceName": "e", "type": "EVENT", "sink": "sqs:orders"}]})");
  check_error(r, 400, "tasks[0].sink");
  CAF_CHECK(r.body.find("nodeflow has no sqs client") != std::string::npos);
  r = http->post("/api/metadata/workflow", R"({"name": "bad_case", "version": 1, "tasks": [
    {"name": "d", "taskReferenceName": "d", "type": "DECISION",
     "caseExpression": "function() { return 1; }",
     "decisionCases": {"1": [{"name": "n", "taskReferenceName": "n", "type": "NOOP"}]}}]})");
  check_error(r, 400, "tasks[0].caseExpression");
}

CAF_TEST(a DYNAMIC task runs as the task its input names on the queue of that name) {
  auto r = http->post("/api/workflow/tour_dynamic", R"({"how": "ship_by_drone"})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto id = r.body;
  boost::json::object leased;
  CAF_REQUIRE(f.await([&] {
    auto p = http->get("/api/tasks/poll/ship_by_drone?timeout=200&workerid=w1");
    if (p.status == 200u)
      leased = p.json().as_object();
    return !leased.empty();
  }, 20s));
  CAF_CHECK_EQUAL(leased.at("taskDefName").as_string(), "ship_by_drone");
  CAF_CHECK_EQUAL(leased.at("referenceTaskName").as_string(), "pick");
  CAF_CHECK_EQUAL(leased.at("inputData").at("parcel").to_number<int64_t>(), 7);
  boost::json::object result{{"taskId", leased.at("taskId")},
                             {"workflowInstanceId", leased.at("workflowInstanceId")},
                             {"status", "COMPLETED"},
                             {"outputData", {{"tracking", "D-1"}}}};
  CAF_REQUIRE_EQUAL(http->post("/api/tasks", boost::json::serialize(result)).status, 200u);
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  CAF_CHECK_EQUAL(workflow(id).at("output").at("tracking").as_string(), "D-1");
}

CAF_TEST_FIXTURE_SCOPE_END()
