#define CAF_SUITE store.definitions
#include "caf/test/unit_test.hpp"

#include "flow/validate.hpp"
#include "store/definitions.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("definitions") {}
};

/// Every field set to something other than its default.
flow::task_def full_task_def() {
  flow::task_def d;
  d.name = "charge_card";
  d.description = "charges a card";
  d.owner_email = "payments@example.com";
  d.queue_name = "payments-high";
  d.retry_count = 7;
  d.logic = flow::retry_logic::exponential_backoff;
  d.retry_delay_seconds = 11;
  d.max_retry_delay_seconds = 300;
  d.backoff_scale_factor = 3;
  d.backoff_jitter_ms = 250;
  d.timeout_seconds = 900;
  d.policy = flow::timeout_policy::retry;
  d.response_timeout_seconds = 120;
  d.poll_timeout_seconds = 30;
  d.total_timeout_seconds = 3600;
  d.rate_limit_per_frequency = 50;
  d.rate_limit_frequency_in_seconds = 10;
  d.concurrent_exec_limit = 4;
  d.cache_ttl_seconds = 60;
  d.cache_key = "${workflow.input.cardId}";
  d.input_keys = {"cardId", "amount"};
  d.output_keys = {"chargeId"};
  d.secret_output_fields = {"token", "cvv"};
  d.input_template = boost::json::object{{"currency", "EUR"}, {"nested", {{"n", 1.5}}}};
  return d;
}

const char* workflow_json = R"({
  "name": "order", "version": 2, "description": "an order",
  "inputParameters": ["orderId"],
  "outputParameters": {"charged": "${charge.output.chargeId}"},
  "variables": {"attempts": 0, "flag": null},
  "timeoutSeconds": 600, "timeoutPolicy": "TIME_OUT_WF",
  "failureWorkflow": "order_failed", "restartable": false, "ownerEmail": "shop@example.com",
  "tasks": [
    {"name": "charge_card", "taskReferenceName": "charge", "type": "SIMPLE",
     "inputParameters": {"id": "${workflow.input.orderId}"}, "optional": true, "startDelay": 5},
    {"name": "route", "taskReferenceName": "route", "type": "SWITCH",
     "evaluatorType": "value-param", "expression": "kind",
     "inputParameters": {"kind": "${workflow.input.kind}"},
     "decisionCases": {"a": [{"name": "ship", "taskReferenceName": "ship", "type": "SIMPLE"}]},
     "defaultCase": [{"name": "hold", "taskReferenceName": "hold", "type": "WAIT",
                      "inputParameters": {"duration": "1 hour"}}]}
  ]})";

} // namespace

CAF_TEST_FIXTURE_SCOPE(definitions_tests, fixture)

CAF_TEST(every task definition field is written and read back equal) {
  auto full = full_task_def();
  auto plain = flow::task_def::unregistered("plain");
  auto revs = put_task_defs(conn, default_namespace, {full, plain});
  NF_REQUIRE_OK(revs);
  CAF_CHECK_EQUAL(revs->size(), 2u);
  auto loaded = load_task_defs(conn, default_namespace);
  NF_REQUIRE_OK(loaded);
  CAF_REQUIRE_EQUAL(loaded->size(), 2u);
  CAF_CHECK(loaded->at("charge_card") == full);
  CAF_CHECK(loaded->at("plain") == plain);
  // flow's 0 = none is NULL where the column's CHECK says > 0 or NULL = unset.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskDefinitions" WHERE "name" = 'plain'
                             AND "concurrentExecLimit" IS NULL AND "maxRetryDelaySeconds" IS NULL
                             AND "cacheTtlSeconds" IS NULL AND "pollTimeoutSeconds" IS NULL
                             AND "totalTimeoutSeconds" IS NULL AND "queueName" IS NULL)"),
                  1);
  // And the real values land in their own columns, not in a blob.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskDefinitions" WHERE "name" = 'charge_card'
                             AND "backoffScaleFactor" = 3 AND "inputKeys" = '{cardId,amount}'
                             AND "outputKeys" = '{chargeId}' AND "secretOutputFields" = '{token,cvv}'
                             AND "ownerEmail" = 'payments@example.com'
                             AND "inputTemplate" = '{"currency":"EUR","nested":{"n":1.5}}'
                             AND "cacheKey" = '${workflow.input.cardId}' AND "queueName" = 'payments-high'
                             AND "concurrentExecLimit" = 4 AND "retryLogic" = 'EXPONENTIAL_BACKOFF'
                             AND "timeoutPolicy" = 'RETRY')"),
                  1);
}

CAF_TEST(an update bumps the revision and replaces every field) {
  auto d = full_task_def();
  auto first = put_task_defs(conn, default_namespace, {d});
  CAF_REQUIRE(first);
  CAF_CHECK_EQUAL(first->at(0), 1);
  d.secret_output_fields.clear();
  d.concurrent_exec_limit = 0;
  d.description.clear();
  auto second = put_task_defs(conn, default_namespace, {d});
  CAF_REQUIRE(second);
  CAF_CHECK_EQUAL(second->at(0), 2);
  auto loaded = load_task_defs(conn, default_namespace);
  NF_REQUIRE_OK(loaded);
  CAF_CHECK(loaded->at("charge_card") == d);
}

CAF_TEST(task definitions from JSON text are parsed validated and stored) {
  auto revs = put_task_defs_json(conn, default_namespace, R"([
    {"name": "a", "retryCount": 2, "secretOutputFields": ["s"], "ownerEmail": "x@example.com"},
    {"name": "b", "concurrentExecLimit": 3}])");
  NF_REQUIRE_OK(revs);
  CAF_CHECK_EQUAL(revs->size(), 2u);
  auto loaded = load_task_defs(conn, default_namespace);
  NF_REQUIRE_OK(loaded);
  CAF_CHECK_EQUAL(loaded->at("a").retry_count, 2);
  CAF_CHECK_EQUAL(loaded->at("a").secret_output_fields, std::vector<std::string>{"s"});
  CAF_CHECK_EQUAL(loaded->at("b").concurrent_exec_limit, 3);
  // A single object works too.
  CAF_CHECK(put_task_defs_json(conn, default_namespace, R"({"name": "c"})"));
}

CAF_TEST(a workflow definition round trips and the latest version is the default) {
  auto v2 = put_workflow_def_json(conn, default_namespace, workflow_json);
  NF_REQUIRE_OK(v2);
  auto v1 = *v2;
  v1.version = 1;
  v1.description = "older";
  CAF_REQUIRE(put_workflow_def(conn, default_namespace, v1));
  auto latest = load_workflow_def(conn, default_namespace, "order");
  CAF_REQUIRE(latest);
  CAF_CHECK(*latest == *v2);
  auto first = load_workflow_def(conn, default_namespace, "order", 1);
  CAF_REQUIRE(first);
  CAF_CHECK(*first == v1);
  // Columns, not a blob: the failure workflow and JSON null inside variables survive.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowDefinitions" WHERE "version" = 2
                             AND "failureWorkflow" = 'order_failed' AND NOT "restartable"
                             AND "variables" = '{"attempts": 0, "flag": null}'
                             AND "timeoutPolicy" = 'TIME_OUT_WF' AND "timeoutSeconds" = 600
                             AND jsonb_array_length("tasks") = 2)"),
                  1);
}

CAF_TEST(task and workflow definitions are written together or not at all) {
  auto task = full_task_def();
  auto wf = flow::load_workflow_def(workflow_json);
  CAF_REQUIRE(wf.ok());
  auto bad = wf.def;
  bad.name = "order_v0";
  bad.version = 0;
  auto r = put_definitions(conn, default_namespace, {task}, {wf.def, bad});
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(code_of(r.error()), errc::invalid);
  CAF_CHECK(message_of(r.error()).find("workflowDefs[1].version: expected an integer from 1")
            == 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskDefinitions")"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowDefinitions")"), 0);
  auto ok = put_definitions(conn, default_namespace, {task}, {wf.def});
  NF_REQUIRE_OK(ok);
  CAF_CHECK_EQUAL(*ok, std::vector<int64_t>{1});
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowDefinitions")"), 1);
}

CAF_TEST(a missing workflow definition is not_found with its name and version) {
  auto none = load_workflow_def(conn, default_namespace, "nope", 3);
  CAF_REQUIRE(!none);
  CAF_CHECK_EQUAL(nf::code_of(none.error()), nf::errc::not_found);
  CAF_CHECK_EQUAL(nf::message_of(none.error()), R"(workflow definition "nope" version 3 not found)");
  auto latest = load_workflow_def(conn, default_namespace, "nope");
  CAF_REQUIRE(!latest);
  CAF_CHECK_EQUAL(nf::message_of(latest.error()), R"(workflow definition "nope" not found)");
}

CAF_TEST(definitions are per namespace) {
  auto other = scalar(R"(INSERT INTO "Namespaces" ("name") VALUES ('other') RETURNING "id")");
  CAF_REQUIRE(put_workflow_def_json(conn, namespace_id{other}, workflow_json));
  auto here = load_workflow_def(conn, default_namespace, "order");
  CAF_CHECK(!here);
  CAF_CHECK(load_workflow_def(conn, namespace_id{other}, "order"));
  sql(R"(DELETE FROM "WorkflowDefinitions")");
  sql(R"(DELETE FROM "Namespaces" WHERE "name" = 'other')");
}

CAF_TEST_FIXTURE_SCOPE_END()
