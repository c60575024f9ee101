#define CAF_SUITE flow.decide
#include "caf/test/unit_test.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "flow/parse.hpp"
#include "flow/retry.hpp"
#include "sim.hpp"

using namespace nf::flow;
using nf::flow::test::sim;

namespace {

// One scripted execution: the definition, what the "world" does, and what
// decide() must have produced.
struct script_case {
  const char* name;
  const char* defs;  // JSON array of task definitions, or nullptr
  const char* def;
  const char* input;
  std::vector<std::string> steps;  // "complete ref[@i] {json}", "fail[!] ref", "advance ms", "signal n {json}"
  const char* scheduled;
  const char* status;
  const char* output;  // expected workflow output, or nullptr
};

task_def_map definitions(const char* json) {
  task_def_map out;
  if (json == nullptr)
    return out;
  auto list = boost::json::parse(json);
  for (const auto& v : list.as_array()) {
    auto d = nf::flow::test::task_definition(boost::json::serialize(v));
    out.emplace(d.name, d);
  }
  return out;
}

void play(sim& s, const std::string& step) {
  auto sp1 = step.find(' ');
  auto verb = step.substr(0, sp1);
  auto rest = sp1 == std::string::npos ? std::string() : step.substr(sp1 + 1);
  auto sp2 = rest.find(' ');
  auto target = rest.substr(0, sp2);
  auto arg = sp2 == std::string::npos ? std::string("{}") : rest.substr(sp2 + 1);
  std::int32_t iteration = 0;
  if (auto at = target.find('@'); at != std::string::npos) {
    iteration = std::stoi(target.substr(at + 1));
    target = target.substr(0, at);
  }
  if (verb == "complete")
    s.complete(target, arg, iteration);
  else if (verb == "fail")
    s.fail(target, arg, iteration);
  else if (verb == "fail!")
    s.fail(target, arg, iteration, task_status::failed_with_terminal_error);
  else if (verb == "start")
    s.start(target, iteration);
  else if (verb == "advance")
    s.advance(std::stoll(target));
  else if (verb == "signal")
    s.signal(target, arg);
  else if (verb == "ref-complete")
    s.update_by_ref(target, "COMPLETED", arg);
  else if (verb == "ref-fail")
    s.update_by_ref(target, "FAILED", arg);
  else if (verb == "ref-fail!")
    s.update_by_ref(target, "FAILED_WITH_TERMINAL_ERROR", arg);
  else
    CAF_FAIL("unknown step " << step);
}

const std::vector<script_case> cases = {
  {"sequence", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"},{"name":"b","taskReferenceName":"b"},
       {"name":"c","taskReferenceName":"c"}]})",
   "{}", {"complete a {\"x\":1}", "complete b", "complete c {\"y\":2}"}, "a b c", "COMPLETED",
   R"({"y":2})"},
  {"output parameters and expressions", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","inputParameters":{"v":"${workflow.input.n}"}}],
       "outputParameters":{"sum":"${a.output.s}","id":"${workflow.workflowId}","missing":"${a.output.nope}",
       "text":"n=${workflow.input.n}","in":"${a.input.v}","list":"${a.output.l[1]}"}})",
   R"({"n":5})", {"complete a {\"s\":7,\"l\":[1,{\"z\":null}]}"}, "a", "COMPLETED",
   R"({"sum":7,"id":"wf-1","missing":null,"text":"n=5","in":5,"list":{"z":null}})"},
  {"path functions", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","inputParameters":{"n":"${workflow.input.l.length()}",
       "top":"${workflow.input.l.max()}","raw":"$${workflow.input.l.max()}"}}],
       "outputParameters":{"n":"${a.input.n}","top":"${a.input.top}","raw":"${a.input.raw}",
       "keys":"${a.output.o.keys()}","first":"${a.output.o.b.first()}"}})",
   R"({"l":[4,9,2]})", {R"(complete a {"o":{"b":["x","y"],"c":1}})"}, "a", "COMPLETED",
   R"({"n":3,"top":9.0,"raw":"${workflow.input.l.max()}","keys":["b","c"],"first":"x"})"},
  {"a failed path function fails its task", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","inputParameters":{"top":"${workflow.input.l.max()}"}},
       {"name":"b","taskReferenceName":"b"}]})",
   R"({"l":["x"]})", {}, "a", "FAILED", nullptr},
  {"a failed path function in outputParameters fails the workflow", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}],
       "outputParameters":{"last":"${a.output.l.last()}"}})",
   "{}", {"complete a {\"l\":[]}"}, "a", "FAILED", nullptr},
  {"switch value-param", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"value-param",
       "expression":"kind","inputParameters":{"kind":"${workflow.input.kind}"},
       "decisionCases":{"fast":[{"name":"f1","taskReferenceName":"f1"}],
                        "slow":[{"name":"s1","taskReferenceName":"s1"},{"name":"s2","taskReferenceName":"s2"}]},
       "defaultCase":[{"name":"d1","taskReferenceName":"d1"}]},{"name":"z","taskReferenceName":"z"}]})",
   R"({"kind":"slow"})", {"complete s1", "complete s2", "complete z"}, "sw s1 s2 z", "COMPLETED",
   nullptr},
  {"switch default case", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"value-param",
       "expression":"kind","inputParameters":{"kind":"${workflow.input.kind}"},
       "decisionCases":{"42x":[{"name":"f1","taskReferenceName":"f1"}]},
       "defaultCase":[{"name":"d1","taskReferenceName":"d1"}]},{"name":"z","taskReferenceName":"z"}]})",
   R"({"kind":42})", {"complete d1", "complete z"}, "sw d1 z", "COMPLETED", nullptr},
  {"switch number label", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"value-param",
       "expression":"kind","inputParameters":{"kind":"${workflow.input.kind}"},
       "decisionCases":{"42":[{"name":"f1","taskReferenceName":"f1"}]}}]})",
   R"({"kind":42})", {"complete f1"}, "sw f1", "COMPLETED", nullptr},
  {"switch javascript", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"javascript",
       "expression":"$.n > 5 ? 'big' : 'small'","inputParameters":{"n":"${workflow.input.n}"},
       "decisionCases":{"big":[{"name":"b","taskReferenceName":"b"}],"small":[{"name":"s","taskReferenceName":"s"}]}}]})",
   R"({"n":9})", {"complete b"}, "sw b", "COMPLETED", nullptr},
  {"switch if-else statement", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"graaljs",
       "expression":"if ($.n > 5) { 'big'; } else { return 'small'; }","inputParameters":{"n":"${workflow.input.n}"},
       "decisionCases":{"big":[{"name":"b","taskReferenceName":"b"}],"small":[{"name":"s","taskReferenceName":"s"}]}}]})",
   R"({"n":1})", {"complete s"}, "sw s", "COMPLETED", nullptr},
  {"switch expression error fails the workflow", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"javascript",
       "expression":"$.n * 2","inputParameters":{"n":"${workflow.input.n}"},
       "decisionCases":{"2":[{"name":"b","taskReferenceName":"b"}]}}]})",
   R"({"n":"x"})", {}, "sw", "FAILED", nullptr},
  {"fork and join", nullptr,
   R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
       [{"name":"a1","taskReferenceName":"a1"},{"name":"a2","taskReferenceName":"a2"}],
       [{"name":"b1","taskReferenceName":"b1"}]]},
       {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["a2","b1"]},
       {"name":"c","taskReferenceName":"c"}],
       "outputParameters":{"a2":"${join.output.a2.v}","b1":"${join.output.b1.v}"}})",
   "{}", {"complete a1", "complete b1 {\"v\":1}", "complete a2 {\"v\":2}", "complete c"},
   "fork a1 b1 join a2 c", "COMPLETED", R"({"a2":2,"b1":1})"},
  {"join skips a task of a case not taken", nullptr,
   R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
       [{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"value-param","expression":"k",
         "inputParameters":{"k":"no"},"decisionCases":{"yes":[{"name":"y","taskReferenceName":"y"}]}}],
       [{"name":"b1","taskReferenceName":"b1"}]]},
       {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["y","b1"]}]})",
   "{}", {"complete b1 {\"v\":1}"}, "fork sw b1 join", "COMPLETED", R"({"b1":{"v":1}})"},
  {"dynamic fork", nullptr,
   R"({"name":"w","tasks":[{"name":"df","taskReferenceName":"df","type":"FORK_JOIN_DYNAMIC",
       "inputParameters":{"tasks":"${workflow.input.tasks}","inputs":"${workflow.input.inputs}"},
       "dynamicForkTasksParam":"tasks","dynamicForkTasksInputParamName":"inputs"},
       {"name":"join","taskReferenceName":"join","type":"JOIN"}]})",
   R"({"tasks":[{"name":"t","taskReferenceName":"d1"},{"name":"t","taskReferenceName":"d2"}],
       "inputs":{"d1":{"k":1},"d2":{"k":2}}})",
   {"complete d2 {\"r\":2}", "complete d1 {\"r\":1}"}, "df d1 d2 join", "COMPLETED",
   R"({"d1":{"r":1},"d2":{"r":2}})"},
  {"dynamic fork with unusable tasks fails", nullptr,
   R"({"name":"w","tasks":[{"name":"df","taskReferenceName":"df","type":"FORK_JOIN_DYNAMIC",
       "inputParameters":{"tasks":"${workflow.input.tasks}","inputs":{}},
       "dynamicForkTasksParam":"tasks","dynamicForkTasksInputParamName":"inputs"},
       {"name":"join","taskReferenceName":"join","type":"JOIN"}]})",
   R"({"tasks":[{"name":"t","taskReferenceName":"df"}]})", {}, "df", "FAILED", nullptr},
  {"do while on iteration", nullptr,
   R"({"name":"w","tasks":[{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
       "loopCondition":"$.loop['iteration'] < 3","loopOver":[{"name":"x","taskReferenceName":"x"}]},
       {"name":"y","taskReferenceName":"y"}]})",
   "{}", {"complete x@1", "complete x@2", "complete x@3", "complete y"}, "loop x@1 x@2 x@3 y",
   "COMPLETED", nullptr},
  {"do while on outputs", nullptr,
   R"({"name":"w","tasks":[{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
       "loopCondition":"$.x.more","loopOver":[{"name":"x","taskReferenceName":"x"}]}]})",
   "{}", {"complete x@1 {\"more\":true}", "complete x@2 {\"more\":false}"}, "loop x@1 x@2",
   "COMPLETED", R"({"iteration":2,"1":{"x":{"more":true}},"2":{"x":{"more":false}}})"},
  {"do while of inline tasks runs inside one decide", nullptr,
   R"({"name":"w","tasks":[{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
       "loopCondition":"iteration < 3","loopOver":[{"name":"v","taskReferenceName":"v","type":"SET_VARIABLE",
       "inputParameters":{"last":"${loop.output.iteration}"}}]}],
       "outputParameters":{"last":"${workflow.variables.last}"}})",
   "{}", {}, "loop v@1 v@2 v@3", "COMPLETED", R"({"last":3})"},
  {"sub workflow", nullptr,
   R"({"name":"w","tasks":[{"name":"sub","taskReferenceName":"sub","type":"SUB_WORKFLOW",
       "subWorkflowParam":{"name":"child","version":2},"inputParameters":{"a":1}}]})",
   "{}", {"complete sub {\"r\":1}"}, "sub", "COMPLETED", R"({"r":1})"},
  {"wait for a duration", nullptr,
   R"({"name":"w","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT","inputParameters":{"duration":"2s"}},
       {"name":"a","taskReferenceName":"a"}]})",
   "{}", {"advance 1999", "advance 1", "complete a"}, "w a", "COMPLETED", nullptr},
  {"wait until a time", nullptr,
   R"({"name":"w","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT",
       "inputParameters":{"until":"1970-01-01T00:16:50Z"}}]})",
   "{}", {"advance 9999", "advance 1"}, "w", "COMPLETED", "{}"},
  {"wait for a signal", nullptr,
   R"({"name":"w","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT","inputParameters":{"signal":"approve"}},
       {"name":"a","taskReferenceName":"a"}],"outputParameters":{"by":"${w.output.payload.by}"}})",
   "{}", {"signal other", "advance 60000", "signal approve {\"by\":\"ann\"}", "complete a"}, "w a",
   "COMPLETED", R"({"by":"ann"})"},
  {"wait completed by its ref name", nullptr,
   R"({"name":"w","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT"},
       {"name":"a","taskReferenceName":"a"}],"outputParameters":{"ok":"${w.output.ok}"}})",
   "{}", {"signal w", "advance 60000", "ref-complete w {\"ok\":true}", "complete a"}, "w a",
   "COMPLETED", R"({"ok":true})"},
  {"wait by ref name ends before its duration", nullptr,
   R"({"name":"w","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT",
       "inputParameters":{"duration":"1 hour"}}],"outputParameters":{"n":"${w.output.n}"}})",
   "{}", {"advance 1000", "ref-complete w {\"n\":2}"}, "w", "COMPLETED", R"({"n":2})"},
  {"wait failed by ref name ends the workflow", nullptr,
   R"({"name":"w","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT","inputParameters":{"signal":"go"}},
       {"name":"a","taskReferenceName":"a"}]})",
   "{}", {"ref-complete other {}", "ref-fail! w {\"why\":\"no\"}"}, "w", "FAILED", nullptr},
  {"each loop iteration's WAIT takes its own ref update", nullptr,
   R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l","type":"DO_WHILE",
       "loopCondition":"$.l['iteration'] < 2","loopOver":[{"name":"w","taskReferenceName":"w","type":"WAIT"}]}]})",
   "{}", {"ref-complete w {}", "ref-complete w {}"}, "l w@1 w@2", "COMPLETED", nullptr},
  {"http", nullptr,
   R"({"name":"w","tasks":[{"name":"h","taskReferenceName":"h","type":"HTTP",
       "inputParameters":{"http_request":{"uri":"http://example.invalid/x","method":"GET"}}}]})",
   "{}", {"complete h {\"response\":{\"statusCode\":200}}"}, "h", "COMPLETED",
   R"({"response":{"statusCode":200}})"},
  {"set variable", nullptr,
   R"({"name":"w","tasks":[{"name":"sv","taskReferenceName":"sv","type":"SET_VARIABLE","inputParameters":{"count":"${workflow.input.n}"}},
       {"name":"a","taskReferenceName":"a","inputParameters":{"c":"${workflow.variables.count}"}}],
       "variables":{"count":0,"keep":null},
       "outputParameters":{"c":"${a.input.c}","v":"${workflow.variables.count}","k":"${workflow.variables.keep}"}})",
   R"({"n":3})", {"complete a"}, "sv a", "COMPLETED", R"({"c":3,"v":3,"k":null})"},
  {"terminate", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"},
       {"name":"t","taskReferenceName":"t","type":"TERMINATE","inputParameters":{"terminationStatus":"FAILED",
       "terminationReason":"nope","workflowOutput":{"r":"${a.output.r}"}}}]})",
   "{}", {"complete a {\"r\":1}"}, "a t", "FAILED", R"({"r":1})"},
  {"terminate completed", nullptr,
   R"({"name":"w","tasks":[{"name":"t","taskReferenceName":"t","type":"TERMINATE",
       "inputParameters":{"terminationStatus":"COMPLETED"}}],"outputParameters":{"x":1}})",
   "{}", {}, "t", "COMPLETED", R"({"x":1})"},
  {"json transform", nullptr,
   R"({"name":"w","tasks":[{"name":"jt","taskReferenceName":"jt","type":"JSON_TRANSFORM",
       "inputParameters":{"src":"${workflow.input}","mapping":{"ids":"$.src.items[*].id","first":"$.src.items[0].name",
       "lit":"x","none":"$.src.nope"}}}],"outputParameters":{"r":"${jt.output.result}"}})",
   R"({"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}]})", {}, "jt", "COMPLETED",
   R"({"r":{"ids":[1,2],"first":"a","lit":"x","none":null}})"},
  {"optional failure goes on", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","optional":true},{"name":"b","taskReferenceName":"b"}]})",
   "{}", {"fail a", "complete b"}, "a b", "COMPLETED", nullptr},
  {"failure cancels the other branch", nullptr,
   R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
       [{"name":"a","taskReferenceName":"a"}],[{"name":"b","taskReferenceName":"b"}]]},
       {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["a","b"]}]})",
   "{}", {"fail a"}, "fork a b join", "FAILED", nullptr},
  {"terminal error is never retried", R"([{"name":"a","retryCount":3,"retryDelaySeconds":0}])",
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})", "{}", {"fail! a"}, "a",
   "FAILED", nullptr},
  {"retries then fails", R"([{"name":"a","retryCount":2,"retryDelaySeconds":0}])",
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})", "{}",
   {"fail a", "fail a", "fail a"}, "a a+1 a+2", "FAILED", nullptr},
  {"retry succeeds", R"([{"name":"a","retryCount":2,"retryDelaySeconds":0}])",
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"},{"name":"b","taskReferenceName":"b"}]})",
   "{}", {"fail a", "complete a {\"ok\":1}", "complete b"}, "a a+1 b", "COMPLETED", nullptr},
  {"unregistered task is not retried", nullptr,
   R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})", "{}", {"fail a"}, "a",
   "FAILED", nullptr},
  {"switch inside loop inside fork", nullptr,
   R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
       [{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE","loopCondition":"$.loop.iteration < 2",
         "loopOver":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"javascript",
           "expression":"$.i","inputParameters":{"i":"${loop.output.iteration}"},
           "decisionCases":{"1":[{"name":"one","taskReferenceName":"one"}]},
           "defaultCase":[{"name":"other","taskReferenceName":"other"}]}]}],
       [{"name":"b","taskReferenceName":"b"}]]},
       {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["loop","b"]}]})",
   "{}", {"complete b", "complete one@1", "complete other@2"},
   "fork loop sw@1 one@1 b join sw@2 other@2", "COMPLETED", nullptr},
  {"fork inside a loop inside a switch", nullptr,
   R"({"name":"w","tasks":[{"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"value-param",
       "expression":"mode","inputParameters":{"mode":"${workflow.input.mode}"},
       "decisionCases":{"loop":[{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
         "loopCondition":"$.loop['iteration'] < 2","loopOver":[
           {"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
             [{"name":"p","taskReferenceName":"p"}],[{"name":"q","taskReferenceName":"q"}]]},
           {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["p","q"]}]}]},
       "defaultCase":[{"name":"d","taskReferenceName":"d"}]},
       {"name":"end","taskReferenceName":"end","inputParameters":{"last":"${join.output}"}}]})",
   R"({"mode":"loop"})",
   {"complete p@1", "complete q@1 {\"n\":1}", "complete q@2 {\"n\":2}", "complete p@2", "complete end"},
   "sw loop fork@1 p@1 q@1 join@1 fork@2 p@2 q@2 join@2 end", "COMPLETED", nullptr},
};

}  // namespace

CAF_TEST(scripted executions) {
  for (const auto& c : cases) {
    CAF_MESSAGE("case: " << c.name);
    sim s(nf::flow::test::workflow(c.def), definitions(c.defs), c.input);
    for (const auto& step : c.steps) {
      if (is_terminal(s.snap.status))
        break;
      play(s, step);
    }
    CAF_CHECK_EQUAL(s.scheduled(), c.scheduled);
    CAF_CHECK_EQUAL(to_string(s.snap.status), c.status);
    if (c.output != nullptr)
      CAF_CHECK_EQUAL(boost::json::serialize(s.snap.output),
                      boost::json::serialize(boost::json::parse(c.output)));
  }
}

CAF_TEST(a failed path function names itself in the reason) {
  sim s(nf::flow::test::workflow(
          R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","inputParameters":{"x":{"top":"${workflow.input.l.max()}"}}}]})"),
        {}, R"({"l":[]})");
  CAF_REQUIRE_EQUAL(s.snap.tasks.size(), 1u);
  CAF_CHECK_EQUAL(to_string(s.snap.tasks[0].status), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(s.snap.tasks[0].reason_for_incompletion,
                  R"(inputParameters: "${workflow.input.l.max()}": max() needs an array with at least one number, got none)");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  CAF_CHECK(s.snap.reason_for_incompletion.find("max() needs an array") != std::string::npos);
}

// Conductor's ${ref.<field>}: what a later task reads of an optional task that failed, and
// of one that completed after a retry.
CAF_TEST(expressions read task fields) {
  task_def_map defs{{"a", nf::flow::test::task_definition(R"({"name":"a","retryCount":0})")},
                    {"b", nf::flow::test::task_definition(
                            R"({"name":"b","retryCount":1,"retryDelaySeconds":0})")}};
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","optional":true},
        {"name":"b","taskReferenceName":"b"},
        {"name":"c","taskReferenceName":"c","inputParameters":{
          "aStatus":"${a.status}","aWhy":"${a.reasonForIncompletion}","aType":"${a.taskType}",
          "bStatus":"${b.status}","bRetries":"${b.retryCount}","bWhy":"${b.reasonForIncompletion}",
          "bEnded":"${b.endTime}","ref":"${b.referenceTaskName}","wf":"${b.workflowInstanceId}",
          "text":"a was ${a.status}"}}]})");
  sim s(def, defs, "{}");
  s.fail("a", "no stock");
  s.fail("b");
  s.complete("b");
  const scheduled_task* c = nullptr;
  for (const auto& d : s.decisions)
    for (const auto& t : d.schedule)
      if (t.id.ref == "c")
        c = &t;
  CAF_REQUIRE(c != nullptr);
  CAF_CHECK_EQUAL(c->input.at("aStatus").as_string(), "COMPLETED_WITH_ERRORS");
  CAF_CHECK_EQUAL(c->input.at("aWhy").as_string(), "no stock");
  CAF_CHECK_EQUAL(c->input.at("aType").as_string(), "a");
  CAF_CHECK_EQUAL(c->input.at("bStatus").as_string(), "COMPLETED");
  CAF_CHECK_EQUAL(c->input.at("bRetries").to_number<int64_t>(), 1);
  CAF_CHECK(c->input.at("bWhy").is_null());
  CAF_CHECK(c->input.at("bEnded").to_number<int64_t>() > 0);
  CAF_CHECK_EQUAL(c->input.at("ref").as_string(), "b");
  CAF_CHECK_EQUAL(c->input.at("wf").as_string(), s.snap.workflow_id);
  CAF_CHECK_EQUAL(c->input.at("text").as_string(), "a was COMPLETED_WITH_ERRORS");
}

// ${CPEWF_TASK_ID}: the task is scheduled with an id made for it, which its input holds; a
// retry copies the input with its own id in place of the failed attempt's.
CAF_TEST(a task input naming its own id gets the id it is inserted with) {
  task_def_map defs{{"call", nf::flow::test::task_definition(
                               R"({"name":"call","retryCount":1,"retryDelaySeconds":0})")}};
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"call","taskReferenceName":"c",
        "inputParameters":{"id":"${CPEWF_TASK_ID}","url":"https://x/cb?task=${CPEWF_TASK_ID}",
                           "wf":"${workflow.workflowId}"}},
        {"name":"plain","taskReferenceName":"p"}]})");
  sim s(def, defs, "{}");
  const auto& first = s.decisions.front().schedule.at(0);
  CAF_CHECK_EQUAL(first.task_id, "t1");
  CAF_CHECK_EQUAL(boost::json::serialize(first.input),
                  R"({"id":"t1","url":"https://x/cb?task=t1","wf":"wf-1"})");
  s.fail("c");
  const auto& retry = s.task("c");
  CAF_CHECK_EQUAL(retry.id.attempt, 1);
  CAF_CHECK_EQUAL(retry.task_id, "t2");
  CAF_CHECK_EQUAL(boost::json::serialize(retry.input),
                  R"({"id":"t2","url":"https://x/cb?task=t2","wf":"wf-1"})");
  s.complete("c");
  CAF_CHECK_EQUAL(s.task("p").task_id, "");  // no ${CPEWF_TASK_ID}: the store makes its id
}

CAF_TEST(worker tasks carry queue input and delay) {
  task_def_map defs{{"send", nf::flow::test::task_definition(
                               R"({"name":"send","queueName":"mail","inputTemplate":{"retries":1,"to":"x"}})")}};
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"send","taskReferenceName":"s","startDelay":5,
        "inputParameters":{"to":"${workflow.input.to}"}},{"name":"plain","taskReferenceName":"p"}]})");
  sim s(def, defs, R"({"to":"ann@example.com"})");
  const auto& st = s.decisions.front().schedule.at(0);
  CAF_CHECK_EQUAL(st.queue, "mail");
  CAF_CHECK_EQUAL(st.task_def_name, "send");
  CAF_CHECK_EQUAL(st.start_delay_ms, 5000);
  CAF_CHECK_EQUAL(boost::json::serialize(st.input), R"({"to":"ann@example.com","retries":1})");
  bool delay_timer = false;
  for (const auto& t : s.decisions.front().arm)
    delay_timer |= t.kind == timer_kind::delay && t.fire_at == s.now + 5000;
  CAF_CHECK(delay_timer);
  s.complete("s");
  std::string queue;
  for (const auto& d : s.decisions)
    for (const auto& t : d.schedule)
      if (t.id.ref == "p")
        queue = t.queue;
  CAF_CHECK_EQUAL(queue, "plain");
}

CAF_TEST(sub workflow start and failure workflow) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","failureWorkflow":"cleanup","tasks":[{"name":"sub","taskReferenceName":"sub",
        "type":"SUB_WORKFLOW","subWorkflowParam":{"name":"child","version":2},"inputParameters":{"a":"${workflow.input.a}"}}]})");
  sim s(def, {}, R"({"a":1})");
  const auto& d = s.decisions.front();
  CAF_REQUIRE_EQUAL(d.sub_workflows.size(), 1u);
  CAF_CHECK_EQUAL(d.sub_workflows[0].name, "child");
  CAF_CHECK(d.sub_workflows[0].version == std::optional<std::int64_t>{2});
  CAF_CHECK_EQUAL(boost::json::serialize(d.sub_workflows[0].input), R"({"a":1})");
  CAF_CHECK_EQUAL(d.schedule.at(0).queue, "");
  s.fail("sub", "child failed");
  const auto& last = s.ending();
  CAF_CHECK(last.status == workflow_status::failed);
  CAF_REQUIRE(last.failure_workflow.has_value());
  CAF_CHECK_EQUAL(last.failure_workflow->name, "cleanup");
  CAF_CHECK_EQUAL(last.failure_workflow->input.at("workflowId").as_string(), "wf-1");
  CAF_CHECK_EQUAL(last.failure_workflow->input.at("failedTaskRef").as_string(), "sub");
  CAF_CHECK_EQUAL(last.failure_workflow->input.at("failureStatus").as_string(), "FAILED");
  // The failed workflow's input at the top, as Conductor passes it, and kept whole.
  CAF_CHECK_EQUAL(last.failure_workflow->input.at("a").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(last.failure_workflow->input.at("workflowInput").at("a").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(last.reason_for_incompletion, "task \"sub\" ended FAILED: child failed");
}

CAF_TEST(failure cancels running tasks and their timers) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
        [{"name":"a","taskReferenceName":"a"}],[{"name":"b","taskReferenceName":"b"}]]},
        {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["a","b"]}]})");
  sim s(def);
  s.fail("a");
  CAF_CHECK(s.task("b").status == task_status::canceled);
  CAF_CHECK(s.task("join").status == task_status::canceled);
  CAF_CHECK_EQUAL(s.task("b").reason_for_incompletion, "workflow ended FAILED");
  // The task that failed it is named with no failure workflow too (failedReferenceTaskNames).
  CAF_CHECK_EQUAL(s.ending().failed_task_ref, "a");
  bool cancels_b = false;
  for (const auto& c : s.ending().cancel)
    cancels_b |= c.task.ref == "b";
  CAF_CHECK(cancels_b);
}

CAF_TEST(timeouts by policy) {
  auto def = nf::flow::test::workflow(R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})");
  auto with = [](const char* json) {
    task_def_map m;
    auto d = nf::flow::test::task_definition(json);
    m.emplace(d.name, d);
    return m;
  };
  {  // RETRY: poll timeout → TIMED_OUT → attempt 1
    sim s(def, with(R"({"name":"a","pollTimeoutSeconds":10,"timeoutPolicy":"RETRY","retryCount":1,"retryDelaySeconds":0})"));
    bool armed = false;
    for (const auto& t : s.decisions.front().arm)
      armed |= t.kind == timer_kind::schedule_to_start && t.fire_at == s.now + 10'000;
    CAF_CHECK(armed);
    s.advance(9'999);
    CAF_CHECK(s.task("a").status == task_status::scheduled);
    s.advance(1);
    CAF_CHECK_EQUAL(s.scheduled(), "a a+1");
    CAF_CHECK_EQUAL(s.find("a")->id.attempt, 1);
    const auto* first = &s.snap.tasks.front();
    CAF_CHECK(first->status == task_status::timed_out);
    CAF_CHECK_EQUAL(first->reason_for_incompletion, "pollTimeoutSeconds exceeded");
  }
  {  // TIME_OUT_WF: start-to-close timeout ends the workflow
    sim s(def, with(R"({"name":"a","timeoutSeconds":30,"retryCount":3})"));
    s.start("a");
    s.advance(30'000);
    CAF_CHECK_EQUAL(to_string(s.snap.status), "TIMED_OUT");
    CAF_CHECK_EQUAL(s.scheduled(), "a");
  }
  {  // TIME_OUT_WF: a response timeout is retried, as Conductor does, until none is left
    sim s(def, with(R"({"name":"a","responseTimeoutSeconds":5,"retryCount":1,"retryDelaySeconds":0})"));
    s.start("a");
    s.fail("a", response_timeout_reason, 0, task_status::timed_out);
    CAF_CHECK_EQUAL(s.scheduled(), "a a+1");
    CAF_CHECK_EQUAL(to_string(s.snap.status), "RUNNING");
    s.start("a");
    s.fail("a", response_timeout_reason, 0, task_status::timed_out);
    CAF_CHECK_EQUAL(to_string(s.snap.status), "TIMED_OUT");
  }
  {  // TIME_OUT_WF: a poll timeout ends the workflow at once
    sim s(def, with(R"({"name":"a","retryCount":3})"));
    s.fail("a", "schedule_to_start timeout", 0, task_status::timed_out);
    CAF_CHECK_EQUAL(s.scheduled(), "a");
    CAF_CHECK_EQUAL(to_string(s.snap.status), "TIMED_OUT");
  }
  {  // ALERT_ONLY: an event, the task keeps running
    sim s(def, with(R"({"name":"a","timeoutSeconds":5,"timeoutPolicy":"ALERT_ONLY"})"));
    s.start("a");
    s.advance(5'000);
    CAF_CHECK(s.task("a").status == task_status::in_progress);
    CAF_CHECK(s.events().find("task.timeout_alert") != std::string::npos);
    CAF_CHECK_EQUAL(to_string(s.snap.status), "RUNNING");
  }
  {  // totalTimeoutSeconds stops retries
    sim s(def, with(R"({"name":"a","totalTimeoutSeconds":60,"retryCount":5,"retryDelaySeconds":0,"timeoutPolicy":"RETRY"})"));
    s.advance(30'000);
    s.fail("a");
    CAF_CHECK_EQUAL(s.scheduled(), "a a+1");
    s.advance(30'000);
    CAF_CHECK(s.task("a").status == task_status::timed_out);
    CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  }
}

CAF_TEST(workflow timeout) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","timeoutSeconds":60,"tasks":[{"name":"a","taskReferenceName":"a"}]})");
  sim s(def);
  bool armed = false;
  for (const auto& t : s.decisions.front().arm)
    armed |= t.kind == timer_kind::workflow_timeout && t.fire_at == s.now + 60'000;
  CAF_CHECK(armed);
  s.advance(60'000);
  CAF_CHECK_EQUAL(to_string(s.snap.status), "TIMED_OUT");
  CAF_CHECK(s.task("a").status == task_status::canceled);
  auto alert = nf::flow::test::workflow(
    R"({"name":"w","timeoutSeconds":60,"timeoutPolicy":"ALERT_ONLY","tasks":[{"name":"a","taskReferenceName":"a"}]})");
  sim t(alert);
  t.advance(61'000);
  CAF_CHECK_EQUAL(to_string(t.snap.status), "RUNNING");
  CAF_CHECK(t.events().find("workflow.timeout_alert") != std::string::npos);
}

CAF_TEST(retry delays follow the retry logic) {
  auto def = nf::flow::test::workflow(R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})");
  struct row {
    const char* def;
    std::vector<std::int64_t> delays;
  };
  std::vector<row> rows = {
    {R"({"name":"a","retryCount":3,"retryLogic":"FIXED","retryDelaySeconds":2})", {2000, 2000, 2000}},
    {R"({"name":"a","retryCount":3,"retryLogic":"LINEAR_BACKOFF","retryDelaySeconds":2,"backoffScaleFactor":3})",
     {6000, 12000, 18000}},
    {R"({"name":"a","retryCount":3,"retryLogic":"EXPONENTIAL_BACKOFF","retryDelaySeconds":1})",
     {1000, 2000, 4000}},
    {R"({"name":"a","retryCount":3,"retryLogic":"EXPONENTIAL_BACKOFF","retryDelaySeconds":1,"maxRetryDelaySeconds":3})",
     {1000, 2000, 3000}},
  };
  for (const auto& r : rows) {
    task_def_map m;
    auto d = nf::flow::test::task_definition(r.def);
    m.emplace(d.name, d);
    sim s(def, m);
    for (auto expected : r.delays) {
      s.fail("a");
      CAF_CHECK_EQUAL(s.task("a").start_delay_ms, expected);
      s.advance(expected);
    }
  }
}

CAF_TEST(deciding is idempotent) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
        [{"name":"a","taskReferenceName":"a"}],[{"name":"b","taskReferenceName":"b"}]]},
        {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["a","b"]}]})");
  sim s(def);
  auto again = decide(s.def, s.defs, s.snap, s.now);
  CAF_CHECK(again.schedule.empty());
  CAF_CHECK(again.updates.empty());
  CAF_CHECK(decide(s.def, s.defs, s.snap, s.now) == again);
  s.snap.status = workflow_status::paused;
  CAF_CHECK(decide(s.def, s.defs, s.snap, s.now).empty());
}

CAF_TEST(events have stable keys) {
  auto def = nf::flow::test::workflow(R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})");
  sim s(def);
  const auto& e = s.decisions.front().events.at(0);
  CAF_CHECK_EQUAL(e.type, "task.scheduled");
  CAF_CHECK_EQUAL(e.key, "task.scheduled/a/0/0");
  s.complete("a");
  CAF_CHECK(s.events().find("workflow.completed") != std::string::npos);
}
