#define CAF_SUITE http.workflows

// Conductor's workflow routes against a real node: starts (by name, by StartWorkflowRequest
// with each idempotency strategy, start-and-wait), the Workflow and Task shapes, the
// operator commands with Conductor's statuses, search with its query clauses and cursor,
// and signals; every refusal names its field and writes nothing.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_workflow.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

struct fixture {
  test::e2e_fixture f{"http_workflows"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(R"([
      {"name": "gate", "version": 1, "tasks": [
        {"name": "hold", "taskReferenceName": "hold", "type": "WAIT",
         "inputParameters": {"signal": "go"}}]},
      {"name": "quick", "version": 1, "tasks": [
        {"name": "set", "taskReferenceName": "set", "type": "SET_VARIABLE",
         "inputParameters": {"done": true}}]},
      {"name": "unpolled", "version": 1, "tasks": [
        {"name": "wf_nobody_polls", "taskReferenceName": "work"}]}])");
  }
  int64_t executions() { return f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"); }
  boost::json::value workflow(const std::string& id) {
    return test::workflow_over_http(*http, id);
  }
  std::string status(const std::string& id) { return test::status_over_http(*http, id); }
  bool await_status(const std::string& id, const std::string& want) {
    return f.await([&] { return status(id) == want; }, 20s);
  }
  std::string start_gate(const std::string& query = {}) {
    auto r = http->post("/api/workflow/gate" + query, R"({"x":1})");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.body;
  }
};

// How many events of one type the workflow's history holds (SQL for await_count).
std::string history(const std::string& id, const std::string& type) {
  return R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = ')" + id
         + R"(' AND "eventType" = ')" + type + "'";
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_workflows, fixture)

CAF_TEST(a workflow started by name reads back in the Conductor shape) {
  auto r = http->post("/api/workflow/gate?correlationId=c-1&priority=5", R"({"x":1})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK_EQUAL(r.header("content-type"), "text/plain");
  auto id = r.body;
  CAF_REQUIRE(flow::is_uuid(id));
  CAF_REQUIRE(f.await([&] { return workflow(id).at("tasks").as_array().size() == 1; }, 20s));
  auto wf = workflow(id);
  CAF_CHECK_EQUAL(wf.at("workflowId").as_string(), id);
  CAF_CHECK_EQUAL(wf.at("workflowName").as_string(), "gate");
  CAF_CHECK_EQUAL(wf.at("workflowVersion").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(wf.at("status").as_string(), "RUNNING");
  CAF_CHECK_EQUAL(wf.at("correlationId").as_string(), "c-1");
  CAF_CHECK_EQUAL(wf.at("priority").to_number<int64_t>(), 5);
  CAF_CHECK_EQUAL(wf.at("input").at("x").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(wf.at("endTime").to_number<int64_t>(), 0);
  CAF_CHECK(wf.at("startTime").to_number<int64_t>() > 0);
  CAF_CHECK(wf.at("updateTime").to_number<int64_t>() >= wf.at("startTime").to_number<int64_t>());
  const auto& t = wf.at("tasks").as_array()[0];
  CAF_CHECK_EQUAL(t.at("taskType").as_string(), "WAIT");
  CAF_CHECK_EQUAL(t.at("referenceTaskName").as_string(), "hold");
  CAF_CHECK_EQUAL(t.at("status").as_string(), "IN_PROGRESS");
  CAF_CHECK_EQUAL(t.at("seq").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(t.at("retryCount").to_number<int64_t>(), 0);
  CAF_CHECK_EQUAL(t.at("workflowInstanceId").as_string(), id);
  CAF_CHECK_EQUAL(t.at("workflowType").as_string(), "gate");
  CAF_CHECK(flow::is_uuid(std::string{t.at("taskId").as_string()}));
  auto bare = http->get("/api/workflow/" + id + "?includeTasks=false");
  CAF_REQUIRE_EQUAL(bare.status, 200u);
  CAF_CHECK(!bare.json().as_object().contains("tasks"));
}

CAF_TEST(refused starts name the field and write nothing) {
  check_error(http->post("/api/workflow/nobody", "{}"), 404);
  check_error(http->post("/api/workflow/gate?priority=100", "{}"), 400, "priority");
  check_error(http->post("/api/workflow/gate?version=x", "{}"), 400, "version");
  check_error(http->post("/api/workflow/gate", "[1]"), 400, "body");
  check_error(http->request("POST", "/api/workflow/gate", "x=1", "text/plain"), 415,
              "Content-Type");
  check_error(http->post("/api/workflow", R"({"version":1})"), 400, "name");
  check_error(http->post("/api/workflow", R"({"name":"gate","taskToDomain":{"*":"blue,green"}})"), 400,
              "taskToDomain");
  check_error(http->post("/api/workflow", R"({"name":"gate","workflowDef":{"name":"x"}})"), 400,
              "workflowDef");
  check_error(http->post("/api/workflow",
                         R"({"name":"gate","externalInputPayloadStoragePath":"s3://x"})"),
              400, "externalInputPayloadStoragePath");
  check_error(http->post("/api/workflow", R"({"name":"gate","colour":"red"})"), 400, "colour");
  check_error(http->post("/api/workflow", R"({"name":"gate","idempotencyStrategy":"MAYBE"})"),
              400, "idempotencyStrategy");
  check_error(http->post("/api/workflow", R"({"name":"gate","input":[1]})"), 400, "input");
  CAF_CHECK_EQUAL(executions(), 0);
  // Null and empty values of the fields nodeflow does not implement are fine.
  auto ok = http->post("/api/workflow", R"({"name":"gate","taskToDomain":{},"workflowDef":null,
    "externalInputPayloadStoragePath":"","input":null,"priority":null})");
  CAF_CHECK_EQUAL(ok.status, 200u);
  CAF_CHECK_EQUAL(executions(), 1);
}

CAF_TEST(idempotency strategies answer as Conductor does) {
  auto body = [](const char* strategy) {
    return std::string{R"({"name":"gate","input":{"a":1},"idempotencyKey":"k-1")"}
           + (strategy ? std::string{R"(,"idempotencyStrategy":")"} + strategy + "\"" : "")
           + "}";
  };
  auto first = http->post("/api/workflow", body(nullptr));
  CAF_REQUIRE_EQUAL(first.status, 200u);
  auto id = first.body;
  check_error(http->post("/api/workflow", body(nullptr)), 409, "idempotencyKey");
  check_error(http->post("/api/workflow", body("FAIL")), 409, "idempotencyKey");
  auto existing = http->post("/api/workflow", body("RETURN_EXISTING"));
  CAF_CHECK_EQUAL(existing.status, 200u);
  CAF_CHECK_EQUAL(existing.body, id);
  check_error(http->post("/api/workflow", body("FAIL_ON_RUNNING")), 409, "idempotencyKey");
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + id + "?reason=done").status, 200u);
  auto ended = http->post("/api/workflow", body("FAIL_ON_RUNNING"));
  CAF_CHECK_EQUAL(ended.status, 200u);
  CAF_CHECK_EQUAL(ended.body, id);
  CAF_CHECK_EQUAL(executions(), 1);
}

CAF_TEST(an unknown or malformed workflow id is 404 or 400) {
  check_error(http->get("/api/workflow/0190a0b0-0000-7000-8000-000000000000"), 404);
  check_error(http->get("/api/workflow/not-an-id"), 400, "workflowId");
  check_error(http->request("PUT", "/api/workflow/not-an-id/pause"), 400, "workflowId");
  check_error(http->request("PUT", "/api/workflow/0190a0b0-0000-7000-8000-000000000000/pause"),
              404);
  check_error(http->del("/api/workflow/0190a0b0-0000-7000-8000-000000000000"), 404);
  check_error(http->get("/api/workflow/" + start_gate() + "?includeTasks=maybe"), 400,
              "includeTasks");
}

CAF_TEST(pause resume terminate and retry answer with the Conductor statuses) {
  auto id = start_gate();
  CAF_REQUIRE(await_status(id, "RUNNING"));
  auto paused = http->request("PUT", "/api/workflow/" + id + "/pause");
  CAF_CHECK_EQUAL(paused.status, 200u);
  CAF_CHECK(paused.body.empty());
  CAF_CHECK_EQUAL(status(id), "PAUSED");
  CAF_CHECK_EQUAL(http->request("PUT", "/api/workflow/" + id + "/resume").status, 200u);
  CAF_CHECK_EQUAL(status(id), "RUNNING");
  check_error(http->request("POST", "/api/workflow/" + id + "/retry"), 409);
  CAF_CHECK_EQUAL(http->del("/api/workflow/" + id + "?reason=stop%20it").status, 200u);
  auto wf = workflow(id);
  CAF_CHECK_EQUAL(wf.at("status").as_string(), "TERMINATED");
  CAF_CHECK_EQUAL(wf.at("reasonForIncompletion").as_string(), "stop it");
  CAF_CHECK(wf.at("endTime").to_number<int64_t>() > 0);
  CAF_CHECK_EQUAL(wf.at("tasks").as_array()[0].at("status").as_string(), "CANCELED");
  check_error(http->del("/api/workflow/" + id), 409);
  check_error(http->request("PUT", "/api/workflow/" + id + "/pause"), 409);
  check_error(http->request("POST", "/api/workflow/" + id + "/retry?resumeSubworkflowTasks=true"),
              400, "resumeSubworkflowTasks");
  auto retried = http->request("POST", "/api/workflow/" + id + "/retry");
  CAF_CHECK_EQUAL(retried.status, 204u);
  CAF_CHECK(await_status(id, "RUNNING"));
}

// DELETE /api/workflow/{id}/remove: an ended workflow's rows go, in every table that holds
// them, and nothing of another workflow; a retry with its X-Request-Id is answered as the
// first; the idempotency key that named it starts a new workflow; the audit keeps it.
CAF_TEST(remove deletes an ended workflow and its history and nothing else) {
  auto body = R"({"name":"gate","input":{"a":1},"idempotencyKey":"rm-1"})";
  auto started = http->post("/api/workflow", body);
  CAF_REQUIRE_EQUAL(started.status, 200u);
  auto id = started.body;
  auto other = start_gate();
  CAF_REQUIRE(await_status(id, "RUNNING"));
  CAF_REQUIRE(await_status(other, "RUNNING"));
  auto rows = [&](const std::string& wf) {
    return f.count(R"(SELECT (SELECT count(*) FROM "WorkflowExecutions" WHERE "id" = $1)
                          + (SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1)
                          + (SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)
                          + (SELECT count(*) FROM "Payloads" WHERE "workflowId" = $1)
                          + (SELECT count(*) FROM "IdempotencyKeys" WHERE "workflowId" = $1))",
                   store::params::of(wf));
  };
  const auto other_rows = rows(other);
  CAF_REQUIRE(rows(id) > 3);
  auto remove = "/api/workflow/" + id + "/remove";
  // Conductor's default archives; nodeflow has no archive to keep it in.
  check_error(http->del(remove), 400, "archiveWorkflow");
  check_error(http->del(remove + "?archiveWorkflow=true"), 400, "archiveWorkflow");
  check_error(http->del(remove + "?archiveWorkflow=maybe"), 400, "archiveWorkflow");
  // Not while it runs: nothing is deleted.
  check_error(http->del(remove + "?archiveWorkflow=false"), 409);
  CAF_CHECK_EQUAL(status(id), "RUNNING");
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + id).status, 200u);
  auto with_id = [&](const std::string& request_id) {
    return http->request("DELETE", remove + "?archiveWorkflow=false", "", "application/json",
                         {{"X-Request-Id", request_id}});
  };
  auto removed = with_id("rm-request-1");
  CAF_CHECK_EQUAL(removed.status, 200u);
  CAF_CHECK(removed.body.empty());
  CAF_CHECK_EQUAL(rows(id), 0);
  CAF_CHECK_EQUAL(rows(other), other_rows);
  check_error(http->get("/api/workflow/" + id), 404);
  // A retry of the same request is answered as the first; another request finds nothing.
  CAF_CHECK_EQUAL(with_id("rm-request-1").status, 200u);
  check_error(http->del(remove + "?archiveWorkflow=false"), 404);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents"
                              WHERE "action" = 'workflow.remove' AND "target" = $1)",
                          store::params::of(id)),
                  1);
  // The key is free again: the same start makes a new workflow.
  auto again = http->post("/api/workflow", body);
  CAF_CHECK_EQUAL(again.status, 200u);
  CAF_CHECK_NOT_EQUAL(again.body, id);
  CAF_CHECK_EQUAL(status(other), "RUNNING");
}

CAF_TEST(signals complete a WAIT and rerun and restart run an ended workflow again) {
  auto id = start_gate();
  CAF_REQUIRE(f.await([&] { return workflow(id).at("tasks").as_array().size() == 1; }, 20s));
  check_error(http->post("/api/workflow/" + id + "/signal/go", "{bad"), 400, "body");
  check_error(http->post("/api/workflow/0190a0b0-0000-7000-8000-000000000000/signal/go", "{}"),
              404);
  auto sig = http->post("/api/workflow/" + id + "/signal/go", R"({"ok":true})");
  CAF_REQUIRE_EQUAL(sig.status, 200u);
  CAF_CHECK(sig.json().at("delivered").as_bool());
  CAF_REQUIRE(await_status(id, "COMPLETED"));
  auto task_id = std::string{workflow(id).at("tasks").as_array()[0].at("taskId").as_string()};
  check_error(http->request("POST", "/api/workflow/" + id + "/restart?useLatestDefinitions=true"),
              400, "useLatestDefinitions");
  check_error(http->post("/api/workflow/" + id + "/rerun", "{}"), 400, "reRunFromTaskId");
  check_error(http->post("/api/workflow/" + id + "/rerun",
                         R"({"reRunFromTaskId":")" + task_id + R"(","workflowInput":{"y":2}})"),
              400, "workflowInput");
  check_error(http->post("/api/workflow/" + id + "/rerun",
                         R"({"reRunFromTaskId":"0190a0b0-0000-7000-8000-000000000000"})"),
              404);
  auto rerun = http->post("/api/workflow/" + id + "/rerun",
                          R"({"reRunFromTaskId":")" + task_id + R"(","taskInput":{"signal":"go"}})");
  CAF_REQUIRE_EQUAL(rerun.status, 200u);
  CAF_CHECK_EQUAL(rerun.body, id);
  // The rerun schedules the task again (under its id), with the input given.
  CAF_REQUIRE(f.await_count(history(id, "WORKFLOW_RERUN"), 1, 20s));
  // Whether the signal delivered before still counts is the engine's business: end it.
  auto completed = [&] {
    auto s = status(id);
    if (s == "RUNNING")
      http->post("/api/workflow/" + id + "/signal/go", "");
    return s == "COMPLETED";
  };
  CAF_REQUIRE(f.await(completed, 20s));
  auto restarted = http->request("POST", "/api/workflow/" + id + "/restart");
  CAF_CHECK_EQUAL(restarted.status, 204u);
  CAF_CHECK(f.await_count(history(id, "WORKFLOW_RESTARTED"), 1, 20s));
}

CAF_TEST(execute starts and waits for the end or the time given) {
  // A workflow blocked at a WAIT is answered at once (http.signals tries the other stops).
  auto done = http->post("/api/workflow/execute/quick/1?requestId=r-1", "");
  CAF_REQUIRE_EQUAL(done.status, 200u);
  auto v = done.json();
  CAF_CHECK_EQUAL(v.at("status").as_string(), "COMPLETED");
  CAF_CHECK_EQUAL(v.at("requestId").as_string(), "r-1");
  CAF_CHECK_EQUAL(v.at("tasks").as_array()[0].at("taskType").as_string(), "SET_VARIABLE");
  auto t0 = std::chrono::steady_clock::now();
  auto waiting = http->post("/api/workflow/execute/unpolled/1?waitForSeconds=1",
                            R"({"input":{"x":2},"correlationId":"c-9"})");
  CAF_REQUIRE_EQUAL(waiting.status, 200u);
  CAF_CHECK(std::chrono::steady_clock::now() - t0 >= 900ms);
  auto waited = waiting.json();
  CAF_CHECK_EQUAL(waited.at("status").as_string(), "RUNNING");
  CAF_CHECK_EQUAL(waited.at("correlationId").as_string(), "c-9");
  auto before = executions();
  check_error(http->post("/api/workflow/execute/gate/x", ""), 400, "version");
  check_error(http->post("/api/workflow/execute/gate/1", R"({"name":"quick"})"), 400, "name");
  check_error(http->post("/api/workflow/execute/gate/1?waitForSeconds=-1", ""), 400,
              "waitForSeconds");
  check_error(http->post("/api/workflow/execute/gate/9", ""), 404);
  CAF_CHECK_EQUAL(executions(), before);
}

CAF_TEST(search filters by query clauses and pages by cursor) {
  auto a = start_gate("?correlationId=first");
  auto b = start_gate();
  auto q = http->post("/api/workflow/quick", "{}").body;
  CAF_REQUIRE(await_status(q, "COMPLETED"));
  auto all = http->get("/api/workflow/search?query=workflowType%20%3D%20gate");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  auto v = all.json();
  CAF_CHECK_EQUAL(v.at("totalHits").to_number<int64_t>(), 2);
  CAF_REQUIRE_EQUAL(v.at("results").as_array().size(), 2u);
  const auto& s = v.at("results").as_array()[0];
  CAF_CHECK_EQUAL(s.at("workflowId").as_string(), b); // newest first
  CAF_CHECK_EQUAL(s.at("workflowType").as_string(), "gate");
  CAF_CHECK_EQUAL(s.at("version").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(s.at("status").as_string(), "RUNNING");
  CAF_CHECK(s.at("startTime").as_string().size() == 24); // 2024-05-01T12:00:00.123Z
  CAF_CHECK(v.at("nextCursor").is_null());
  auto by_corr = http->get("/api/workflow/search?correlationId=first").json();
  CAF_REQUIRE_EQUAL(by_corr.at("results").as_array().size(), 1u);
  CAF_CHECK_EQUAL(by_corr.at("results").as_array()[0].at("workflowId").as_string(), a);
  auto both = http->get("/api/workflow/search?query=status%20IN%20(COMPLETED,PAUSED)%20AND%20"
                        "startTime%20%3E%200");
  CAF_REQUIRE_EQUAL(both.status, 200u);
  auto both_v = both.json();
  CAF_REQUIRE_EQUAL(both_v.at("results").as_array().size(), 1u);
  CAF_CHECK_EQUAL(both_v.at("results").as_array()[0].at("workflowId").as_string(), q);
  auto page1 = http->get("/api/workflow/search?size=2");
  CAF_REQUIRE_EQUAL(page1.status, 200u);
  CAF_REQUIRE_EQUAL(page1.json().at("results").as_array().size(), 2u);
  auto cursor = std::string{page1.json().at("nextCursor").as_string()};
  auto page2 = http->get("/api/workflow/search?size=2&cursor=" + cursor).json();
  CAF_REQUIRE_EQUAL(page2.at("results").as_array().size(), 1u);
  CAF_CHECK_EQUAL(page2.at("results").as_array()[0].at("workflowId").as_string(), a);
  check_error(http->get("/api/workflow/search?query=input.x%20%3D%201"), 400, "query");
  check_error(http->get("/api/workflow/search?query=status%20%3D%20DONE"), 400, "query");
  // OR is refused, not read as part of a value (which would match nothing).
  check_error(http->get("/api/workflow/search?query=workflowType%20%3D%20gate%20OR%20status%20%3D%20RUNNING"),
              400, "query");
  check_error(http->get("/api/workflow/search?start=10"), 400, "start");
  check_error(http->get("/api/workflow/search?size=0"), 400, "size");
  check_error(http->get("/api/workflow/search?freeText=hello"), 400, "freeText");
  check_error(http->get("/api/workflow/search?sort=workflowId:ASC"), 400, "sort");
  check_error(http->get("/api/workflow/search?cursor=nope"), 400, "cursor");
}

CAF_TEST_FIXTURE_SCOPE_END()
