#define CAF_SUITE engine.decision_mapping
#include "caf/test/unit_test.hpp"

// What a decision's task updates become in the write (to_write): each change names the
// status the evaluation read the task in, so that a row moved meanwhile by a lease or a
// hand-back makes the write stale rather than changed (store/decision_apply.cpp).

#include "engine/decide/mapping.hpp"

using namespace nf;

namespace {

store::task_row row(const char* ref, flow::task_status status) {
  store::task_row t;
  t.identity = {ref, 0, 0};
  t.status = status;
  t.task_def_name = ref;
  return t;
}

const store::task_change* change_of(const store::decision_write& w, const char* ref) {
  const store::task_change* found = nullptr;
  for (const auto& c : w.changes)
    if (c.identity.ref == ref) {
      CAF_CHECK(found == nullptr);  // one change per task
      found = &c;
    }
  return found;
}

} // namespace

CAF_TEST(a task change names the status its evaluation read) {
  store::workflow_snapshot s;
  s.tasks.push_back(row("running", flow::task_status::in_progress));
  s.tasks.push_back(row("waiting", flow::task_status::scheduled));
  s.tasks.push_back(row("cancelled", flow::task_status::scheduled));
  flow::decision d;
  d.updates.push_back({{"running", 0, 0}, flow::task_status::timed_out, std::nullopt,
                       "timeoutSeconds exceeded"});
  d.updates.push_back({{"waiting", 0, 0}, flow::task_status::timed_out, std::nullopt,
                       "pollTimeoutSeconds exceeded"});
  // A cancel is right from either status: it names none.
  d.updates.push_back({{"cancelled", 0, 0}, flow::task_status::canceled, std::nullopt, "ended"});
  // Not in the snapshot (inserted by the same decision): none either.
  d.updates.push_back({{"new", 0, 0}, flow::task_status::completed, std::nullopt, ""});
  auto w = engine::to_write(s, d);
  CAF_REQUIRE_EQUAL(w.changes.size(), 4u);
  CAF_CHECK(change_of(w, "running")->from == flow::task_status::in_progress);
  CAF_CHECK(change_of(w, "waiting")->from == flow::task_status::scheduled);
  CAF_CHECK(!change_of(w, "cancelled")->from);
  CAF_CHECK(!change_of(w, "new")->from);
}

CAF_TEST(two updates of one task in a decision become one change the later wins) {
  store::workflow_snapshot s;
  s.tasks.push_back(row("wait", flow::task_status::scheduled));
  flow::decision d;
  d.updates.push_back({{"wait", 0, 0}, flow::task_status::in_progress, std::nullopt, ""});
  d.updates.push_back({{"wait", 0, 0}, flow::task_status::completed,
                       boost::json::object{{"waited", 1}}, ""});
  auto w = engine::to_write(s, d);
  CAF_REQUIRE_EQUAL(w.changes.size(), 1u);
  const auto& c = w.changes.front();
  CAF_CHECK(c.status == flow::task_status::completed);
  CAF_CHECK(c.from == flow::task_status::scheduled);
  CAF_REQUIRE(c.output);
  CAF_CHECK_EQUAL(c.output->str(), R"({"waited":1})");
}
