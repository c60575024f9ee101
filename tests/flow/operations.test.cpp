#define CAF_SUITE flow.operations
#include "caf/test/unit_test.hpp"

#include <boost/json/serialize.hpp>

#include "flow/apply.hpp"
#include "flow/operations.hpp"
#include "sim.hpp"

using namespace nf::flow;
using nf::flow::test::sim;

namespace {

const char* sequence = R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"},
  {"name":"b","taskReferenceName":"b","inputParameters":{"from":"${a.output.v}"}},
  {"name":"c","taskReferenceName":"c"}]})";

void apply_edit(sim& s, const edit_result& r) {
  CAF_REQUIRE(static_cast<bool>(r));
  s.snap = apply(std::move(s.snap), r.value, s.now);
  s.settle();
}

std::string removed(const edit& e) {
  std::string out;
  for (const auto& id : e.remove)
    out += (out.empty() ? "" : " ") + nf::flow::test::label(id);
  return out;
}

}  // namespace

CAF_TEST(retry schedules the next attempt of what failed) {
  sim s(nf::flow::test::workflow(sequence));
  CAF_CHECK(!retry_last_failed(s.def, s.defs, s.snap, s.now));  // still RUNNING
  s.complete("a", R"({"v":1})");
  s.fail("b", "bad");
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "FAILED");
  auto r = retry_last_failed(s.def, s.defs, s.snap, s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_REQUIRE_EQUAL(r.value.schedule.size(), 1u);
  CAF_CHECK_EQUAL(nf::flow::test::label(r.value.schedule[0].id), "b+1");
  CAF_CHECK_EQUAL(r.value.schedule[0].queue, "b");
  CAF_CHECK_EQUAL(boost::json::serialize(r.value.schedule[0].input), R"({"from":1})");
  apply_edit(s, r);
  CAF_CHECK_EQUAL(to_string(s.snap.status), "RUNNING");
  CAF_CHECK_EQUAL(s.snap.reason_for_incompletion, "");
  s.complete("b");
  s.complete("c");
  CAF_CHECK_EQUAL(s.scheduled(), "a b c");  // b+1 came from the edit, not decide()
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
}

CAF_TEST(a retried task that held its own id holds the id of the retry) {
  sim s(nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","inputParameters":{
        "me":"${CPEWF_TASK_ID}","note":{"deep":["id ${CPEWF_TASK_ID}"]}}}]})"));
  CAF_CHECK_EQUAL(s.task("a").task_id, "t1");
  s.fail("a", "bad");
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "FAILED");
  auto r = retry_last_failed(s.def, s.defs, s.snap, s.now, &s.ids);
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_REQUIRE_EQUAL(r.value.schedule.size(), 1u);
  CAF_CHECK_EQUAL(r.value.schedule[0].task_id, "t2");
  CAF_CHECK_EQUAL(boost::json::serialize(r.value.schedule[0].input),
                  R"({"me":"t2","note":{"deep":["id t2"]}})");
  // Without a generator the copy stays as it was, and the store makes the id.
  auto plain = retry_last_failed(s.def, s.defs, s.snap, s.now);
  CAF_REQUIRE(static_cast<bool>(plain));
  CAF_CHECK_EQUAL(plain.value.schedule[0].task_id, "");
}

CAF_TEST(retry reschedules canceled branches and reopens a failed loop) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
        [{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE","loopCondition":"iteration < 3",
          "loopOver":[{"name":"x","taskReferenceName":"x"}]}],
        [{"name":"b","taskReferenceName":"b"}]]},
        {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["loop","b"]}]})");
  sim s(def);
  s.complete("x", "{}", 1);
  s.fail("x", "bad", 2);
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "FAILED");
  CAF_CHECK(s.task("b").status == task_status::canceled);
  auto r = retry_last_failed(s.def, s.defs, s.snap, s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  std::string labels;
  for (const auto& st : r.value.schedule)
    labels += nf::flow::test::label(st.id) + ' ';
  CAF_CHECK_EQUAL(labels, "b+1 join+1 x@2+1 ");
  CAF_REQUIRE_EQUAL(r.value.updates.size(), 1u);
  CAF_CHECK_EQUAL(r.value.updates[0].id.ref, "loop");
  apply_edit(s, r);
  s.complete("x", "{}", 2);
  s.complete("x", "{}", 3);
  s.complete("b");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
}

CAF_TEST(rerun from a task discards what followed it) {
  sim s(nf::flow::test::workflow(sequence));
  s.complete("a", R"({"v":1})");
  s.complete("b");
  s.complete("c");
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(!rerun_from_task(s.def, s.defs, s.snap, "nope", 0, std::nullopt, s.now));
  CAF_CHECK_EQUAL(rerun_from_task(s.def, s.defs, s.snap, "b", 4, std::nullopt, s.now).error,
                  "task \"b\" has no execution in iteration 4");
  auto r = rerun_from_task(s.def, s.defs, s.snap, "b", 0, nf::flow::test::object(R"({"from":42})"),
                           s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_CHECK_EQUAL(removed(r.value), "b c");
  CAF_REQUIRE_EQUAL(r.value.schedule.size(), 1u);
  CAF_CHECK_EQUAL(boost::json::serialize(r.value.schedule[0].input), R"({"from":42})");
  apply_edit(s, r);
  CAF_CHECK(s.task("b").status == task_status::scheduled);
  CAF_CHECK_EQUAL(boost::json::serialize(s.task("b").input), R"({"from":42})");
  s.complete("b");
  s.complete("c");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
}

CAF_TEST(rerun inside a loop keeps earlier iterations) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
        "loopCondition":"iteration < 3","loopOver":[{"name":"x","taskReferenceName":"x"},
        {"name":"y","taskReferenceName":"y"}]},{"name":"z","taskReferenceName":"z"}]})");
  sim s(def);
  for (int i = 1; i <= 3; ++i) {
    s.complete("x", "{}", i);
    s.complete("y", "{}", i);
  }
  s.complete("z");
  CAF_REQUIRE_EQUAL(to_string(s.snap.status), "COMPLETED");
  auto r = rerun_from_task(s.def, s.defs, s.snap, "y", 2, std::nullopt, s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_CHECK_EQUAL(removed(r.value), "x@3 y@2 y@3 z");
  CAF_REQUIRE_EQUAL(r.value.updates.size(), 1u);
  CAF_CHECK(r.value.updates[0].status == task_status::in_progress);
  apply_edit(s, r);
  CAF_CHECK(s.task("y", 2).status == task_status::scheduled);
  s.complete("y", "{}", 2);
  s.complete("x", "{}", 3);
  s.complete("y", "{}", 3);
  s.complete("z");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
}

CAF_TEST(restart starts over with the same id) {
  sim s(nf::flow::test::workflow(sequence), {}, R"({"n":1})");
  CAF_CHECK(!restart(s.def, s.snap, std::nullopt, s.now));  // still RUNNING
  s.fail("a");
  s.advance(5'000);
  auto r = restart(s.def, s.snap, nf::flow::test::object(R"({"n":2})"), s.now);
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_CHECK_EQUAL(removed(r.value), "a");
  apply_edit(s, r);
  CAF_CHECK_EQUAL(s.snap.workflow_id, "wf-1");
  CAF_CHECK_EQUAL(s.snap.start_time, s.now);
  CAF_CHECK_EQUAL(boost::json::serialize(s.snap.input), R"({"n":2})");
  CAF_CHECK(s.task("a").status == task_status::scheduled);
  auto fixed = s.def;
  fixed.restartable = false;
  s.fail("a");
  CAF_CHECK_EQUAL(restart(fixed, s.snap, std::nullopt, s.now).error,
                  "workflow definition \"w\" is not restartable");
}

CAF_TEST(skip marks a task not reached yet and the workflow moves past it) {
  sim s(nf::flow::test::workflow(sequence));
  CAF_CHECK(skip_task(s.def, s.snap, "a", std::nullopt, std::nullopt).error.find("already")
            != std::string::npos);
  CAF_CHECK(!skip_task(s.def, s.snap, "zz", std::nullopt, std::nullopt));
  auto r = skip_task(s.def, s.snap, "b", boost::json::object{{"in", 1}},
                     boost::json::object{{"v", 2}});
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_REQUIRE_EQUAL(r.value.schedule.size(), 1u);
  CAF_CHECK_EQUAL(to_string(r.value.schedule[0].status), "SKIPPED");
  CAF_CHECK(r.value.remove.empty());
  apply_edit(s, r);
  s.complete("a", R"({"v":1})");
  // b is passed over (its SKIPPED row came from the edit): c is scheduled next, and b
  // keeps the output it was skipped with.
  CAF_CHECK_EQUAL(s.scheduled(), "a c");
  for (const auto& t : s.snap.tasks)
    if (t.id.ref == "b")
      CAF_CHECK_EQUAL(boost::json::serialize(t.output), R"({"v":2})");
  s.complete("c");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "COMPLETED");
  CAF_CHECK(!skip_task(s.def, s.snap, "c", std::nullopt, std::nullopt));  // not RUNNING
}

CAF_TEST(skip refuses a task in a loop and a fork) {
  auto def = nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"},
        {"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[
          [{"name":"x","taskReferenceName":"x"}],[{"name":"y","taskReferenceName":"y"}]]},
        {"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":["x","y"]},
        {"name":"loop","taskReferenceName":"loop","type":"DO_WHILE","loopCondition":"false",
         "loopOver":[{"name":"z","taskReferenceName":"z"}]}]})");
  sim s(def);
  CAF_CHECK(skip_task(s.def, s.snap, "fork", std::nullopt, std::nullopt).error.find("JOIN")
            != std::string::npos);
  CAF_CHECK(skip_task(s.def, s.snap, "z", std::nullopt, std::nullopt).error.find("DO_WHILE")
            != std::string::npos);
  // A branch's task may be skipped: the JOIN counts it as done.
  apply_edit(s, skip_task(s.def, s.snap, "y", std::nullopt, std::nullopt));
  s.complete("a");
  s.complete("x");
  CAF_CHECK(s.scheduled().find("z") != std::string::npos);
}

CAF_TEST(variables are set in a running or paused workflow and kept in an ended one) {
  sim s(nf::flow::test::workflow(
    R"({"name":"w","variables":{"keep":1,"over":"old"},"tasks":[{"name":"a","taskReferenceName":"a"}]})"));
  auto r = update_variables(s.snap, boost::json::object{{"over", "new"}, {"added", true}});
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_CHECK_EQUAL(to_string(r.value.status), "RUNNING");
  CAF_REQUIRE(r.value.variables.has_value());
  CAF_CHECK_EQUAL(boost::json::serialize(*r.value.variables),
                  R"({"keep":1,"over":"new","added":true})");
  s.snap.status = workflow_status::paused;
  CAF_CHECK_EQUAL(to_string(update_variables(s.snap, {}).value.status), "PAUSED");
  s.snap.status = workflow_status::completed;
  CAF_CHECK(update_variables(s.snap, {}).error.find("COMPLETED") != std::string::npos);
}

CAF_TEST(an update of state sets variables and ends a waiting task in one edit) {
  sim s(nf::flow::test::workflow(
    R"({"name":"w","variables":{"keep":1},"tasks":[
        {"name":"hold","taskReferenceName":"hold","type":"WAIT"},
        {"name":"after","taskReferenceName":"after",
         "inputParameters":{"by":"${hold.output.by}","stage":"${workflow.variables.stage}"}}]})"));
  CAF_REQUIRE_EQUAL(to_string(s.task("hold").status), "IN_PROGRESS");
  boost::json::object vars{{"stage", "approved"}};
  state_task_result done{"hold", task_status::completed, boost::json::object{{"by", "ann"}}, "", ""};
  auto r = update_state(s.snap, &vars, &done);
  CAF_REQUIRE(static_cast<bool>(r));
  CAF_REQUIRE_EQUAL(r.value.finish.size(), 1u);
  CAF_CHECK_EQUAL(nf::flow::test::label(r.value.finish[0].id), "hold");
  CAF_REQUIRE_EQUAL(r.value.cancel.size(), 1u);
  CAF_CHECK_EQUAL(r.value.events.size(), 1u);
  apply_edit(s, r);
  CAF_CHECK_EQUAL(boost::json::serialize(s.snap.variables), R"({"keep":1,"stage":"approved"})");
  CAF_CHECK_EQUAL(to_string(s.task("hold").status), "COMPLETED");
  // decide() on the edited snapshot moves past the WAIT with its output and the variables.
  CAF_CHECK_EQUAL(boost::json::serialize(s.task("after").input),
                  R"({"by":"ann","stage":"approved"})");
  // The task no longer waits: a second update is refused, and so is the whole edit.
  auto again = update_state(s.snap, &vars, &done);
  CAF_CHECK(again.error.find("COMPLETED") != std::string::npos);
}

CAF_TEST(an update of state refuses what an update by reference name refuses) {
  sim s(nf::flow::test::workflow(
    R"({"name":"w","tasks":[{"name":"hold","taskReferenceName":"hold","type":"WAIT"},
        {"name":"a","taskReferenceName":"a"}]})"));
  state_task_result r{"a", task_status::completed, {}, "", ""};
  CAF_CHECK(update_state(s.snap, nullptr, &r).error.find("no task \"a\"") != std::string::npos);
  r.ref = "hold";
  r.status = task_status::in_progress;
  CAF_CHECK(update_state(s.snap, nullptr, &r).error.find("taskResult.status") != std::string::npos);
  r.status = task_status::failed;
  r.task_id = "not-its-id";
  CAF_CHECK(update_state(s.snap, nullptr, &r).error.find("taskResult.taskId") != std::string::npos);
  r.task_id.clear();
  r.reason_for_incompletion = "declined";
  auto failed = update_state(s.snap, nullptr, &r);
  CAF_REQUIRE(static_cast<bool>(failed));
  CAF_CHECK(!failed.value.variables.has_value());
  apply_edit(s, failed);
  CAF_CHECK_EQUAL(to_string(s.task("hold").status), "FAILED");
  CAF_CHECK_EQUAL(s.task("hold").reason_for_incompletion, "declined");
  CAF_CHECK_EQUAL(to_string(s.snap.status), "FAILED");
  // A SIMPLE task is its worker's to report.
  sim t(nf::flow::test::workflow(R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a"}]})"));
  state_task_result simple{"a", task_status::completed, {}, "", ""};
  CAF_CHECK(update_state(t.snap, nullptr, &simple).error.find("SIMPLE") != std::string::npos);
  t.snap.status = workflow_status::completed;
  boost::json::object vars;
  CAF_CHECK(update_state(t.snap, &vars, nullptr).error.find("COMPLETED") != std::string::npos);
}
