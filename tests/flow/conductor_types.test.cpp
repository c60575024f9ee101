#define CAF_SUITE flow.conductor_types
#include "caf/test/unit_test.hpp"

// NOOP, HUMAN, DECISION, EXCLUSIVE_JOIN, DYNAMIC, START_WORKFLOW and EVENT: what decide()
// does with each, the outputs Conductor documents, and the validation of their fields.

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "flow/operations.hpp"
#include "flow/serialise.hpp"
#include "flow/validate.hpp"
#include "sim.hpp"

using namespace nf::flow;
using nf::flow::test::sim;

namespace {

std::string json(const boost::json::value& v) {
  return boost::json::serialize(v);
}

std::string canonical(const char* text) {
  return json(boost::json::parse(text));
}

// The problems of a definition, one "path: message" a line.
std::string problems_of(const char* def) {
  auto loaded = load_workflow_def(def);
  std::string out;
  for (const auto& p : loaded.errors)
    out += to_string(p) + "\n";
  return out;
}

bool says(const std::string& problems, const std::string& text) {
  bool found = problems.find(text) != std::string::npos;
  if (!found)
    CAF_MESSAGE("expected \"" << text << "\" in:\n" << problems);
  return found;
}

constexpr const char* decision_by_param = R"({"name":"w","tasks":[
  {"name":"d","taskReferenceName":"d","type":"DECISION","caseValueParam":"kind",
   "inputParameters":{"kind":"${workflow.input.kind}"},
   "decisionCases":{"card":[{"name":"pay_card","taskReferenceName":"card","type":"NOOP"}],
                    "7":[{"name":"seven","taskReferenceName":"seven","type":"NOOP"}]},
   "defaultCase":[{"name":"other","taskReferenceName":"other","type":"SET_VARIABLE",
                   "inputParameters":{"path":"default"}}]},
  {"name":"j","taskReferenceName":"j","type":"EXCLUSIVE_JOIN","joinOn":["card","seven"],
   "defaultExclusiveJoinTask":["other"]}],
  "outputParameters":{"case":"${d.output.caseOutput}","joined":"${j.output}"}})";

}  // namespace

CAF_TEST(noop completes at once without output) {
  sim s(test::workflow(R"({"name":"w","tasks":[{"name":"n","taskReferenceName":"n","type":"NOOP"}]})"));
  CAF_CHECK_EQUAL(s.scheduled(), "n");
  CAF_CHECK(s.task("n").status == task_status::completed);
  CAF_CHECK(s.task("n").output.empty());
  CAF_CHECK(s.snap.status == workflow_status::completed);
}

CAF_TEST(decision by caseValueParam picks the case and names it in caseOutput) {
  sim card(test::workflow(decision_by_param), {}, R"({"kind":"card"})");
  CAF_CHECK_EQUAL(card.scheduled(), "d card j");
  CAF_CHECK_EQUAL(json(card.task("d").output), R"({"caseOutput":["card"]})");
  CAF_CHECK_EQUAL(card.task("d").input.at("case").as_string(), "card");
  CAF_CHECK_EQUAL(json(card.snap.output), R"({"case":["card"],"joined":{}})");
  // A number is matched by its text, as Conductor's "" + value.
  sim seven(test::workflow(decision_by_param), {}, R"({"kind":7})");
  CAF_CHECK_EQUAL(seven.scheduled(), "d seven j");
  sim other(test::workflow(decision_by_param), {}, R"({"kind":"cash"})");
  CAF_CHECK_EQUAL(other.scheduled(), "d other j");
  CAF_CHECK(other.snap.status == workflow_status::completed);
  CAF_CHECK_EQUAL(json(other.task("d").output), R"({"caseOutput":["cash"]})");
}

CAF_TEST(decision by caseExpression evaluates over the input as $) {
  sim s(test::workflow(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION",
     "caseExpression":"$.amount > 100 ? 'big' : 'small'",
     "inputParameters":{"amount":"${workflow.input.amount}"},
     "decisionCases":{"big":[{"name":"a","taskReferenceName":"a"}],
                      "small":[{"name":"b","taskReferenceName":"b","type":"NOOP"}]}}]})"),
        {}, R"({"amount":250})");
  CAF_CHECK_EQUAL(s.scheduled(), "d a");
  CAF_CHECK_EQUAL(json(s.task("d").output), R"({"caseOutput":["big"]})");
  CAF_CHECK(s.task("a").status == task_status::scheduled);
}

CAF_TEST(exclusive join takes the output of the joined task that ran) {
  sim s(test::workflow(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION","caseValueParam":"k",
     "inputParameters":{"k":"${workflow.input.k}"},
     "decisionCases":{"x":[{"name":"x","taskReferenceName":"x"}],
                      "y":[{"name":"y","taskReferenceName":"y"}]}},
    {"name":"j","taskReferenceName":"j","type":"EXCLUSIVE_JOIN","joinOn":["x","y"]},
    {"name":"after","taskReferenceName":"after","type":"NOOP"}],
    "outputParameters":{"joined":"${j.output.v}"}})"),
        {}, R"({"k":"y"})");
  CAF_CHECK_EQUAL(s.scheduled(), "d y");
  s.complete("y", R"({"v":42})");
  CAF_CHECK_EQUAL(s.scheduled(), "d y j after");
  CAF_CHECK_EQUAL(json(s.task("j").output), R"({"v":42})");
  CAF_CHECK_EQUAL(json(s.snap.output), R"({"joined":42})");
}

CAF_TEST(exclusive join ends as the joined task ended and fails when none ran) {
  sim s(test::workflow(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION","caseValueParam":"k",
     "inputParameters":{"k":"x"},
     "decisionCases":{"x":[{"name":"x","taskReferenceName":"x","optional":true}]}},
    {"name":"j","taskReferenceName":"j","type":"EXCLUSIVE_JOIN","joinOn":["x"]}]})"));
  s.fail("x", "card declined", 0, task_status::failed_with_terminal_error);
  // x is optional: COMPLETED_WITH_ERRORS counts as successful, as in Conductor.
  CAF_CHECK(s.task("j").status == task_status::completed);
  sim none(test::workflow(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION","caseValueParam":"k",
     "inputParameters":{"k":"z"},
     "decisionCases":{"x":[{"name":"x","taskReferenceName":"x"}]},
     "defaultCase":[{"name":"n","taskReferenceName":"n","type":"NOOP"}]},
    {"name":"j","taskReferenceName":"j","type":"EXCLUSIVE_JOIN","joinOn":["x"]}]})"));
  CAF_CHECK(none.task("j").status == task_status::failed);
  CAF_CHECK_EQUAL(none.task("j").reason_for_incompletion,
                  "none of the tasks in joinOn or defaultExclusiveJoinTask ran");
  CAF_CHECK(none.snap.status == workflow_status::failed);
}

CAF_TEST(human waits until completed or failed by its reference name) {
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"approve","taskReferenceName":"approve","type":"HUMAN"},
    {"name":"n","taskReferenceName":"n","type":"NOOP"}],
    "outputParameters":{"by":"${approve.output.by}"}})");
  sim s(def);
  CAF_CHECK(s.task("approve").status == task_status::in_progress);
  s.advance(3'600'000);
  CAF_CHECK(s.task("approve").status == task_status::in_progress);
  s.signal("approve");  // a signal by name is not the task's update
  CAF_CHECK(s.task("approve").status == task_status::in_progress);
  s.update_by_ref("approve", "COMPLETED", R"({"by":"ann"})");
  CAF_CHECK(s.snap.status == workflow_status::completed);
  CAF_CHECK_EQUAL(json(s.snap.output), R"({"by":"ann"})");
  sim rejected(def);
  rejected.update_by_ref("approve", "FAILED", R"({"by":"bob"})");
  CAF_CHECK(rejected.task("approve").status == task_status::failed);
  CAF_CHECK(rejected.snap.status == workflow_status::failed);
}

CAF_TEST(dynamic runs as the task its input names) {
  task_def_map defs{{"ship_fast", test::task_definition(
                                    R"({"name":"ship_fast","queueName":"express","retryCount":1,
                                        "retryDelaySeconds":0})")}};
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"ship","taskReferenceName":"ship","type":"DYNAMIC","dynamicTaskNameParam":"how",
     "inputParameters":{"how":"${workflow.input.how}","parcel":7}}]})");
  sim s(def, defs, R"({"how":"ship_fast"})");
  const auto& st = s.decisions.front().schedule.at(0);
  CAF_CHECK(st.type == task_type::simple);
  CAF_CHECK_EQUAL(st.task_def_name, "ship_fast");
  CAF_CHECK_EQUAL(st.queue, "express");
  CAF_CHECK_EQUAL(json(st.input), R"({"how":"ship_fast","parcel":7})");
  s.fail("ship");  // ship_fast's retryCount applies
  CAF_CHECK_EQUAL(s.scheduled(), "ship ship+1");
  CAF_CHECK_EQUAL(s.task("ship").task_def_name, "ship_fast");
  s.complete("ship", R"({"tracking":"T1"})");
  CAF_CHECK(s.snap.status == workflow_status::completed);
  // An unregistered name runs as a SIMPLE task on the queue of that name.
  sim plain(def, {}, R"({"how":"ship_slow"})");
  CAF_CHECK_EQUAL(plain.decisions.front().schedule.at(0).queue, "ship_slow");
  sim missing(def, {}, R"({})");
  CAF_CHECK(missing.task("ship").status == task_status::failed);
  CAF_CHECK_EQUAL(missing.task("ship").reason_for_incompletion,
                  "inputParameters.how: expected the name of the task to run, got null");
  CAF_CHECK(missing.snap.status == workflow_status::failed);
}

CAF_TEST(start workflow starts a workflow without waiting for it) {
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"kick","taskReferenceName":"kick","type":"START_WORKFLOW",
     "inputParameters":{"startWorkflow":{"name":"child","version":2,
       "input":{"a":"${workflow.input.a}"}}}},
    {"name":"n","taskReferenceName":"n","type":"NOOP"}],
    "outputParameters":{"started":"${kick.output.workflowId}"}})");
  sim s(def, {}, R"({"a":1})");
  s.snap.correlation_id = "order-9";
  const auto& d = s.decisions.front();
  CAF_REQUIRE_EQUAL(d.sub_workflows.size(), 1u);
  const auto& start = d.sub_workflows[0];
  CAF_CHECK(start.detached);
  CAF_CHECK_EQUAL(start.name, "child");
  CAF_CHECK(start.version == std::optional<std::int64_t>{2});
  CAF_CHECK_EQUAL(json(start.input), R"({"a":1})");
  CAF_CHECK(s.task("kick").status == task_status::in_progress);
  // The engine completes the task once the workflow has started.
  s.complete("kick", R"({"workflowId":"wf-2"})");
  CAF_CHECK(s.snap.status == workflow_status::completed);
  CAF_CHECK_EQUAL(json(s.snap.output), R"({"started":"wf-2"})");
}

CAF_TEST(start workflow takes the starter correlation id unless given one) {
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"kick","taskReferenceName":"kick","type":"START_WORKFLOW",
     "inputParameters":{"startWorkflow":{"name":"child","correlationId":"${workflow.input.c}"}}}]})");
  snapshot snap = start_snapshot(def, "wf-1", test::object(R"({"c":null})"), 0);
  snap.correlation_id = "order-9";
  auto d = decide(def, {}, snap, 0);
  CAF_REQUIRE_EQUAL(d.sub_workflows.size(), 1u);
  CAF_CHECK_EQUAL(d.sub_workflows[0].correlation_id, "order-9");
  snap = start_snapshot(def, "wf-1", test::object(R"({"c":"mine"})"), 0);
  snap.correlation_id = "order-9";
  d = decide(def, {}, snap, 0);
  CAF_CHECK_EQUAL(d.sub_workflows.at(0).correlation_id, "mine");
  // A request that resolves to something unusable fails the task, naming the field.
  auto bad = test::workflow(R"({"name":"w","tasks":[
    {"name":"kick","taskReferenceName":"kick","type":"START_WORKFLOW",
     "inputParameters":{"startWorkflow":"${workflow.input.req}"}}]})");
  sim s(bad, {}, R"({"req":{"version":1}})");
  CAF_CHECK(s.task("kick").status == task_status::failed);
  CAF_CHECK_EQUAL(s.task("kick").reason_for_incompletion,
                  "inputParameters.startWorkflow.name: missing required field (expected the "
                  "name of the workflow to start)");
  CAF_CHECK(s.decisions.front().sub_workflows.empty());
}

CAF_TEST(event publishes the input with the workflow fields to the outbox) {
  auto def = test::workflow(R"({"name":"orders","version":3,"tasks":[
    {"name":"notify","taskReferenceName":"notify","type":"EVENT","sink":"conductor:shipping",
     "inputParameters":{"order":"${workflow.input.order}"}},
    {"name":"bare","taskReferenceName":"bare","type":"EVENT","sink":"conductor"}]})");
  snapshot snap = start_snapshot(def, "wf-1", test::object(R"({"order":5})"), 0);
  snap.correlation_id = "c-1";
  auto d = decide(def, {}, snap, 0);
  CAF_REQUIRE_EQUAL(d.schedule.size(), 2u);
  CAF_CHECK(d.schedule[0].status == task_status::completed);
  CAF_CHECK_EQUAL(json(d.schedule[0].output),
                  canonical(R"({"order":5,"sink":"conductor:shipping","workflowInstanceId":"wf-1",
                               "workflowType":"orders","workflowVersion":3,"correlationId":"c-1",
                               "event_produced":"conductor:orders:shipping"})"));
  CAF_CHECK_EQUAL(d.schedule[1].output.at("event_produced").as_string(),
                  "conductor:orders:bare");
  const event* published = nullptr;
  const event* completed = nullptr;
  for (const auto& e : d.events) {
    if (e.key == "event.published/notify/0/0")
      published = &e;
    if (e.key == "task.completed/notify/0/0")
      completed = &e;
  }
  CAF_REQUIRE(published != nullptr);
  CAF_CHECK_EQUAL(published->type, "event.published");
  CAF_CHECK_EQUAL(published->payload.at("queue").as_string(), "conductor:orders:shipping");
  CAF_CHECK_EQUAL(json(published->payload.at("message")),
                  canonical(R"({"order":5,"sink":"conductor:shipping","workflowInstanceId":"wf-1",
                               "workflowType":"orders","workflowVersion":3,
                               "correlationId":"c-1"})"));
  CAF_REQUIRE(completed != nullptr);
  CAF_CHECK_EQUAL(completed->payload.at("event_produced").as_string(),
                  "conductor:orders:shipping");
  CAF_CHECK(d.status == workflow_status::completed);
}

CAF_TEST(validation names the field of each new type) {
  auto p = problems_of(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION","caseExpression":"$.a.map(x => x).length",
     "decisionCases":{"a":[{"name":"a","taskReferenceName":"a","type":"NOOP"}]}}]})");
  CAF_CHECK(says(p, "tasks[0].caseExpression: unsupported expression"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION","caseValueParam":"k",
     "decisionCases":{"a":[{"name":"a","taskReferenceName":"a","type":"NOOP"}]}}]})");
  CAF_CHECK(says(p, "tasks[0].caseValueParam: \"k\" is not one of this task's inputParameters"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"d","taskReferenceName":"d","type":"DECISION","inputParameters":{"k":1},
     "decisionCases":{"a":[{"name":"a","taskReferenceName":"a","type":"NOOP"}]}}]})");
  CAF_CHECK(says(p, "tasks[0]: a DECISION needs caseValueParam or caseExpression"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"n","taskReferenceName":"n","type":"NOOP","caseValueParam":"k","sink":"conductor"}]})");
  CAF_CHECK(says(p, "tasks[0].caseValueParam: only allowed on DECISION tasks"));
  CAF_CHECK(says(p, "tasks[0].sink: only allowed on EVENT tasks"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"j","taskReferenceName":"j","type":"EXCLUSIVE_JOIN","joinOn":["later","ghost"],
     "defaultExclusiveJoinTask":["nowhere"]},
    {"name":"later","taskReferenceName":"later","type":"NOOP"}]})");
  CAF_CHECK(says(p, "tasks[0].joinOn[0]: task reference \"later\" does not run before this task"));
  CAF_CHECK(says(p, "tasks[0].joinOn[1]: unknown task reference \"ghost\""));
  CAF_CHECK(says(p, "tasks[0].defaultExclusiveJoinTask[0]: unknown task reference \"nowhere\""));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"j","taskReferenceName":"j","type":"EXCLUSIVE_JOIN"}]})");
  CAF_CHECK(says(p, "tasks[0].joinOn: expected the reference names"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"x","taskReferenceName":"x","type":"DYNAMIC","dynamicTaskNameParam":"t"}]})");
  CAF_CHECK(says(p, "tasks[0].dynamicTaskNameParam: \"t\" is not one of this task's inputParameters"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"s","taskReferenceName":"s","type":"START_WORKFLOW",
     "inputParameters":{"startWorkflow":{"name":"c","taskToDomain":{"a":"b"},"extra":1,
                                         "version":0}}}]})");
  CAF_CHECK(says(p, "tasks[0].inputParameters.startWorkflow.taskToDomain: not supported"));
  CAF_CHECK(says(p, "tasks[0].inputParameters.startWorkflow.extra: unknown field"));
  CAF_CHECK(says(p, "tasks[0].inputParameters.startWorkflow.version: expected a version"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"s","taskReferenceName":"s","type":"START_WORKFLOW"}]})");
  CAF_CHECK(says(p, "tasks[0].inputParameters.startWorkflow: missing required field"));
  p = problems_of(R"({"name":"w","tasks":[
    {"name":"e","taskReferenceName":"e","type":"EVENT","sink":"sqs:orders"},
    {"name":"f","taskReferenceName":"f","type":"EVENT","sink":"kafka:topic"},
    {"name":"g","taskReferenceName":"g","type":"EVENT"},
    {"name":"h","taskReferenceName":"h","type":"EVENT","sink":"carrier-pigeon"}]})");
  CAF_CHECK(says(p, "tasks[0].sink: \"sqs:orders\": nodeflow has no sqs client"));
  CAF_CHECK(says(p, "tasks[1].sink: \"kafka:topic\": nodeflow has no kafka client"));
  CAF_CHECK(says(p, "tasks[2].sink: missing required field"));
  CAF_CHECK(says(p, "tasks[3].sink: expected \"conductor\" or \"conductor:<queue>\""));
}

CAF_TEST(the new fields round trip) {
  auto def = test::workflow(decision_by_param);
  auto again = test::workflow(json(to_json(def)));
  CAF_CHECK(def == again);
  CAF_CHECK_EQUAL(again.tasks[0].case_value_param, "kind");
  CAF_CHECK_EQUAL(again.tasks[1].default_exclusive_join_task.at(0), "other");
  auto more = test::workflow(R"({"name":"w","tasks":[
    {"name":"x","taskReferenceName":"x","type":"DYNAMIC","dynamicTaskNameParam":"t",
     "inputParameters":{"t":"a"}},
    {"name":"e","taskReferenceName":"e","type":"EVENT","sink":"conductor:q"},
    {"name":"d","taskReferenceName":"d","type":"DECISION","caseExpression":"$.t",
     "inputParameters":{"t":"a"},"defaultCase":[{"name":"h","taskReferenceName":"h","type":"HUMAN"}]}]})");
  CAF_CHECK(more == test::workflow(json(to_json(more))));
}

CAF_TEST(the new labels parse back) {
  for (auto t : {task_type::noop, task_type::human, task_type::decision,
                 task_type::exclusive_join, task_type::dynamic, task_type::start_workflow,
                 task_type::event})
    CAF_CHECK(parse_task_type(to_string(t)) == t);
  CAF_CHECK_EQUAL(to_string(task_type::exclusive_join), "EXCLUSIVE_JOIN");
  CAF_CHECK(is_inline(task_type::decision) && is_composite(task_type::decision));
  CAF_CHECK(!is_inline(task_type::human) && !is_inline(task_type::start_workflow));
}

CAF_TEST(an event sink given by an expression is checked once resolved) {
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"e","taskReferenceName":"e","type":"EVENT","sink":"${workflow.input.sink}"}]})");
  sim refused(def, {}, R"({"sink":"sqs:q"})");
  CAF_CHECK(refused.task("e").status == task_status::failed);
  CAF_CHECK_EQUAL(refused.task("e").reason_for_incompletion.rfind(
                    "sink: \"sqs:q\": nodeflow has no sqs client", 0),
                  0u);
  CAF_CHECK(refused.snap.status == workflow_status::failed);
  sim delivered(def, {}, R"({"sink":"conductor:q"})");
  CAF_CHECK(delivered.snap.status == workflow_status::completed);
  CAF_CHECK_EQUAL(delivered.task("e").output.at("event_produced").as_string(), "conductor:w:q");
  CAF_CHECK_EQUAL(delivered.task("e").output.at("sink").as_string(), "conductor:q");
}

CAF_TEST(retrying a workflow whose START_WORKFLOW failed starts the workflow again) {
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"kick","taskReferenceName":"kick","type":"START_WORKFLOW",
     "inputParameters":{"startWorkflow":{"name":"child","input":{"n":1}}}}]})");
  sim s(def);
  s.snap.correlation_id = "c-7";
  // What the engine does when the workflow cannot start (its definition is missing).
  s.fail("kick", "startWorkflow: workflow \"child\" could not start");
  CAF_REQUIRE(s.snap.status == workflow_status::failed);
  auto r = retry_last_failed(def, {}, s.snap, s.now);
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r.value.schedule.size(), 1u);
  CAF_CHECK_EQUAL(test::label(r.value.schedule[0].id), "kick+1");
  CAF_REQUIRE_EQUAL(r.value.sub_workflows.size(), 1u);
  const auto& start = r.value.sub_workflows[0];
  CAF_CHECK(start.detached);
  CAF_CHECK(start.parent == r.value.schedule[0].id);
  CAF_CHECK_EQUAL(start.name, "child");
  CAF_CHECK_EQUAL(start.correlation_id, "c-7");
  CAF_CHECK_EQUAL(json(start.input), R"({"n":1})");
}
