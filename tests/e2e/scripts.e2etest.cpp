#define CAF_SUITE e2e.scripts
#include "caf/test/unit_test.hpp"

// INLINE (javascript and value-param), LAMBDA and JSON_JQ_TRANSFORM in a workflow no
// worker serves: a real `nodeflow serve` runs them in its sandbox processes, with the
// outputs Conductor's documentation gives for its examples. An INLINE that never ends
// fails its task with the time limit while the node keeps serving.

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_node.hpp"
#include "tests/support/http_workflow.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([
  {"name": "scripts", "version": 1, "inputParameters": ["value"], "tasks": [
    {"name": "inline_js", "taskReferenceName": "js", "type": "INLINE",
     "inputParameters": {"value": "${workflow.input.value}", "evaluatorType": "javascript",
       "expression": "function e() { if ($.value == 1){return {\"result\": true}} else { return {\"result\": false}}} e();"}},
    {"name": "inline_graal", "taskReferenceName": "graal", "type": "INLINE",
     "inputParameters": {"value": "${workflow.input.value}", "evaluatorType": "graaljs",
       "expression": "$.value * 2"}},
    {"name": "inline_param", "taskReferenceName": "param", "type": "INLINE",
     "inputParameters": {"pick": "${js.output.result}", "evaluatorType": "value-param",
       "expression": "pick"}},
    {"name": "lambda", "taskReferenceName": "lambda", "type": "LAMBDA",
     "inputParameters": {"input": "${workflow.input}",
       "scriptExpression": "if ($.input.value==1){return {testvalue: true}} else{return {testvalue: false} }"}},
    {"name": "jq", "taskReferenceName": "jq", "type": "JSON_JQ_TRANSFORM",
     "inputParameters": {"key1": {"value1": ["a", "b"]}, "key2": {"value2": ["d", "e"]},
       "queryExpression": "{ key3: (.key1.value1 + .key2.value2) }"}},
    {"name": "jq_many", "taskReferenceName": "many", "type": "JSON_JQ_TRANSFORM",
     "inputParameters": {"persons": [{"name": "some", "email": "mail@mail.com", "id": 1},
                                     {"name": "some2", "email": "mail2@mail.com", "id": 2}],
       "queryExpression": ".persons[] | {user: {email, id}}"}}],
   "outputParameters": {"js": "${js.output}", "graal": "${graal.output}",
     "param": "${param.output}", "lambda": "${lambda.output}", "jq": "${jq.output}",
     "many": "${many.output}"}},
  {"name": "spin", "version": 1, "tasks": [
    {"name": "forever", "taskReferenceName": "forever", "type": "INLINE",
     "inputParameters": {"evaluatorType": "javascript", "expression": "while(true){}"}}]}
])";

struct fixture : test::http_node {
  fixture() : http_node("e2e_scripts", definitions, {{"scripts.timeout_ms", "500"}}) {}
  boost::json::value workflow(const std::string& id) {
    return test::workflow_over_http(*http, id);
  }
  std::string status(const std::string& id) { return test::status_over_http(*http, id); }
  std::string start(const std::string& name, const std::string& input) {
    auto r = http->post("/api/workflow/" + name, input);
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return r.body;
  }
  bool await_end(const std::string& id) {
    return f.await([&] { auto s = status(id); return s != "RUNNING"; }, 30s);
  }
};

boost::json::value json(const char* text) {
  return boost::json::parse(text);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(e2e_scripts, fixture)

CAF_TEST(script tasks complete with the Conductor outputs without any worker) {
  auto id = start("scripts", R"({"value": 1})");
  CAF_REQUIRE(await_end(id));
  auto wf = workflow(id);
  if (wf.at("status") != "COMPLETED")
    CAF_MESSAGE(boost::json::serialize(wf));
  CAF_REQUIRE_EQUAL(std::string(wf.at("status").as_string()), "COMPLETED");
  const auto& out = wf.at("output");
  CAF_CHECK_EQUAL(out.at("js"), json(R"({"result": {"result": true}})"));
  CAF_CHECK_EQUAL(out.at("graal"), json(R"({"result": 2})"));
  CAF_CHECK_EQUAL(out.at("param"), json(R"({"result": {"result": true}})"));
  CAF_CHECK_EQUAL(out.at("lambda"), json(R"({"result": {"testvalue": true}})"));
  CAF_CHECK_EQUAL(out.at("jq"), json(R"({"result": {"key3": ["a", "b", "d", "e"]},
                                         "resultList": [{"key3": ["a", "b", "d", "e"]}]})"));
  CAF_CHECK_EQUAL(out.at("many"),
                  json(R"({"result": {"user": {"email": "mail@mail.com", "id": 1}},
                           "resultList": [{"user": {"email": "mail@mail.com", "id": 1}},
                                          {"user": {"email": "mail2@mail.com", "id": 2}}]})"));
}

CAF_TEST(an endless INLINE fails at the time limit and the node keeps serving) {
  auto id = start("spin", "{}");
  CAF_REQUIRE(await_end(id));
  auto wf = workflow(id);
  CAF_CHECK_EQUAL(std::string(wf.at("status").as_string()), "FAILED");
  const auto& task = wf.at("tasks").as_array().at(0);
  CAF_CHECK_EQUAL(std::string(task.at("status").as_string()), "FAILED");
  CAF_CHECK_EQUAL(std::string(task.at("reasonForIncompletion").as_string()),
                  "INLINE: script ran past its time limit of 500 ms");
  // Its sandbox process was killed; the next scripts run in a fresh one.
  auto again = start("scripts", R"({"value": 2})");
  CAF_REQUIRE(await_end(again));
  auto ok = workflow(again);
  CAF_CHECK_EQUAL(std::string(ok.at("status").as_string()), "COMPLETED");
  CAF_CHECK_EQUAL(ok.at("output").at("graal"), json(R"({"result": 4})"));
  CAF_CHECK_EQUAL(ok.at("output").at("lambda"), json(R"({"result": {"testvalue": false}})"));
}

CAF_TEST(a definition with a script task missing its program is refused naming the field) {
  auto r = http->post("/api/metadata/workflow", R"({"name": "bad", "version": 1, "tasks": [
    {"name": "i", "taskReferenceName": "i", "type": "INLINE",
     "inputParameters": {"evaluatorType": "python", "expression": "1"}},
    {"name": "q", "taskReferenceName": "q", "type": "JSON_JQ_TRANSFORM", "inputParameters": {}}]})");
  CAF_CHECK_EQUAL(r.status, 400u);
  CAF_CHECK(r.body.find("tasks[0].inputParameters.evaluatorType") != std::string::npos);
  CAF_CHECK(r.body.find("expected one of value-param, javascript, graaljs") != std::string::npos);
  CAF_CHECK(r.body.find("tasks[1].inputParameters.queryExpression") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
