#define CAF_SUITE e2e.loops
#include "caf/test/unit_test.hpp"

#include <mutex>
#include <set>

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// A DO_WHILE over a list (`items`) holding a counted DO_WHILE that keeps its
// last two iterations (`keepLastN`), whose body has a JSON_TRANSFORM, a SWITCH
// with a SET_VARIABLE in one case, and a SET_VARIABLE: nothing for a worker.
constexpr const char* worker_less = R"([
  {"name": "e2e_nested_loops", "version": 1, "inputParameters": ["rows"],
   "variables": {"mid": null, "last": null},
   "tasks": [
    {"name": "rows", "taskReferenceName": "rows", "type": "DO_WHILE",
     "items": "${workflow.input.rows}",
     "loopOver": [
      {"name": "cols", "taskReferenceName": "cols", "type": "DO_WHILE",
       "inputParameters": {"keepLastN": 2}, "loopCondition": "$.cols['iteration'] < 3",
       "loopOver": [
        {"name": "cell", "taskReferenceName": "cell", "type": "JSON_TRANSFORM",
         "inputParameters": {"r": "${rows.output.loopItem}", "c": "${cols.output.iteration}",
                             "mapping": {"r": "$.r", "c": "$.c"}}},
        {"name": "kind", "taskReferenceName": "kind", "type": "SWITCH",
         "evaluatorType": "javascript", "expression": "$.c == 2 ? 'mid' : 'edge'",
         "inputParameters": {"c": "${cols.output.iteration}"},
         "decisionCases": {"mid": [
           {"name": "mark", "taskReferenceName": "mark", "type": "SET_VARIABLE",
            "inputParameters": {"mid": "${cell.output.result}"}}]}},
        {"name": "count", "taskReferenceName": "count", "type": "SET_VARIABLE",
         "inputParameters": {"last": "${cell.output.result}"}}]}]}],
   "outputParameters": {"rows": "${rows.output}", "mid": "${workflow.variables.mid}",
                        "last": "${workflow.variables.last}"}}
])";

// The same nesting with a worker task inside the inner loop.
constexpr const char* with_worker = R"([
  {"name": "echo", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "e2e_nested_worker", "version": 1, "tasks": [
    {"name": "outer", "taskReferenceName": "outer", "type": "DO_WHILE",
     "loopCondition": "$.outer['iteration'] < 2", "loopOver": [
      {"name": "inner", "taskReferenceName": "inner", "type": "DO_WHILE",
       "loopCondition": "$.inner['iteration'] < 2", "loopOver": [
        {"name": "echo", "taskReferenceName": "work",
         "inputParameters": {"o": "${outer.output.iteration}", "i": "${inner.output.iteration}"}}]}]}],
   "outputParameters": {"outer": "${outer.output}"}}
])";

// "ref@iteration=STATUS" for every task of a workflow, as the API shows them.
std::multiset<std::string> task_list(const boost::json::value& wf) {
  std::multiset<std::string> seen;
  for (const auto& t : wf.at("tasks").as_array()) {
    const auto& o = t.as_object();
    auto it = o.at("iteration").as_int64();
    seen.insert(std::string{o.at("referenceTaskName").as_string()}
                + (it > 0 ? "@" + std::to_string(it) : "") + "="
                + std::string{o.at("status").as_string()});
  }
  return seen;
}

void check_output(const boost::json::value& wf, const char* want_text) {
  auto want = boost::json::parse(want_text);
  CAF_CHECK(wf.at("output") == want);
  if (wf.at("output") != want)
    CAF_MESSAGE("output: " << boost::json::serialize(wf.at("output")));
}

} // namespace

CAF_TEST(nested loops of system tasks run to completion with the documented outputs) {
  test::e2e_fixture f{"e2e_nested_loops"};
  f.start_node();
  f.define(worker_less);
  auto id = f.start("e2e_nested_loops", R"({"rows": ["a", "b"]})");
  CAF_REQUIRE_EQUAL(f.await_end(id, 30s), "COMPLETED");
  auto wf = f.get(id);
  CAF_REQUIRE(wf.is_object());
  // {"iteration": n, "1": {ref: output, …}, …}; the inner loop keeps its last
  // two iterations; each row's loop saw its own item.
  auto row = [](const char* r) {
    return std::string(R"({"cols": {"iteration": 3,
      "2": {"cell": {"result": {"r": ")") + r + R"(", "c": 2}},
            "kind": {"evaluationResult": ["mid"]}, "mark": {}, "count": {}},
      "3": {"cell": {"result": {"r": ")" + r + R"(", "c": 3}},
            "kind": {"evaluationResult": ["edge"]}, "count": {}}}})";
  };
  auto want = R"({"rows": {"iteration": 2, "1": )" + row("a") + R"(, "2": )" + row("b")
              + R"(}, "mid": {"r": "b", "c": 2}, "last": {"r": "b", "c": 3}})";
  check_output(wf, want.c_str());
  // Every execution is there, once, each with its own identity: the inner
  // loop's tasks carry the outer iteration in their reference name.
  auto seen = task_list(wf);
  std::multiset<std::string> want_tasks{"rows=COMPLETED", "cols@1=COMPLETED", "cols@2=COMPLETED"};
  for (const char* outer : {"1", "2"})
    for (int i = 1; i <= 3; ++i) {
      auto at = std::string("__") + outer + "@" + std::to_string(i) + "=COMPLETED";
      want_tasks.insert("cell" + at);
      want_tasks.insert("kind" + at);
      want_tasks.insert("count" + at);
      if (i == 2)
        want_tasks.insert("mark" + at);
    }
  CAF_CHECK(seen == want_tasks);
  if (seen != want_tasks)
    for (const auto& s : seen)
      CAF_MESSAGE("task " << s);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskExecutions"
                             WHERE "workflowId" = $1 AND "refName" = 'cell__2' AND "iteration" = 3
                               AND "output" = '{"result": {"c": 3, "r": "b"}}'::jsonb)",
                          store::params::of(id)),
                  1);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  CAF_CHECK(f.stop_node());
}

CAF_TEST(a worker task inside nested loops runs once per outer and inner iteration) {
  test::e2e_fixture f{"e2e_nested_loop_worker"};
  f.start_node();
  f.define(with_worker);
  std::mutex m;
  std::multiset<std::string> leased;
  test::worker_pool workers{f.client_opts(), {"echo"}, 2, [&](const msg::leased_task& t) {
                              std::lock_guard<std::mutex> lock{m};
                              leased.insert(t.ref + "@" + std::to_string(t.iteration));
                              return test::echo_handler()(t);
                            }};
  auto id = f.start("e2e_nested_worker");
  CAF_REQUIRE_EQUAL(f.await_end(id, 60s), "COMPLETED");
  auto wf = f.get(id);
  check_output(wf, R"({"outer": {"iteration": 2,
    "1": {"inner": {"iteration": 2, "1": {"work": {"o": 1, "i": 1}}, "2": {"work": {"o": 1, "i": 2}}}},
    "2": {"inner": {"iteration": 2, "1": {"work": {"o": 2, "i": 1}}, "2": {"work": {"o": 2, "i": 2}}}}}})");
  auto seen = task_list(wf);
  std::multiset<std::string> want{"outer=COMPLETED",        "inner@1=COMPLETED",
                                  "inner@2=COMPLETED",      "work__1@1=COMPLETED",
                                  "work__1@2=COMPLETED",    "work__2@1=COMPLETED",
                                  "work__2@2=COMPLETED"};
  CAF_CHECK(seen == want);
  if (seen != want)
    for (const auto& s : seen)
      CAF_MESSAGE("task " << s);
  {
    std::lock_guard<std::mutex> lock{m};
    // Each leased once, by its own identity.
    CAF_CHECK(leased == (std::multiset<std::string>{"work__1@1", "work__1@2", "work__2@1",
                                                    "work__2@2"}));
  }
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  CAF_CHECK(f.stop_node());
}
