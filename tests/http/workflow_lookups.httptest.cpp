#define CAF_SUITE http.workflow_lookups

// Conductor's lookups and bulk commands against a real node: a workflow's status summary,
// a definition's running workflows, the workflows of correlation ids (one, several, several
// definitions), and pause, resume, terminate, retry and restart on many workflows at once,
// each refusal named per workflow; a task skipped ahead and variables set from outside.

#include <caf/test/dsl.hpp>

#include <algorithm>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_node.hpp"
#include "tests/support/http_workflow.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

constexpr const char* unknown_id = "0190a0b0-0000-7000-8000-000000000000";

constexpr const char* definitions = R"([
      {"name": "gate", "version": 1, "tasks": [
        {"name": "hold", "taskReferenceName": "hold", "type": "WAIT",
         "inputParameters": {"signal": "go"}}]},
      {"name": "gate", "version": 2, "tasks": [
        {"name": "hold", "taskReferenceName": "hold", "type": "WAIT",
         "inputParameters": {"signal": "go"}}]},
      {"name": "steps", "version": 1, "tasks": [
        {"name": "first", "taskReferenceName": "first", "type": "WAIT",
         "inputParameters": {"signal": "go"}},
        {"name": "second", "taskReferenceName": "second", "type": "WAIT",
         "inputParameters": {"signal": "never"}},
        {"name": "third", "taskReferenceName": "third", "type": "SET_VARIABLE",
         "inputParameters": {"seen": "${second.output.note}"}}]},
      {"name": "quick", "version": 1, "outputParameters": {"done": "${workflow.input.x}"},
       "tasks": [
        {"name": "set", "taskReferenceName": "set", "type": "SET_VARIABLE",
         "inputParameters": {"seen": true}}]}])";

struct fixture : test::http_node {
  fixture() : http_node{"http_workflow_lookups", definitions} {}
  std::string start(const std::string& path) {
    auto r = http->post(path, R"({"x":1})");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.body;
  }
  std::string status(const std::string& id) { return test::status_over_http(*http, id); }
  bool await_status(const std::string& id, const std::string& want) {
    return f.await([&] { return status(id) == want; }, 20s);
  }
  json::value ok_json(const test::http_reply& r) {
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.json();
  }
};

std::vector<std::string> strings(const json::value& v) {
  std::vector<std::string> out;
  for (const auto& s : v.as_array())
    out.emplace_back(s.as_string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> ids_of(const json::value& workflows) {
  std::vector<std::string> out;
  for (const auto& w : workflows.as_array())
    out.emplace_back(w.at("workflowId").as_string());
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_workflow_lookups, fixture)

CAF_TEST(a workflow status summary answers what it is asked for) {
  auto id = start("/api/workflow/quick?correlationId=c-s");
  CAF_REQUIRE(await_status(id, "COMPLETED"));
  auto bare = ok_json(http->get("/api/workflow/" + id + "/status")).as_object();
  CAF_CHECK_EQUAL(bare.at("workflowId").as_string(), id);
  CAF_CHECK_EQUAL(bare.at("correlationId").as_string(), "c-s");
  CAF_CHECK_EQUAL(bare.at("status").as_string(), "COMPLETED");
  CAF_CHECK(!bare.contains("output"));
  CAF_CHECK(!bare.contains("variables"));
  auto full = ok_json(http->get("/api/workflow/" + id
                                + "/status?includeOutput=true&includeVariables=true"))
                .as_object();
  CAF_CHECK_EQUAL(full.at("output").at("done").to_number<int64_t>(), 1);
  CAF_CHECK(full.at("variables").at("seen").as_bool());
  check_error(http->get("/api/workflow/" + std::string{unknown_id} + "/status"), 404);
  check_error(http->get("/api/workflow/nope/status"), 400, "workflowId");
  check_error(http->get("/api/workflow/" + id + "/status?includeOutput=maybe"), 400,
              "includeOutput");
}

CAF_TEST(running lists the live workflows of one version and a range lists every status) {
  // A minute either side of the starts: a workflow's start time is the node's estimate of
  // Postgres's clock, which may differ from Postgres's own by some milliseconds.
  auto t0 = f.count("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 60000");
  auto running = start("/api/workflow/gate?version=1");
  auto paused = start("/api/workflow/gate?version=1");
  auto ended = start("/api/workflow/gate?version=1");
  auto other_version = start("/api/workflow/gate?version=2");
  CAF_REQUIRE_EQUAL(http->request("PUT", "/api/workflow/" + paused + "/pause").status, 200u);
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + ended).status, 200u);
  CAF_CHECK_EQUAL(strings(ok_json(http->get("/api/workflow/running/gate"))),
                  sorted({running, paused}));
  CAF_CHECK_EQUAL(strings(ok_json(http->get("/api/workflow/running/gate?version=2"))),
                  std::vector<std::string>{other_version});
  CAF_CHECK(ok_json(http->get("/api/workflow/running/nothing")).as_array().empty());
  auto t1 = f.count("SELECT ceil(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 60000");
  auto range = "&startTime=" + std::to_string(t0) + "&endTime=" + std::to_string(t1);
  CAF_CHECK_EQUAL(strings(ok_json(http->get("/api/workflow/running/gate?version=1" + range))),
                  sorted({running, paused, ended}));
  CAF_CHECK(ok_json(http->get("/api/workflow/running/gate?startTime=1&endTime=1000"))
              .as_array()
              .empty());
  check_error(http->get("/api/workflow/running/gate?startTime=" + std::to_string(t0)), 400,
              "endTime");
  check_error(http->get("/api/workflow/running/gate?version=0"), 400, "version");
}

CAF_TEST(correlated answers the workflows of each correlation id) {
  auto live = start("/api/workflow/gate?correlationId=order-1");
  auto ended = start("/api/workflow/gate?correlationId=order-1");
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + ended).status, 200u);
  auto other = start("/api/workflow/gate?correlationId=order-2");
  auto quick = start("/api/workflow/quick?correlationId=order-1");
  CAF_REQUIRE(await_status(quick, "COMPLETED"));

  auto one = ok_json(http->get("/api/workflow/gate/correlated/order-1"));
  CAF_CHECK_EQUAL(ids_of(one), std::vector<std::string>{live});
  CAF_CHECK(!one.as_array()[0].as_object().contains("tasks"));
  CAF_CHECK_EQUAL(one.as_array()[0].at("input").at("x").to_number<int64_t>(), 1);
  auto closed = ok_json(
    http->get("/api/workflow/gate/correlated/order-1?includeClosed=true&includeTasks=true"));
  CAF_CHECK_EQUAL(ids_of(closed), (std::vector<std::string>{ended, live}));
  CAF_CHECK_EQUAL(closed.as_array()[0].at("tasks").as_array().size(), 1u);

  auto several = ok_json(http->post("/api/workflow/gate/correlated?includeClosed=true",
                                    R"(["order-1","order-2","order-9","order-1"])"));
  CAF_CHECK_EQUAL(several.as_object().size(), 3u);
  CAF_CHECK_EQUAL(ids_of(several.at("order-1")), (std::vector<std::string>{ended, live}));
  CAF_CHECK_EQUAL(ids_of(several.at("order-2")), std::vector<std::string>{other});
  CAF_CHECK(several.at("order-9").as_array().empty());

  auto batch = ok_json(http->post(
    "/api/workflow/correlated/batch?includeClosed=true",
    R"({"workflowNames":["gate","quick"],"correlationIds":["order-1"]})"));
  CAF_CHECK_EQUAL(ids_of(batch.at("order-1")), (std::vector<std::string>{quick, ended, live}));

  check_error(http->post("/api/workflow/gate/correlated", R"({"a":1})"), 400, "body");
  check_error(http->post("/api/workflow/gate/correlated", R"(["ok", 7])"), 400, "body[1]");
  check_error(http->post("/api/workflow/correlated/batch", R"({"correlationIds":["a"]})"), 400,
              "workflowNames");
  check_error(http->post("/api/workflow/correlated/batch",
                         R"({"workflowNames":["gate"],"correlationIds":["a"],"size":3})"),
              400, "size");
  check_error(http->get("/api/workflow/gate/correlated/order-1?includeTasks=2"), 400,
              "includeTasks");
}

CAF_TEST(bulk commands apply to each workflow and name why the others were refused) {
  auto a = start("/api/workflow/gate");
  auto b = start("/api/workflow/gate");
  auto body = R"([")" + a + R"(",")" + b + R"(","not-an-id",")" + unknown_id + R"(",")" + a
              + R"("])";
  auto paused = ok_json(http->request("PUT", "/api/workflow/bulk/pause", body));
  CAF_CHECK_EQUAL(strings(paused.at("bulkSuccessfulResults")), sorted({a, b}));
  const auto& errors = paused.at("bulkErrorResults").as_object();
  CAF_CHECK_EQUAL(errors.size(), 2u);
  CAF_CHECK(errors.contains("not-an-id"));
  CAF_CHECK(errors.contains(unknown_id));
  CAF_CHECK_EQUAL(status(a), "PAUSED");
  CAF_CHECK_EQUAL(status(b), "PAUSED");

  // A retried request (the same X-Request-Id) is applied once and answered alike.
  test::http_client::header_list rid{{"X-Request-Id", "bulk-resume-1"}};
  for (int i = 0; i < 2; ++i) {
    auto resumed = ok_json(http->request("PUT", "/api/workflow/bulk/resume",
                                         R"([")" + a + R"(",")" + b + R"("])",
                                         "application/json", rid));
    CAF_CHECK_EQUAL(strings(resumed.at("bulkSuccessfulResults")), sorted({a, b}));
  }
  CAF_CHECK_EQUAL(status(a), "RUNNING");

  auto restart = ok_json(http->post("/api/workflow/bulk/restart", R"([")" + a + R"("])"));
  CAF_CHECK(restart.at("bulkErrorResults").as_object().contains(a));
  auto ended = ok_json(http->post("/api/workflow/bulk/terminate?reason=cleanup",
                                  R"([")" + a + R"(",")" + b + R"("])"));
  CAF_CHECK_EQUAL(strings(ended.at("bulkSuccessfulResults")), sorted({a, b}));
  auto wf = test::workflow_over_http(*http, b);
  CAF_CHECK_EQUAL(wf.at("status").as_string(), "TERMINATED");
  CAF_CHECK_EQUAL(wf.at("reasonForIncompletion").as_string(), "cleanup");
  // An ended workflow cannot be paused: refused for each, with the reason.
  auto refused = ok_json(http->request("PUT", "/api/workflow/bulk/pause", R"([")" + a + R"("])"));
  CAF_CHECK(refused.at("bulkSuccessfulResults").as_array().empty());
  CAF_CHECK(refused.at("bulkErrorResults").at(a).as_string().size() > 0);
  auto retried = ok_json(http->post("/api/workflow/bulk/retry", R"([")" + a + R"("])"));
  CAF_CHECK_EQUAL(strings(retried.at("bulkSuccessfulResults")), std::vector<std::string>{a});
  CAF_CHECK(await_status(a, "RUNNING"));
  auto restarted = ok_json(http->post("/api/workflow/bulk/restart", R"([")" + b + R"("])"));
  CAF_CHECK_EQUAL(strings(restarted.at("bulkSuccessfulResults")), std::vector<std::string>{b});
  CAF_CHECK(await_status(b, "RUNNING"));

  std::string many = "[";
  for (int i = 0; i <= 1000; ++i)
    many += std::string{i ? "," : ""} + "\"" + unknown_id + "\"";
  many += "]";
  check_error(http->request("PUT", "/api/workflow/bulk/pause", many), 400, "body");
  check_error(http->request("PUT", "/api/workflow/bulk/pause", R"({"ids":[]})"), 400, "body");
  check_error(http->request("PUT", "/api/workflow/bulk/pause", R"([1])"), 400, "body[0]");
  check_error(http->post("/api/workflow/bulk/terminate?triggerFailureWorkflow=true", "[]"), 400,
              "triggerFailureWorkflow");
  check_error(http->post("/api/workflow/bulk/restart?useLatestDefinitions=true", "[]"), 400,
              "useLatestDefinitions");
  CAF_CHECK_EQUAL(status(a), "RUNNING");

  // Removal in bulk: without archiving only; a running workflow is refused, an ended one goes.
  check_error(http->post("/api/workflow/bulk/delete", "[]"), 400, "archiveWorkflow");
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + b).status, 200u);
  auto removed = ok_json(http->post("/api/workflow/bulk/delete?archiveWorkflow=false",
                                    R"([")" + a + R"(",")" + b + R"("])"));
  CAF_CHECK_EQUAL(strings(removed.at("bulkSuccessfulResults")), std::vector<std::string>{b});
  CAF_CHECK(removed.at("bulkErrorResults").as_object().contains(a));
  CAF_CHECK_EQUAL(status(a), "RUNNING");
  check_error(http->get("/api/workflow/" + b), 404);
}

CAF_TEST(skipping a task ahead lets the workflow pass it) {
  auto id = start("/api/workflow/steps");
  CAF_REQUIRE(f.await([&] {
    return test::workflow_over_http(*http, id).at("tasks").as_array().size() == 1;
  }, 20s));
  check_error(http->put("/api/workflow/" + id + "/skiptask/first", "{}"), 409);
  check_error(http->put("/api/workflow/" + id + "/skiptask/nope", "{}"), 409);
  check_error(http->put("/api/workflow/" + id + "/skiptask/second", R"({"taskOutput":[1]})"),
              400, "taskOutput");
  check_error(http->put("/api/workflow/" + id + "/skiptask/second", R"({"extra":1})"), 400,
              "extra");
  // The request as the Go and older Python clients send it, in the query.
  check_error(http->put("/api/workflow/" + id + "/skiptask/second?skipTaskRequest=%7Bmap%5Ba",
                        ""),
              400, "skipTaskRequest");
  check_error(http->put("/api/workflow/" + id
                          + "/skiptask/second?skipTaskRequest=%7B%22taskOutput%22%3A%7B%7D%7D",
                        R"({"taskOutput":{"note":"skipped"}})"),
              400, "skipTaskRequest");
  auto skipped = http->put("/api/workflow/" + id + "/skiptask/second?skipTaskRequest="
                             "%7B%22taskInput%22%3A%7B%22why%22%3A%22manual%22%7D%2C"
                             "%22taskOutput%22%3A%7B%22note%22%3A%22skipped%22%7D%7D",
                           "");
  CAF_REQUIRE_EQUAL(skipped.status, 200u);
  CAF_REQUIRE_EQUAL(http->post("/api/workflow/" + id + "/signal/go", "{}").status, 200u);
  CAF_REQUIRE(await_status(id, "COMPLETED"));
  auto wf = test::workflow_over_http(*http, id);
  CAF_CHECK_EQUAL(wf.at("variables").at("seen").as_string(), "skipped");
  bool found = false;
  for (const auto& t : wf.at("tasks").as_array())
    if (t.at("referenceTaskName").as_string() == "second") {
      found = true;
      CAF_CHECK_EQUAL(t.at("status").as_string(), "SKIPPED");
      CAF_CHECK_EQUAL(t.at("inputData").at("why").as_string(), "manual");
    }
  CAF_CHECK(found);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = ')" + id
                          + R"(' AND "eventType" = 'TASK_SKIPPED')"),
                  1);
  // Go's rendering of an empty request is read as one: refused for what it asks, not how.
  check_error(http->put("/api/workflow/" + id
                          + "/skiptask/third?skipTaskRequest=%7Bmap%5B%5D%20map%5B%5D%7D",
                        ""),
              409);
}

CAF_TEST(variables are set in a running or paused workflow) {
  auto id = start("/api/workflow/gate?version=1");
  auto set = ok_json(http->post("/api/workflow/" + id + "/variables", R"({"stage":"review","n":2})"));
  CAF_CHECK_EQUAL(set.at("workflowId").as_string(), id);
  CAF_CHECK_EQUAL(set.at("variables").at("stage").as_string(), "review");
  CAF_CHECK_EQUAL(set.at("status").as_string(), "RUNNING");
  CAF_REQUIRE_EQUAL(http->request("PUT", "/api/workflow/" + id + "/pause").status, 200u);
  auto paused = ok_json(http->post("/api/workflow/" + id + "/variables", R"({"n":3})"));
  CAF_CHECK_EQUAL(paused.at("status").as_string(), "PAUSED");
  CAF_CHECK_EQUAL(paused.at("variables").at("n").to_number<int64_t>(), 3);
  CAF_CHECK_EQUAL(paused.at("variables").at("stage").as_string(), "review");
  check_error(http->post("/api/workflow/" + id + "/variables", "[1]"), 400, "body");
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + id).status, 200u);
  check_error(http->post("/api/workflow/" + id + "/variables", R"({"n":4})"), 409);
  CAF_CHECK_EQUAL(test::workflow_over_http(*http, id).at("variables").at("n").to_number<int64_t>(),
                  3);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents" WHERE "action" = 'workflow.variables')"),
                  2);
}

CAF_TEST(an update of state sets variables and ends a WAIT in one request) {
  auto id = start("/api/workflow/steps");
  CAF_REQUIRE(f.await([&] {
    return test::workflow_over_http(*http, id).at("tasks").as_array().size() == 1;
  }, 20s));
  auto state = "/api/workflow/" + id + "/state";
  check_error(http->post(state, "{}"), 400, "body");
  check_error(http->post(state, R"({"taskReferenceName":"first"})"), 400, "taskResult");
  check_error(http->post(state, R"({"taskReferenceName":"first","taskResult":{"status":"IN_PROGRESS"}})"),
              400, "taskResult.status");
  check_error(http->post(state, R"({"taskReferenceName":"first",
                                   "taskResult":{"status":"COMPLETED","workerId":"w1"}})"),
              400, "taskResult.workerId");
  check_error(http->post(state, R"({"taskReferenceName":"first","taskResult":{"status":"COMPLETED",
                                   "workflowInstanceId":")" + std::string{unknown_id} + R"("}})"),
              400, "taskResult.workflowInstanceId");
  check_error(http->post(state, R"({"variables":{"a":1},"extra":true})"), 400, "extra");
  // One part refused refuses the whole: the variables are not set either.
  check_error(http->post(state, R"({"variables":{"a":1},"taskReferenceName":"second",
                                   "taskResult":{"status":"COMPLETED"}})"),
              409);
  CAF_CHECK(!test::workflow_over_http(*http, id).at("variables").as_object().contains("a"));

  auto first = ok_json(http->post(state + "?requestId=r-1&waitForSeconds=10",
                                  R"({"variables":{"stage":"two"},"taskReferenceName":"first",
                                      "taskResult":{"status":"COMPLETED","outputData":{"ok":true},
                                      "workflowInstanceId":")" + id + R"(","logs":[]}})"));
  CAF_CHECK_EQUAL(first.at("workflowId").as_string(), id);
  CAF_CHECK_EQUAL(first.at("requestId").as_string(), "r-1");
  CAF_CHECK_EQUAL(first.at("variables").at("stage").as_string(), "two");
  // Answered where the workflow blocks next: at the second WAIT.
  const auto& tasks = first.at("tasks").as_array();
  CAF_REQUIRE_EQUAL(tasks.size(), 2u);
  CAF_CHECK_EQUAL(tasks[0].at("status").as_string(), "COMPLETED");
  CAF_CHECK(tasks[0].at("outputData").at("ok").as_bool());
  CAF_CHECK_EQUAL(tasks[1].at("referenceTaskName").as_string(), "second");
  CAF_CHECK_EQUAL(tasks[1].at("status").as_string(), "IN_PROGRESS");

  auto second = ok_json(http->post(state, R"({"taskReferenceName":"second",
                                              "taskResult":{"status":"COMPLETED",
                                              "outputData":{"note":"done"}}})"));
  CAF_CHECK_EQUAL(second.at("status").as_string(), "COMPLETED");
  CAF_CHECK_EQUAL(second.at("variables").at("seen").as_string(), "done");
  CAF_CHECK_EQUAL(second.at("variables").at("stage").as_string(), "two");
  check_error(http->post(state, R"({"variables":{"late":1}})"), 409);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = ')" + id
                          + R"(' AND "eventType" = 'TASK_COMPLETED')"),
                  3);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents" WHERE "action" = 'workflow.state'
                              AND "details"->>'taskStatus' = 'COMPLETED')"),
                  2);
}

CAF_TEST_FIXTURE_SCOPE_END()
