#define CAF_SUITE flow.loops
#include "caf/test/unit_test.hpp"

// DO_WHILE as Conductor has it: loops nested in loops (each execution keeps
// an identity of its own across outer and inner iterations), keepLastN, items.

#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "flow/apply.hpp"
#include "flow/operations.hpp"
#include "flow/validate.hpp"
#include "sim.hpp"

using namespace nf::flow;
using nf::flow::test::sim;

namespace {

// Two loops, the inner one holding a worker task, a SWITCH and a FORK/JOIN.
const char* two_levels = R"({"name":"w","tasks":[
  {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 2",
   "loopOver":[
    {"name":"a","taskReferenceName":"a","inputParameters":{"o":"${L.output.iteration}"}},
    {"name":"M","taskReferenceName":"M","type":"DO_WHILE","loopCondition":"$.M['iteration'] < 2",
     "loopOver":[
      {"name":"b","taskReferenceName":"b","inputParameters":{"o":"${L.output.iteration}",
        "i":"${M.output.iteration}","a":"${a.output.n}"}},
      {"name":"sw","taskReferenceName":"sw","type":"SWITCH","evaluatorType":"value-param",
       "expression":"i","inputParameters":{"i":"${M.output.iteration}"},
       "decisionCases":{"2":[{"name":"c","taskReferenceName":"c"}]}},
      {"name":"f","taskReferenceName":"f","type":"FORK_JOIN","forkTasks":[
        [{"name":"p","taskReferenceName":"p"}],
        [{"name":"q","taskReferenceName":"q","type":"JSON_TRANSFORM",
          "inputParameters":{"o":"${L.output.iteration}","i":"${M.output.iteration}",
                             "mapping":{"at":"$.o","in":"$.i"}}}]]},
      {"name":"j","taskReferenceName":"j","type":"JOIN","joinOn":["p","q"]}]}]},
  {"name":"z","taskReferenceName":"z","inputParameters":{"last":"${b.output}"}}]})";

bool identities_unique(const snapshot& s) {
  std::set<task_identity> seen;
  for (const auto& e : s.tasks)
    if (!seen.insert(e.id).second)
      return false;
  return true;
}

std::string json(const boost::json::value& v) {
  return boost::json::serialize(v);
}

std::string canonical(const char* text) {
  return boost::json::serialize(boost::json::parse(text));
}

std::string first_problem(const char* text) {
  auto r = load_workflow_def(text);
  return r.ok() ? std::string("valid") : r.errors.front().path + ": "
                                           + r.errors.front().message;
}

void apply_edit(sim& s, const edit_result& r) {
  CAF_REQUIRE(static_cast<bool>(r));
  s.snap = apply(std::move(s.snap), r.value, s.now);
  s.settle();
}

}  // namespace

CAF_TEST(a loop inside a loop runs its body once per outer and inner iteration) {
  sim s(nf::flow::test::workflow(two_levels));
  s.complete("a", R"({"n":10})", 1);
  s.complete("b__1", "{}", 1);
  s.complete("p__1", "{}", 1);
  s.complete("b__1", "{}", 2);
  s.complete("c__1", "{}", 2);
  s.complete("p__1", "{}", 2);
  s.complete("a", R"({"n":20})", 2);
  s.complete("b__2", "{}", 1);
  s.complete("p__2", "{}", 1);
  s.complete("b__2", R"({"k":"last"})", 2);
  s.complete("c__2", "{}", 2);
  s.complete("p__2", "{}", 2);
  s.complete("z");
  CAF_CHECK_EQUAL(s.scheduled(),
                  "L a@1 M@1 b__1@1 sw__1@1 f__1@1 p__1@1 q__1@1 j__1@1 b__1@2 sw__1@2 c__1@2 "
                  "f__1@2 p__1@2 q__1@2 j__1@2 a@2 M@2 b__2@1 sw__2@1 f__2@1 p__2@1 q__2@1 "
                  "j__2@1 b__2@2 sw__2@2 c__2@2 f__2@2 p__2@2 q__2@2 j__2@2 z");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(identities_unique(s.snap));
  // Each execution read its own outer and inner iteration, and the outer
  // body's task of the same outer iteration.
  CAF_CHECK_EQUAL(json(s.task("b__2", 1).input), canonical(R"({"o":2,"i":1,"a":20})"));
  CAF_CHECK_EQUAL(json(s.task("b__1", 2).input), canonical(R"({"o":1,"i":2,"a":10})"));
  CAF_CHECK_EQUAL(json(s.task("q__2", 2).output), canonical(R"({"result":{"at":2,"in":2}})"));
  // After the loops, a task reads the latest execution.
  CAF_CHECK_EQUAL(json(s.task("z").input), canonical(R"({"last":{"k":"last"}})"));
  // Conductor's output: {"iteration": n, "1": {ref: output, …}, …}; a nested
  // loop appears as its own output.
  const auto& out = s.task("L").output;
  CAF_CHECK_EQUAL(out.size(), 3u);
  CAF_CHECK(out.at("iteration") == 2);
  CAF_CHECK_EQUAL(json(out.at("2").at("a")), canonical(R"({"n":20})"));
  CAF_CHECK(out.at("1").at("M").at("iteration") == 2);
  const auto& inner = s.task("M", 2).output;
  CAF_CHECK(inner.at("2").as_object().contains("c"));
  CAF_CHECK(!inner.at("1").as_object().contains("c"));
  CAF_CHECK_EQUAL(json(inner.at("2").at("q")), canonical(R"({"result":{"at":2,"in":2}})"));
}

CAF_TEST(three nested loops of inline tasks run to completion) {
  sim s(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L1","taskReferenceName":"L1","type":"DO_WHILE","loopCondition":"$.L1['iteration'] < 2",
     "loopOver":[{"name":"L2","taskReferenceName":"L2","type":"DO_WHILE",
       "loopCondition":"$.L2['iteration'] < 2","loopOver":[
        {"name":"L3","taskReferenceName":"L3","type":"DO_WHILE","loopCondition":"$.L3['iteration'] < 3",
         "loopOver":[
          {"name":"v","taskReferenceName":"v","type":"SET_VARIABLE",
           "inputParameters":{"n":"${L3.output.iteration}"}},
          {"name":"t","taskReferenceName":"t","type":"JSON_TRANSFORM",
           "inputParameters":{"a":"${L1.output.iteration}","b":"${L2.output.iteration}",
             "c":"${L3.output.iteration}","mapping":{"o1":"$.a","o2":"$.b","o3":"$.c"}}}]}]}]}]})"));
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(identities_unique(s.snap));
  // 1 + 2 (L2) + 4 (L3) + 12 × 2 (v, t)
  CAF_CHECK_EQUAL(s.snap.tasks.size(), 31u);
  CAF_CHECK_EQUAL(json(s.task("t__2__1", 3).output),
                  canonical(R"({"result":{"o1":2,"o2":1,"o3":3}})"));
  CAF_CHECK_EQUAL(json(s.task("t__1__2", 1).output),
                  canonical(R"({"result":{"o1":1,"o2":2,"o3":1}})"));
  CAF_CHECK(s.task("L3__2", 2).output.at("iteration") == 3);
  CAF_CHECK(s.snap.variables.at("n") == 3);
}

CAF_TEST(rerun from a task of an inner loop keeps what ran before it) {
  sim s(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 2",
     "loopOver":[{"name":"M","taskReferenceName":"M","type":"DO_WHILE",
       "loopCondition":"$.M['iteration'] < 2","loopOver":[{"name":"b","taskReferenceName":"b"}]}]},
    {"name":"z","taskReferenceName":"z"}]})"));
  for (const char* ref : {"b__1", "b__2"})
    for (int i = 1; i <= 2; ++i)
      s.complete(ref, "{}", i);
  s.complete("z");
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(!rerun_from_task(s.def, s.defs, s.snap, "b__3", 1, std::nullopt, s.now));
  auto r = rerun_from_task(s.def, s.defs, s.snap, "b__1", 2, std::nullopt, s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  std::string removed;
  for (const auto& id : r.value.remove)
    removed += (removed.empty() ? "" : " ") + nf::flow::test::label(id);
  // Itself, the later outer iteration (its inner loop and all it ran), and z.
  CAF_CHECK_EQUAL(removed, "M@2 b__1@2 b__2@1 b__2@2 z");
  std::set<std::string> reopened;
  for (const auto& u : r.value.updates)
    reopened.insert(nf::flow::test::label(u.id));
  CAF_CHECK(reopened == (std::set<std::string>{"L", "M@1"}));
  apply_edit(s, r);
  CAF_CHECK(s.task("b__1", 2).status == task_status::scheduled);
  s.complete("b__1", "{}", 2);
  s.complete("b__2", "{}", 1);
  s.complete("b__2", "{}", 2);
  s.complete("z");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(identities_unique(s.snap));
}

CAF_TEST(keepLastN keeps the last iterations in the output and every execution) {
  sim s(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 5",
     "inputParameters":{"keepLastN":2},"loopOver":[
      {"name":"t","taskReferenceName":"t","type":"JSON_TRANSFORM",
       "inputParameters":{"i":"${L.output.iteration}","mapping":{"i":"$.i"}}}]}]})"));
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK_EQUAL(json(s.task("L").output),
                  canonical(R"({"iteration":5,"4":{"t":{"result":{"i":4}}},
                                "5":{"t":{"result":{"i":5}}}})"));
  CAF_CHECK_EQUAL(s.snap.tasks.size(), 6u);  // history keeps all five iterations
  // Without keepLastN every iteration stays.
  sim all(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 3",
     "loopOver":[{"name":"t","taskReferenceName":"t","type":"SET_VARIABLE",
                  "inputParameters":{"x":1}}]}]})"));
  CAF_CHECK_EQUAL(json(all.task("L").output),
                  canonical(R"({"iteration":3,"1":{"t":{}},"2":{"t":{}},"3":{"t":{}}})"));
  // A keepLastN that resolves to no count fails the loop, naming it.
  sim bad(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 3",
     "inputParameters":{"keepLastN":"${workflow.input.n}"},"loopOver":[
      {"name":"t","taskReferenceName":"t","type":"SET_VARIABLE","inputParameters":{"x":1}}]}]})"),
          {}, R"({"n":"two"})");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK_EQUAL(to_string(bad.snap.status), "FAILED");
  CAF_CHECK_EQUAL(bad.task("L").reason_for_incompletion,
                  "keepLastN: expected an integer >= 1, got \"two\"");
}

CAF_TEST(items runs the body once per item with loopItem and loopIndex) {
  const char* def = R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","items":"${workflow.input.list}",
     "loopOver":[{"name":"t","taskReferenceName":"t","type":"JSON_TRANSFORM",
       "inputParameters":{"item":"${L.output.loopItem}","index":"${L.output.loopIndex}",
                          "mapping":{"item":"$.item","index":"$.index"}}}]}]})";
  sim s(nf::flow::test::workflow(def), {}, R"({"list":["a","b","c"]})");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK_EQUAL(s.scheduled(), "L t@1 t@2 t@3");
  CAF_CHECK(s.task("L").output.at("iteration") == 3);
  CAF_CHECK_EQUAL(json(s.task("L").output.at("3")),
                  canonical(R"({"t":{"result":{"item":"c","index":2}}})"));
  CAF_CHECK_EQUAL(json(s.task("t", 1).output), canonical(R"({"result":{"item":"a","index":0}})"));
  // An empty list runs no iteration.
  sim none(nf::flow::test::workflow(def), {}, R"({"list":[]})");
  CAF_CHECK_EQUAL(to_string(none.snap.status), "COMPLETED");
  CAF_CHECK_EQUAL(none.scheduled(), "L");
  CAF_CHECK_EQUAL(json(none.task("L").output), canonical(R"({"iteration":0})"));
  // What is not a list fails the loop, saying so.
  sim bad(nf::flow::test::workflow(def), {}, R"({"list":{"a":1}})");
  CAF_CHECK_EQUAL(to_string(bad.snap.status), "FAILED");
  CAF_CHECK_EQUAL(bad.task("L").reason_for_incompletion,
                  R"(items: expected a list, got an object)");
  // Orkes' inputParameters.items, with a loopCondition that ends the loop first.
  sim both(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 2",
     "inputParameters":{"items":[1,2,3]},"loopOver":[{"name":"v","taskReferenceName":"v",
       "type":"SET_VARIABLE","inputParameters":{"last":"${L.output.loopItem}"}}]}]})"));
  CAF_CHECK_EQUAL(to_string(both.snap.status), "COMPLETED");
  CAF_CHECK(both.snap.variables.at("last") == 2);
}

CAF_TEST(validation of nested loops items and keepLastN) {
  // Nested loops are valid, 3 levels deep and inside a SWITCH.
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l",
    "type":"DO_WHILE","loopCondition":"iteration < 3","loopOver":[{"name":"s","taskReferenceName":"s",
     "type":"SWITCH","evaluatorType":"value-param","expression":"x","inputParameters":{"x":1},
     "decisionCases":{"1":[{"name":"m","taskReferenceName":"m","type":"DO_WHILE",
       "loopCondition":"iteration < 2","loopOver":[{"name":"x","taskReferenceName":"x"}]}]}}]}]})"),
                  "valid");
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l",
    "type":"DO_WHILE","loopOver":[{"name":"x","taskReferenceName":"x"}]}]})"),
                  "tasks[0].loopCondition: missing required field (expected an expression, or "
                  "`items` to run once per item)");
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l",
    "type":"DO_WHILE","items":"${workflow.input.list}","loopOver":[{"name":"x","taskReferenceName":"x"}]}]})"),
                  "valid");
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"x","taskReferenceName":"x",
    "items":["a"]}]})"),
                  "tasks[0].items: only allowed on DO_WHILE tasks");
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l",
    "type":"DO_WHILE","items":"abc","loopOver":[{"name":"x","taskReferenceName":"x"}]}]})"),
                  "tasks[0].items: expected a list or an expression giving one like "
                  "${workflow.input.list}, got \"abc\"");
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l",
    "type":"DO_WHILE","items":7,"loopOver":[{"name":"x","taskReferenceName":"x"}]}]})"),
                  "tasks[0].items: expected a list or an expression giving one, got 7");
  CAF_CHECK_EQUAL(first_problem(R"({"name":"w","tasks":[{"name":"l","taskReferenceName":"l",
    "type":"DO_WHILE","loopCondition":"iteration < 3","inputParameters":{"keepLastN":0},
    "loopOver":[{"name":"x","taskReferenceName":"x"}]}]})"),
                  "tasks[0].inputParameters.keepLastN: expected an integer >= 1, got 0");
}

CAF_TEST(retry inside nested loops retries the failed execution and reopens its loops) {
  sim s(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 2",
     "loopOver":[{"name":"M","taskReferenceName":"M","type":"DO_WHILE",
       "loopCondition":"$.M['iteration'] < 2","loopOver":[{"name":"b","taskReferenceName":"b"}]}]}]})"));
  s.complete("b__1", "{}", 1);
  s.complete("b__1", "{}", 2);
  s.fail("b__2", "boom", 1);
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "FAILED");
  CAF_CHECK(s.task("M", 2).status == task_status::failed);
  auto r = retry_last_failed(s.def, s.defs, s.snap, s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  std::set<std::string> scheduled, reopened;
  for (const auto& st : r.value.schedule)
    scheduled.insert(nf::flow::test::label(st.id));
  for (const auto& u : r.value.updates)
    reopened.insert(nf::flow::test::label(u.id));
  CAF_CHECK(scheduled == (std::set<std::string>{"b__2@1+1"}));
  CAF_CHECK(reopened == (std::set<std::string>{"L", "M@2"}));
  apply_edit(s, r);
  s.complete("b__2", "{}", 1);
  s.complete("b__2", "{}", 2);
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(identities_unique(s.snap));
  CAF_CHECK(s.task("L").output.at("2").at("M").at("iteration") == 2);
}

CAF_TEST(a WAIT inside nested loops takes an update by its stored or its plain name) {
  sim s(nf::flow::test::workflow(R"({"name":"w","tasks":[
    {"name":"L","taskReferenceName":"L","type":"DO_WHILE","loopCondition":"$.L['iteration'] < 2",
     "loopOver":[{"name":"M","taskReferenceName":"M","type":"DO_WHILE",
       "loopCondition":"$.M['iteration'] < 1","loopOver":[
        {"name":"w","taskReferenceName":"w","type":"WAIT"}]}]}]})"));
  s.advance(10);
  s.update_by_ref("w__1", "COMPLETED", R"({"by":"stored"})");
  CAF_CHECK(s.task("w__1", 1).status == task_status::completed);
  s.advance(10);
  s.update_by_ref("w", "COMPLETED", R"({"by":"plain"})");
  CAF_CHECK(s.task("w__2", 1).status == task_status::completed);
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(s.task("w__2", 1).output.at("by") == "plain");
}
