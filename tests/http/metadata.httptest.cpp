#define CAF_SUITE http.metadata

// Conductor's metadata routes against a real node: task definitions (create, update, read,
// list, delete, and the delete refused while a workflow uses one) and workflow definitions
// (create once, create or update many, read a version or the latest, list, delete), with
// the error statuses Conductor's clients expect and nothing written by a refused request.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using test::check_error;

namespace {

struct fixture {
  test::e2e_fixture f{"http_metadata"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }
  int64_t task_defs() { return f.count(R"(SELECT count(*) FROM "TaskDefinitions")"); }
  int64_t workflow_defs() { return f.count(R"(SELECT count(*) FROM "WorkflowDefinitions")"); }
};

const char* flow_def(int version, const char* task = "charge") {
  static std::string text;
  text = R"({"name":"pay","version":)" + std::to_string(version) + R"(,"tasks":[{"name":")"
         + task + R"(","taskReferenceName":"c","type":"SIMPLE"}]})";
  return text.c_str();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_metadata, fixture)

CAF_TEST(task definitions are created read listed and updated) {
  auto created = http->post("/api/metadata/taskdefs",
                            R"([{"name":"charge","retryCount":2},{"name":"ship"}])");
  CAF_REQUIRE_EQUAL(created.status, 200u);
  CAF_CHECK_EQUAL(created.json().at("taskDefs").as_array().size(), 2u);
  auto one = http->get("/api/metadata/taskdefs/charge");
  CAF_REQUIRE_EQUAL(one.status, 200u);
  CAF_CHECK_EQUAL(std::string{one.json().at("name").as_string()}, "charge");
  CAF_CHECK_EQUAL(one.json().at("retryCount").to_number<int64_t>(), 2);
  auto all = http->get("/api/metadata/taskdefs");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  CAF_REQUIRE_EQUAL(all.json().as_array().size(), 2u);
  CAF_CHECK_EQUAL(std::string{all.json().as_array()[1].at("name").as_string()}, "ship");
  auto updated = http->put("/api/metadata/taskdefs", R"({"name":"charge","retryCount":5})");
  CAF_REQUIRE_EQUAL(updated.status, 200u);
  CAF_CHECK_EQUAL(updated.json().at("taskDefs").as_array()[0].at("revision").to_number<int64_t>(),
                  2);
  CAF_CHECK_EQUAL(
    http->get("/api/metadata/taskdefs/charge").json().at("retryCount").to_number<int64_t>(), 5);
}

CAF_TEST(refused task definitions name the field and write nothing) {
  check_error(http->post("/api/metadata/taskdefs", R"({"name":"one"})"), 400, "body");
  check_error(http->post("/api/metadata/taskdefs", R"([{"name":"a"},{"name":"b","retryCount":-1}])"),
              400, "[1].retryCount");
  check_error(http->post("/api/metadata/taskdefs", R"([{"name":"w","tasks":[]}])"), 400, "[0]");
  check_error(http->request("POST", "/api/metadata/taskdefs", "name=a", "text/plain"), 415,
              "Content-Type");
  check_error(http->put("/api/metadata/taskdefs", R"({"name":"nobody"})"), 404);
  check_error(http->put("/api/metadata/taskdefs", R"([{"name":"a"}])"), 400, "body");
  check_error(http->get("/api/metadata/taskdefs/nobody"), 404);
  CAF_CHECK_EQUAL(task_defs(), 0);
}

CAF_TEST(a task definition is deleted unless a workflow uses it) {
  CAF_REQUIRE_EQUAL(http->post("/api/metadata/taskdefs", R"([{"name":"charge"},{"name":"spare"}])")
                      .status,
                    200u);
  CAF_REQUIRE_EQUAL(http->post("/api/metadata/workflow", flow_def(1)).status, 200u);
  auto used = http->del("/api/metadata/taskdefs/charge");
  check_error(used, 409);
  CAF_CHECK(used.json().at("message").as_string().find("\"pay\" version 1")
            != std::string::npos);
  auto gone = http->del("/api/metadata/taskdefs/spare");
  CAF_REQUIRE_EQUAL(gone.status, 200u);
  CAF_CHECK_EQUAL(std::string{gone.json().at("deleted").at("name").as_string()}, "spare");
  check_error(http->get("/api/metadata/taskdefs/spare"), 404);
  check_error(http->del("/api/metadata/taskdefs/spare"), 404);
  CAF_CHECK_EQUAL(task_defs(), 1);
}

CAF_TEST(a workflow definition is created once and read by version) {
  auto created = http->post("/api/metadata/workflow", flow_def(1));
  CAF_REQUIRE_EQUAL(created.status, 200u);
  CAF_CHECK_EQUAL(created.json().at("workflowDefs").as_array()[0].at("version").to_number<int64_t>(),
                  1);
  check_error(http->post("/api/metadata/workflow", flow_def(1, "other")), 409);
  auto bulk = http->put("/api/metadata/workflow",
                        std::string{"["} + flow_def(2, "other") + "]");
  CAF_REQUIRE_EQUAL(bulk.status, 200u);
  CAF_CHECK_EQUAL(std::string{bulk.json().at("bulkSuccessfulResults").as_array()[0].as_string()}, "pay");
  auto latest = http->get("/api/metadata/workflow/pay");
  CAF_REQUIRE_EQUAL(latest.status, 200u);
  CAF_CHECK_EQUAL(latest.json().at("version").to_number<int64_t>(), 2);
  CAF_CHECK_EQUAL(std::string{latest.json().at("tasks").as_array()[0].at("name").as_string()}, "other");
  auto first = http->get("/api/metadata/workflow/pay?version=1");
  CAF_REQUIRE_EQUAL(first.status, 200u);
  CAF_CHECK_EQUAL(std::string{first.json().at("tasks").as_array()[0].at("name").as_string()}, "charge");
  auto all = http->get("/api/metadata/workflow");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  CAF_CHECK_EQUAL(all.json().as_array().size(), 2u);
  check_error(http->get("/api/metadata/workflow/pay?version=7"), 404);
  check_error(http->get("/api/metadata/workflow/pay?version=x"), 400, "version");
  check_error(http->get("/api/metadata/workflow/nobody"), 404);
  auto deleted = http->del("/api/metadata/workflow/pay/1");
  CAF_REQUIRE_EQUAL(deleted.status, 200u);
  check_error(http->del("/api/metadata/workflow/pay/1"), 404);
  check_error(http->del("/api/metadata/workflow/pay/x"), 400, "version");
  CAF_CHECK_EQUAL(workflow_defs(), 1);
}

CAF_TEST(overwrite replaces a workflow definition and newVersion registers the next) {
  CAF_REQUIRE_EQUAL(http->post("/api/metadata/workflow?overwrite=false", flow_def(1)).status,
                    200u);
  check_error(http->post("/api/metadata/workflow?overwrite=false", flow_def(1, "other")), 409);
  // What Orkes' clients send to register whether or not it exists.
  auto replaced = http->post("/api/metadata/workflow?overwrite=true", flow_def(1, "other"));
  CAF_REQUIRE_EQUAL(replaced.status, 200u);
  auto read = http->get("/api/metadata/workflow/pay?version=1&metadata=false");
  CAF_REQUIRE_EQUAL(read.status, 200u);
  CAF_CHECK_EQUAL(std::string{read.json().at("tasks").as_array()[0].at("name").as_string()},
                  "other");
  auto next = http->post("/api/metadata/workflow?newVersion=true", flow_def(1, "third"));
  CAF_REQUIRE_EQUAL(next.status, 200u);
  auto body = next.json();
  CAF_CHECK_EQUAL(body.at("workflowDefs").as_array()[0].at("version").to_number<int64_t>(), 2);
  auto latest = http->get("/api/metadata/workflow/pay");
  CAF_REQUIRE_EQUAL(latest.status, 200u);
  CAF_CHECK_EQUAL(latest.json().at("version").to_number<int64_t>(), 2);
  auto fresh = http->post("/api/metadata/workflow?newVersion=true",
                          R"({"name":"fresh","version":9,"tasks":[{"name":"t",)"
                          R"("taskReferenceName":"t","type":"SIMPLE"}]})");
  CAF_REQUIRE_EQUAL(fresh.status, 200u);
  auto fresh_body = fresh.json();
  CAF_CHECK_EQUAL(fresh_body.at("workflowDefs").as_array()[0].at("version").to_number<int64_t>(),
                  1);
  CAF_CHECK_EQUAL(
    http->put("/api/metadata/workflow?overwrite=true", std::string{"["} + flow_def(3) + "]").status,
    200u);
  CAF_CHECK_EQUAL(workflow_defs(), 4);
  // What nodeflow cannot honour is refused, naming the parameter, and writes nothing.
  check_error(http->put("/api/metadata/workflow?overwrite=false",
                        std::string{"["} + flow_def(4) + "]"),
              400, "overwrite");
  check_error(http->post("/api/metadata/workflow?overwrite=maybe", flow_def(5)), 400,
              "overwrite");
  check_error(http->get("/api/metadata/workflow/pay?metadata=true"), 400, "metadata");
  CAF_REQUIRE_EQUAL(http->post("/api/metadata/taskdefs", R"([{"name":"charge"}])").status, 200u);
  CAF_CHECK_EQUAL(http->get("/api/metadata/taskdefs/charge?metadata=False").status, 200u);
  check_error(http->get("/api/metadata/taskdefs/charge?metadata=true"), 400, "metadata");
  CAF_CHECK_EQUAL(workflow_defs(), 4);
}

CAF_TEST(refused workflow definitions name the field and write nothing) {
  check_error(http->post("/api/metadata/workflow", R"({"name":"t"})"), 400, "tasks");
  check_error(http->post("/api/metadata/workflow", R"({"name":"w","tasks":[]})"), 400, "tasks");
  check_error(http->post("/api/metadata/workflow", R"({"name":"w","version":0,"tasks":[]})"),
              400, "version");
  check_error(http->put("/api/metadata/workflow", flow_def(1)), 400, "body");
  // One bad definition of two: neither is written.
  check_error(http->put("/api/metadata/workflow",
                        std::string{"["} + flow_def(1) + R"(,{"name":"x","tasks":[{"name":"a"}]}])"),
              400, "[1].tasks[0].taskReferenceName");
  check_error(http->request("PUT", "/api/metadata/workflow", "[]", "application/xml"), 415);
  CAF_CHECK_EQUAL(workflow_defs(), 0);
}

CAF_TEST(conductor bookkeeping fields are returned as registered and inputTemplate applies) {
  auto task = http->post("/api/metadata/taskdefs", R"([{"name":"charge","ownerApp":"billing",
      "createTime":1718465549476,"createdBy":"ann@example.com","accessPolicy":{},
      "isolationGroupId":null,"timeoutSeconds":0}])");
  CAF_REQUIRE_EQUAL(task.status, 200u);
  auto td = http->get("/api/metadata/taskdefs/charge").json().as_object();
  CAF_CHECK_EQUAL(std::string{td.at("ownerApp").as_string()}, "billing");
  CAF_CHECK_EQUAL(td.at("createTime").to_number<int64_t>(), 1718465549476);
  CAF_CHECK(td.at("accessPolicy").is_object());
  auto wf = http->post("/api/metadata/workflow", R"({"ownerApp":null,"createTime":1700000000000,
      "updateTime":1700000360000,"createdBy":null,"updatedBy":"bob","accessPolicy":{},
      "name":"pay","version":1,"schemaVersion":2,"restartable":true,
      "workflowStatusListenerEnabled":true,"timeoutPolicy":"ALERT_ONLY","timeoutSeconds":0,
      "inputTemplate":{"currency":"EUR","amount":0},"enforceSchema":true,
      "tasks":[{"name":"charge","taskReferenceName":"c","type":"SIMPLE","startDelay":0,
        "optional":false,"asyncComplete":false,"permissive":false,"retryCount":1,"sink":null,
        "defaultExclusiveJoinTask":[],"onStateChange":{}}]})");
  CAF_REQUIRE_EQUAL(wf.status, 200u);
  auto got = http->get("/api/metadata/workflow/pay").json().as_object();
  CAF_CHECK_EQUAL(got.at("createTime").to_number<int64_t>(), 1700000000000);
  CAF_CHECK_EQUAL(std::string{got.at("updatedBy").as_string()}, "bob");
  CAF_CHECK(got.at("workflowStatusListenerEnabled").as_bool());
  CAF_CHECK(got.at("enforceSchema").as_bool());
  CAF_CHECK(got.at("inputTemplate") == boost::json::parse(R"({"currency":"EUR","amount":0})"));
  CAF_CHECK_EQUAL(got.at("tasks").as_array()[0].at("retryCount").to_number<int64_t>(), 1);
  // The template lies under the input; the input's own keys win.
  auto started = http->post("/api/workflow/pay", R"({"amount":12})");
  CAF_REQUIRE_EQUAL(started.status, 200u);
  auto run = http->get("/api/workflow/" + started.body + "?includeTasks=false").json();
  CAF_CHECK(run.at("input") == boost::json::parse(R"({"currency":"EUR","amount":12})"));
  check_error(http->post("/api/metadata/workflow", R"({"name":"sink","tasks":[{"name":"charge",
      "taskReferenceName":"c"}],"workflowStatusListenerSink":"kafka:done"})"),
              400, "workflowStatusListenerSink");
}

CAF_TEST_FIXTURE_SCOPE_END()
