#define CAF_SUITE http.request_ids

// Retrying over HTTP: a start without an idempotency key, a command, a signal and a task
// update sent twice with the same X-Request-Id are applied once and answered alike (migration
// 0037); an id reused for another request is refused. And the byte limits of the text that
// lands in btree indexes: a key too long for an index row is a 400 naming its field, before
// it could fail the transaction its start shares with others.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "tests/http/error_body.hpp"
#include "tests/support/http_node.hpp"
#include "tests/support/http_workflow.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

struct fixture : test::http_node {
  fixture()
    : http_node{"http_request_ids", R"([
      {"name": "gate", "version": 1, "tasks": [
        {"name": "hold", "taskReferenceName": "hold", "type": "WAIT",
         "inputParameters": {"signal": "go"}}]}])"} {
  }

  test::http_reply with_id(const std::string& method, const std::string& target,
                           const std::string& id, const std::string& body = {}) {
    return http->request(method, target, body, "application/json", {{"X-Request-Id", id}});
  }

  std::string start_gate() {
    auto r = http->post("/api/workflow/gate", "{}");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    CAF_REQUIRE(f.await([&] { return test::workflow_over_http(*http, r.body)
                                       .at("tasks").as_array().size() == 1; },
                        20s));
    return r.body;
  }

  int64_t events(const std::string& id, const std::string& type) {
    return f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                        AND "eventType" = $2)",
                   store::params::of(id, type));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_request_ids, fixture)

CAF_TEST(keys and correlation ids too long for an index row are 400 naming the field) {
  std::string big(3500, 'k');
  check_error(http->post("/api/workflow",
                         R"({"name":"gate","idempotencyKey":")" + big + R"("})"),
              400, "idempotencyKey");
  check_error(http->post("/api/workflow", R"({"name":"gate","correlationId":")" + big + R"("})"),
              400, "correlationId");
  check_error(http->post("/api/workflow/gate?correlationId=" + big, "{}"), 400, "correlationId");
  check_error(with_id("POST", "/api/workflow/gate", big, "{}"), 400, "X-Request-Id");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 0);
  // At the limit it is accepted.
  std::string limit(1024, 'k');
  auto ok = http->post("/api/workflow", R"({"name":"gate","idempotencyKey":")" + limit
                                          + R"(","correlationId":")" + limit + R"("})");
  CAF_CHECK_EQUAL(ok.status, 200u);
}

CAF_TEST(a keyless start sent twice with one request id starts one workflow) {
  auto first = with_id("POST", "/api/workflow/gate", "start-1", "{}");
  CAF_REQUIRE_EQUAL(first.status, 200u);
  auto again = with_id("POST", "/api/workflow", "start-1", R"({"name":"gate"})");
  CAF_REQUIRE_EQUAL(again.status, 200u);
  CAF_CHECK_EQUAL(again.body, first.body);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 1);
  auto other = with_id("POST", "/api/workflow/gate", "start-2", "{}");
  CAF_REQUIRE_EQUAL(other.status, 200u);
  CAF_CHECK_NOT_EQUAL(other.body, first.body);
}

CAF_TEST(a signal sent twice with one request id is applied once and answered alike) {
  auto id = start_gate();
  // "ping" completes nothing: without the id's row the second would be a second event.
  auto a = with_id("POST", "/api/workflow/" + id + "/signal/ping", "sig-1", R"({"n":1})");
  auto b = with_id("POST", "/api/workflow/" + id + "/signal/ping", "sig-1", R"({"n":1})");
  CAF_REQUIRE_EQUAL(a.status, 200u);
  CAF_REQUIRE_EQUAL(b.status, 200u);
  CAF_CHECK(a.json() == b.json());
  CAF_CHECK_EQUAL(events(id, "SIGNAL_RECEIVED"), 1);
  // Another signal under the same id is refused, naming the id.
  check_error(with_id("POST", "/api/workflow/" + id + "/signal/other", "sig-1", "{}"), 400,
              "requestId");
  // The signal that ends the workflow, retried after the end, is answered as it was.
  auto go = with_id("POST", "/api/workflow/" + id + "/signal/go", "sig-2", "{}");
  CAF_REQUIRE_EQUAL(go.status, 200u);
  CAF_REQUIRE(f.await([&] { return test::status_over_http(*http, id) == "COMPLETED"; }, 20s));
  auto go_again = with_id("POST", "/api/workflow/" + id + "/signal/go", "sig-2", "{}");
  CAF_CHECK_EQUAL(go_again.status, 200u);
  CAF_CHECK_EQUAL(events(id, "SIGNAL_RECEIVED"), 2);
  // Without an id, a signal to an ended workflow is refused as before.
  check_error(http->post("/api/workflow/" + id + "/signal/go", "{}"), 400);
}

CAF_TEST(a command sent twice with one request id is applied once) {
  auto id = start_gate();
  auto a = with_id("PUT", "/api/workflow/" + id + "/pause", "cmd-1");
  CAF_REQUIRE_EQUAL(a.status, 200u);
  auto b = with_id("PUT", "/api/workflow/" + id + "/pause", "cmd-1");
  CAF_CHECK_EQUAL(b.status, 200u);
  CAF_CHECK_EQUAL(events(id, "WORKFLOW_PAUSED"), 1);
  // The id of the pause, reused for a resume: refused, and nothing resumed.
  auto wrong = with_id("PUT", "/api/workflow/" + id + "/resume", "cmd-1");
  CAF_CHECK_EQUAL(wrong.status, 409u);
  CAF_CHECK(wrong.body.find("requestId") != std::string::npos);
  CAF_CHECK_EQUAL(test::status_over_http(*http, id), "PAUSED");
  auto resumed = with_id("PUT", "/api/workflow/" + id + "/resume", "cmd-2");
  CAF_CHECK_EQUAL(resumed.status, 200u);
  // Conductor's terminate may ask for the failure workflow: refused, and nothing terminated.
  check_error(http->del("/api/workflow/" + id + "?reason=x&triggerFailureWorkflow=true"), 400,
              "triggerFailureWorkflow");
  CAF_CHECK_EQUAL(test::status_over_http(*http, id), "RUNNING");
  auto terminated = with_id("DELETE", "/api/workflow/" + id + "?reason=x", "cmd-3");
  CAF_CHECK_EQUAL(terminated.status, 200u);
  // A second terminate is refused (409) unless it is the first one retried.
  auto terminated_again = with_id("DELETE", "/api/workflow/" + id + "?reason=x", "cmd-3");
  CAF_CHECK_EQUAL(terminated_again.status, 200u);
  check_error(http->del("/api/workflow/" + id + "?reason=x"), 409);
  CAF_CHECK_EQUAL(events(id, "WORKFLOW_TERMINATED"), 1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "RequestIds")"), 3);
}

CAF_TEST(a task update by reference sent twice with one request id answers the same task) {
  auto id = start_gate();
  auto target = "/api/tasks/" + id + "/hold/COMPLETED";
  auto a = with_id("POST", target, "upd-1", R"({"x":1})");
  CAF_REQUIRE_EQUAL(a.status, 200u);
  CAF_REQUIRE(f.await([&] { return test::status_over_http(*http, id) == "COMPLETED"; }, 20s));
  auto b = with_id("POST", target, "upd-1", R"({"x":1})");
  CAF_CHECK_EQUAL(b.status, 200u);
  CAF_CHECK_EQUAL(b.body, a.body);
  CAF_CHECK_EQUAL(events(id, "SIGNAL_RECEIVED"), 1);
  check_error(http->post(target, R"({"x":1})"), 400);
}

CAF_TEST_FIXTURE_SCOPE_END()
