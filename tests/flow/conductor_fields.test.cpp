#define CAF_SUITE flow.conductor_fields
#include "caf/test/unit_test.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "flow/decide.hpp"
#include "flow/parse.hpp"
#include "flow/serialise.hpp"
#include "flow/validate.hpp"
#include "sim.hpp"

using namespace nf::flow;
using nf::flow::test::sim;

namespace {

task_def_map one(const char* json) {
  auto d = nf::flow::test::task_definition(json);
  return {{d.name, d}};
}

// Every problem of loading `json` as a workflow, one per line.
std::string problems_of(const std::string& json) {
  auto l = load_workflow_def(json);
  std::string out;
  for (const auto& p : l.errors)
    out += to_string(p) + "\n";
  return out;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string with_task(const std::string& task_fields) {
  return R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a")" + task_fields + "}]}";
}

}  // namespace

CAF_TEST(a workflow task's retryCount overrides its definition's) {
  auto defs = one(R"({"name":"a","retryCount":0,"retryDelaySeconds":0})");
  {
    sim s(test::workflow(with_task(R"(,"retryCount":2)")), defs);
    s.fail("a");
    s.fail("a");
    s.complete("a");
    CAF_CHECK_EQUAL(s.scheduled(), "a a+1 a+2");
    CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  }
  {
    sim s(test::workflow(with_task(R"(,"retryCount":0)")),
          one(R"({"name":"a","retryCount":3,"retryDelaySeconds":0})"));
    s.fail("a");
    CAF_CHECK_EQUAL(s.scheduled(), "a");
    CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  }
}

CAF_TEST(an inline taskDefinition is used instead of the registered one) {
  auto def = test::workflow(with_task(
    R"(,"taskDefinition":{"name":"a","retryCount":1,"retryDelaySeconds":7,"queueName":"inline_q",
        "inputTemplate":{"lang":"en"}})"));
  sim s(def, one(R"({"name":"a","retryCount":0,"queueName":"registered_q"})"));
  const auto& first = s.decisions.front().schedule.at(0);
  CAF_CHECK_EQUAL(first.queue, "inline_q");
  CAF_CHECK_EQUAL(boost::json::serialize(first.input), R"({"lang":"en"})");
  s.fail("a");
  CAF_CHECK_EQUAL(s.scheduled(), "a a+1");
  std::int64_t retry_delay = -1;
  for (const auto& d : s.decisions)
    for (const auto& st : d.schedule)
      if (st.id.attempt == 1)
        retry_delay = st.start_delay_ms;
  CAF_CHECK_EQUAL(retry_delay, 7000);
}

CAF_TEST(cacheConfig sets the output cache of a task) {
  sim s(test::workflow(with_task(
    R"(,"inputParameters":{"u":"${workflow.input.u}"},"cacheConfig":{"key":"k-${u}","ttlInSecond":"2500"})")),
        {}, R"({"u":"x"})");
  const auto& st = s.decisions.front().schedule.at(0);
  CAF_CHECK_EQUAL(st.cache_ttl_seconds, 2500);
  CAF_CHECK_EQUAL(st.cache_key, "k-x");
  CAF_CHECK(mentions(problems_of(with_task(R"(,"cacheConfig":{"key":"k"})")),
                     "cacheConfig.ttlInSecond: missing required field"));
}

CAF_TEST(a cached output completes the task in the decision that would schedule it) {
  auto def = test::workflow(R"({"name":"w","tasks":[
    {"name":"a","taskReferenceName":"a","inputParameters":{"u":"${workflow.input.u}"},
     "cacheConfig":{"key":"k-${u}","ttlInSecond":60}},
    {"name":"b","taskReferenceName":"b","inputParameters":{"v":"${a.output.v}"}}]})");
  auto snap = start_snapshot(def, "wf", test::object(R"({"u":"x"})"), 1000);
  task_def_map defs{{"a", test::task_definition(
                            R"({"name":"a","pollTimeoutSeconds":5,"timeoutSeconds":50,
                                  "responseTimeoutSeconds":10})")}};
  // Without an entry for its key: scheduled for a worker, with the key and TTL to cache by,
  // and its timers armed.
  auto miss = decide(def, defs, snap, 1000);
  CAF_CHECK(!miss.arm.empty());
  CAF_REQUIRE_EQUAL(miss.schedule.size(), 1u);
  CAF_CHECK_EQUAL(to_string(miss.schedule[0].status), "SCHEDULED");
  CAF_CHECK_EQUAL(miss.schedule[0].cache_key, "k-x");
  // Another task definition's entry for the same key does not answer it.
  cached_outputs other{{{"z", "k-x"}, test::object(R"({"v":7})")}};
  CAF_CHECK_EQUAL(to_string(decide(def, defs, snap, 1000, &other).schedule.at(0).status),
                  "SCHEDULED");
  cached_outputs cached{{{"a", "k-x"}, test::object(R"({"v":7})")}};
  auto hit = decide(def, defs, snap, 1000, &cached);
  CAF_REQUIRE_EQUAL(hit.schedule.size(), 2u);
  const auto& a = hit.schedule[0];
  CAF_CHECK_EQUAL(to_string(a.status), "COMPLETED");
  CAF_CHECK_EQUAL(boost::json::serialize(a.output), R"({"v":7})");
  CAF_CHECK(a.cache_key.empty());
  // The workflow goes on with the cached output; a's worker timers are never armed (b, with
  // no registered definition, has none).
  CAF_CHECK_EQUAL(boost::json::serialize(hit.schedule[1].input), R"({"v":7})");
  CAF_CHECK(hit.arm.empty());
  bool said_cached = false;
  for (const auto& e : hit.events)
    if (e.type == "task.completed" && e.payload.at("ref") == boost::json::value("a"))
      said_cached = e.payload.at("cached") == boost::json::value(true)
                    && e.payload.at("cacheKey") == boost::json::value("k-x");
  CAF_CHECK(said_cached);
}

CAF_TEST(a permissive failure lets the workflow go on and fails it at the end) {
  sim s(test::workflow(R"({"name":"w","tasks":[
          {"name":"a","taskReferenceName":"a","permissive":true},
          {"name":"b","taskReferenceName":"b"}]})"));
  s.fail("a");
  CAF_CHECK_EQUAL(s.scheduled(), "a b");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "RUNNING");
  s.complete("b");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  CAF_CHECK(mentions(s.snap.reason_for_incompletion, "\"a\""));
  // Optional wins over permissive: the failure is forgiven.
  sim o(test::workflow(R"({"name":"w","tasks":[
          {"name":"a","taskReferenceName":"a","permissive":true,"optional":true},
          {"name":"b","taskReferenceName":"b"}]})"));
  o.fail("a");
  o.complete("b");
  CAF_CHECK_EQUAL(to_string(o.snap.status), "COMPLETED");
}

CAF_TEST(a permissive failure in an earlier loop iteration fails the workflow at its end) {
  sim s(test::workflow(R"({"name":"w","tasks":[
          {"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
           "loopCondition":"$.loop['iteration'] < 2",
           "loopOver":[{"name":"a","taskReferenceName":"a","permissive":true}]},
          {"name":"b","taskReferenceName":"b"}]})"));
  s.fail("a", "boom", 1);
  s.complete("a", "{}", 2);
  CAF_CHECK_EQUAL(s.scheduled(), "loop a@1 a@2 b");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "RUNNING");
  s.complete("b");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  CAF_CHECK(mentions(s.snap.reason_for_incompletion, "\"a\""));
}

CAF_TEST(a permissive failure in a fork lets the other branches finish then fails the join) {
  sim s(test::workflow(R"({"name":"w","tasks":[
          {"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
            [{"name":"a","taskReferenceName":"a","permissive":true}],
            [{"name":"b","taskReferenceName":"b"}]]},
          {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["a","b"]},
          {"name":"c","taskReferenceName":"c"}]})"));
  s.fail("a");
  CAF_CHECK_EQUAL(to_string(s.task("b").status), "SCHEDULED");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "RUNNING");
  s.complete("b");
  CAF_CHECK_EQUAL(to_string(s.task("join").status), "FAILED");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  CAF_CHECK_EQUAL(s.scheduled(), "fork a b join");
}

CAF_TEST(workflowStatusListenerEnabled publishes the end of the workflow) {
  auto events_of = [](bool enabled) {
    auto def = test::workflow(R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}],
                                   "workflowStatusListenerEnabled":)"
                              + std::string(enabled ? "true" : "false") + "}");
    sim s(def, {}, R"({"n":1})");
    s.complete("a", R"({"r":2})");
    return std::make_pair(s.events(), s.ending());
  };
  auto [on, ending] = events_of(true);
  CAF_CHECK(mentions(on, "workflow.completed workflow.status_listener"));
  const event* listener = nullptr;
  for (const auto& e : ending.events)
    if (e.type == "workflow.status_listener")
      listener = &e;
  CAF_REQUIRE(listener != nullptr);
  CAF_CHECK_EQUAL(boost::json::serialize(listener->payload),
                  R"({"workflowType":"w","version":1,"status":"COMPLETED","input":{"n":1},)"
                  R"("output":{"r":2}})");
  CAF_CHECK(!mentions(events_of(false).first, "workflow.status_listener"));
}

CAF_TEST(asyncComplete holds on worker tasks and is refused where nodeflow completes the task) {
  auto simple = load_workflow_def(with_task(R"(,"asyncComplete":true)"));
  CAF_CHECK(simple.ok());
  CAF_CHECK(simple.def.tasks.at(0).async_complete);
  auto again = load_workflow_def(boost::json::serialize(to_json(simple.def)));
  CAF_CHECK(again.ok());
  CAF_CHECK(again.def == simple.def);
  auto http = problems_of(
    with_task(R"(,"type":"HTTP","asyncComplete":true,"inputParameters":{"http_request":{"uri":"http://x","method":"GET"}})"));
  CAF_CHECK(mentions(http, "tasks[0].asyncComplete: nodeflow completes a HTTP task itself"));
  CAF_CHECK(load_workflow_def(with_task(R"(,"type":"HTTP","asyncComplete":false,
      "inputParameters":{"http_request":{"uri":"http://x","method":"GET"}})")).ok());
}

CAF_TEST(metadata is kept and written back) {
  const std::string exported = R"({"ownerApp":"billing","createTime":1718465549476,
    "updateTime":1718464909124,"createdBy":"ann@example.com","updatedBy":null,"accessPolicy":{},
    "tags":[{"key":"team","value":"billing"}],"metadata":{"tier":1},"enforceSchema":true,
    "name":"w","description":"d","version":3,"inputTemplate":{"currency":"EUR"},
    "workflowStatusListenerEnabled":true,"workflowStatusListenerSink":null,"rateLimitConfig":null,
    "tasks":[{"name":"a","taskReferenceName":"a","type":"SIMPLE","startDelay":0,"optional":false,
      "asyncComplete":false,"permissive":false,"retryCount":1,"sink":null,"caseValueParam":null,
      "dynamicTaskNameParam":null,"scriptExpression":null,"defaultExclusiveJoinTask":[],
      "decisionCases":{},"defaultCase":[],"forkTasks":[],"joinOn":[],"loopOver":[],
      "onStateChange":{},"rateLimited":false,"workflowTaskType":"SIMPLE",
      "taskDefinition":{"name":"a","ownerApp":null,"createTime":5,"retryCount":2,
        "isolationGroupId":null,"executionNameSpace":"","accessPolicy":{}}}]})";
  auto l = load_workflow_def(exported);
  for (const auto& p : l.errors)
    CAF_MESSAGE(to_string(p));
  CAF_REQUIRE(l.ok());
  auto out = to_json(l.def).as_object();
  CAF_CHECK_EQUAL(out.at("ownerApp").as_string(), "billing");
  CAF_CHECK_EQUAL(out.at("createTime").as_int64(), 1718465549476);
  CAF_CHECK_EQUAL(out.at("createdBy").as_string(), "ann@example.com");
  CAF_CHECK(!out.contains("updatedBy"));  // null is absent
  CAF_CHECK_EQUAL(boost::json::serialize(out.at("tags")), R"([{"key":"team","value":"billing"}])");
  CAF_CHECK_EQUAL(boost::json::serialize(out.at("inputTemplate")), R"({"currency":"EUR"})");
  CAF_CHECK(out.at("workflowStatusListenerEnabled").as_bool());
  const auto& task = out.at("tasks").as_array().at(0).as_object();
  CAF_CHECK_EQUAL(task.at("retryCount").as_int64(), 1);
  CAF_CHECK_EQUAL(task.at("taskDefinition").as_object().at("createTime").as_int64(), 5);
  auto again = load_workflow_def(boost::json::serialize(out));
  CAF_REQUIRE(again.ok());
  CAF_CHECK(again.def == l.def);
}

CAF_TEST(fields of other task types are accepted empty) {
  CAF_CHECK(load_workflow_def(with_task(
    R"(,"sink":null,"dynamicTaskNameParam":null,"caseExpression":"","defaultExclusiveJoinTask":null)")).ok());
  CAF_CHECK(mentions(problems_of(with_task(R"(,"defaultExclusiveJoinTask":["x"])")),
                     "tasks[0].defaultExclusiveJoinTask"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"noSuchField":1)")),
                     "tasks[0].noSuchField: unknown field"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"workflowTaskType":"HTTP")")),
                     "tasks[0].workflowTaskType: expected the task's type (SIMPLE)"));
}

CAF_TEST(what nodeflow cannot honour is refused with the reason) {
  auto wf = [](const std::string& fields) {
    return problems_of(R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}])" + fields
                       + "}");
  };
  CAF_CHECK(mentions(problems_of(with_task(R"(,"type":"KAFKA_PUBLISH")")),
                     "tasks[0].type: KAFKA_PUBLISH needs a Kafka broker, which nodeflow does not "
                     "connect to"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"type":"JDBC")")), "tasks[0].type: JDBC needs"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"type":"LLM_TEXT_COMPLETE")")),
                     "AI model provider"));
  CAF_CHECK(mentions(wf(R"(,"workflowStatusListenerSink":"kafka:done")"),
                     "workflowStatusListenerSink: nodeflow has no status listener sinks"));
  CAF_CHECK(mentions(wf(R"(,"rateLimitConfig":{"rateLimitKey":"k","concurrentExecLimit":2})"),
                     "rateLimitConfig: nodeflow does not limit"));
  CAF_CHECK(mentions(wf(R"(,"inputSchema":{"name":"s"},"enforceSchema":true)"),
                     "inputSchema: nodeflow does not validate data against a schema"));
  CAF_CHECK(wf(R"(,"inputSchema":{"name":"s"},"enforceSchema":false)").empty());
  CAF_CHECK(mentions(problems_of(with_task(R"(,"onStateChange":{"onFailed":[{"type":"q"}]})")),
                     "tasks[0].onStateChange: nodeflow does not publish"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"joinMode":"SYNC")")),
                     "tasks[0].joinMode: only allowed on JOIN tasks"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"joinMode":"LATER")")),
                     "tasks[0].joinMode: expected one of SYNC, ASYNC"));
  CAF_CHECK(mentions(problems_of(with_task(
                       R"(,"taskDefinition":{"name":"a","responseTimeoutSeconds":600})")),
                     "tasks[0].taskDefinition.responseTimeoutSeconds: responseTimeoutSeconds is "
                     "read from the registered task definition"));
  CAF_CHECK(mentions(problems_of(with_task(R"(,"taskDefinition":{"name":"b"})")),
                     "tasks[0].taskDefinition.name: expected the task's name"));
  auto td = load_task_def(R"({"name":"t","isolationGroupId":"gpu","createTime":1,"baseType":"x"})");
  CAF_CHECK(!td.ok());
  CAF_CHECK(mentions(to_string(td.errors.at(0)), "isolationGroupId: nodeflow has no isolated"));
  auto kept = load_task_def(R"({"name":"t","isolationGroupId":null,"executionNameSpace":"",
                                "createTime":1,"ownerApp":"app","accessPolicy":{}})");
  CAF_REQUIRE(kept.ok());
  CAF_CHECK_EQUAL(to_json(kept.def).as_object().at("ownerApp").as_string(), "app");
}

CAF_TEST(a workflow inputTemplate and status listener flag round trip) {
  auto l = load_workflow_def(R"({"name":"w","tasks":[{"name":"j","taskReferenceName":"f",
      "type":"FORK_JOIN","forkTasks":[[{"name":"a","taskReferenceName":"a"}]]},
      {"name":"j","taskReferenceName":"j","type":"JOIN","joinOn":["a"],"joinMode":"SYNC"}],
      "inputTemplate":{"x":1}})");
  CAF_REQUIRE(l.ok());
  CAF_CHECK_EQUAL(l.def.tasks.at(1).join_mode, "SYNC");
  auto again = load_workflow_def(boost::json::serialize(to_json(l.def)));
  CAF_REQUIRE(again.ok());
  CAF_CHECK(again.def == l.def);
}
