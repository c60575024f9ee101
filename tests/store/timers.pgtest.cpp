#define CAF_SUITE store.timers
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <thread>

#include <boost/json.hpp>

#include "store/json.hpp"
#include "store/pg/transaction.hpp"
#include "store/tasks.hpp"
#include "store/lease_postpone.hpp"
#include "flow/retry.hpp"
#include "store/timers.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("timers") {}

  /// Makes a task's pending timer of `kind` due now.
  void make_due(const task_id& t, const char* kind) {
    sql(R"(UPDATE "Timers" SET "fireAt" = now() - interval '1 second'
            WHERE "taskId" = $1 AND "kind" = $2::timer_kind AND "claimedAt" IS NULL)",
        params::of(t, std::string{kind}));
  }

  timer_spec due_now(timer_kind kind, const workflow_id& wf, std::optional<task_id> t) {
    return timer_spec{kind, wf, shard_of(wf), std::move(t), std::nullopt, 0};
  }

  std::vector<fired_timer> fire() {
    auto r = fire_due_timers(conn, fire_options{});
    CAF_REQUIRE(r);
    return std::move(*r);
  }

  void complete(const leased_task& t) {
    task_result r;
    r.workflow = t.workflow;
    r.task = t.task;
    r.token = t.token;
    r.output = json(boost::json::object{{"ok", true}});
    CAF_REQUIRE(complete_task(conn, r));
  }

  std::string decide_reason(const workflow_id& wf) {
    return scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1)", params::of(wf));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(timer_tests, fixture)

// I6: the completion normally deletes the deadlines; here a claimer holds them locked at
// that moment, so SKIP LOCKED passes them by and they outlive the task. Only the re-check
// stands between the late timers and an invented failure.
CAF_TEST(deadlines that fire after the task completed are no-ops) {
  auto wf = insert_workflow();
  insert_task(wf, "a", "q1");
  auto t = lease_one("q1", "w1", 60);
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::schedule_to_start, wf, t.task)}));
  {
    auto claimer = db.connect();
    transaction tx{claimer};
    CAF_REQUIRE(tx.begin());
    auto locked = claimer.exec(R"(SELECT "id" FROM "Timers" WHERE "taskId" = $1 FOR UPDATE)",
                               params::of(t.task));
    CAF_REQUIRE(locked);
    CAF_REQUIRE_EQUAL(locked->rows(), 2);
    complete(t);
  } // the claimer rolls back: both timers are still pending
  CAF_REQUIRE_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1
                              AND "claimedAt" IS NULL)", params::of(t.task)), 2);
  make_due(t.task, "startToClose");
  make_due(t.task, "scheduleToStart");
  auto before = snapshot(wf, false);
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 2u);
  for (const auto& f : fired) {
    CAF_CHECK(!f.acted);
    CAF_CHECK_EQUAL(f.task->str(), t.task.str());
  }
  CAF_CHECK_EQUAL(snapshot(wf, false), before);
  CAF_CHECK_EQUAL(task_status(t.task), "COMPLETED");
  CAF_CHECK(fire().empty()); // claimed: they never come back
}

CAF_TEST(a scheduleToStart deadline is a no-op once the task was leased) {
  auto wf = insert_workflow();
  insert_task(wf, "a", "q2");
  auto t = lease_one("q2");
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::schedule_to_start, wf, t.task)}));
  auto before = snapshot(wf, false);
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 1u);
  CAF_CHECK(!fired[0].acted);
  CAF_CHECK_EQUAL(snapshot(wf, false), before);
}

CAF_TEST(a startToClose deadline of an earlier lease leaves the current lease alone) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "q3");
  auto first = lease_one("q3", "w1", 60);
  requeue(task);
  auto second = lease_one("q3", "w2", 600);
  // Only the first lease's timer is due: it guards a lease that no longer exists.
  sql(R"(UPDATE "Timers" SET "fireAt" = now() - interval '1 second' WHERE "leaseToken" = $1)",
      params::of(first.token));
  auto before = snapshot(wf, false);
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 1u);
  CAF_CHECK(!fired[0].acted);
  CAF_CHECK_EQUAL(snapshot(wf, false), before);
  CAF_CHECK_EQUAL(task_status(task), "IN_PROGRESS");
}

CAF_TEST(a startToClose deadline times the running attempt out exactly once) {
  auto wf = insert_workflow();
  insert_task(wf, "a", "q4");
  auto t = lease_one("q4", "w1", 60);
  make_due(t.task, "startToClose");
  // Claimer A fires inside an open transaction; claimer B runs meanwhile and must skip
  // the locked timer, not wait for it and not fire it too.
  auto a = db.connect();
  transaction tx{a};
  CAF_REQUIRE(tx.begin());
  auto fa = fire_due_timers(tx, fire_options{});
  CAF_REQUIRE(fa);
  CAF_REQUIRE_EQUAL(fa->size(), 1u);
  CAF_CHECK((*fa)[0].acted);
  auto b = db.connect();
  std::atomic<bool> done{false};
  caf::expected<std::vector<fired_timer>> fb{std::vector<fired_timer>{}};
  std::thread th{[&] {
    fb = fire_due_timers(b, fire_options{});
    done = true;
  }};
  bool blocked = wait_until_blocked(b.backend_pid(), [&] { return done.load(); });
  CAF_CHECK(!blocked);
  if (blocked)
    CAF_REQUIRE(tx.commit()); // let B finish so the failure is reported, not a hang
  th.join();
  CAF_REQUIRE(fb);
  CAF_CHECK(fb->empty());
  if (!blocked)
    CAF_REQUIRE(tx.commit());
  CAF_CHECK(fire().empty());
  CAF_CHECK_EQUAL(task_status(t.task), "TIMED_OUT");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "reasonForIncompletion" FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t.task)),
                  std::string{nf::flow::response_timeout_reason});
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)", params::of(t.task)), 0);
  CAF_CHECK_EQUAL(events(wf), "1:TASK_STARTED,2:TASK_TIMED_OUT");
  CAF_CHECK_EQUAL(decide_reason(wf), "startToClose");
  // The worker that held the lease is told so.
  task_result late;
  late.workflow = wf;
  late.task = t.task;
  late.token = t.token;
  auto r = complete_task(conn, late);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::lease_lost);
}

CAF_TEST(racing claimers fire each due deadline once) {
  std::vector<workflow_id> wfs;
  for (int i = 0; i < 4; ++i)
    wfs.push_back(insert_workflow());
  for (int i = 0; i < 24; ++i)
    insert_task(wfs[static_cast<size_t>(i) % wfs.size()], "t" + std::to_string(i), "q5");
  for (int i = 0; i < 24; ++i)
    lease_one("q5", "w", 60);
  sql(R"(UPDATE "Timers" SET "fireAt" = now() - interval '1 second')");
  std::atomic<int> acted{0}, errors{0};
  std::vector<std::thread> ths;
  for (int k = 0; k < 2; ++k)
    ths.emplace_back([&] {
      auto c = db.connect();
      for (;;) {
        auto r = fire_due_timers(c, fire_options{{}, 3, 48});
        if (!r) {
          ++errors;
          return;
        }
        if (r->empty())
          return;
        for (const auto& f : *r)
          acted += f.acted ? 1 : 0;
      }
    });
  for (auto& t : ths)
    t.join();
  CAF_CHECK_EQUAL(errors.load(), 0);
  CAF_CHECK_EQUAL(acted.load(), 24);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "status" = 'TIMED_OUT')"), 24);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "eventType" = 'TASK_TIMED_OUT')"), 24);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 0);
}

CAF_TEST(a scheduleToStart deadline times out a task still waiting in its queue) {
  auto wf = insert_workflow();
  auto t = insert_task(wf, "a", "q6");
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::schedule_to_start, wf, t)}));
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 1u);
  CAF_CHECK(fired[0].acted);
  CAF_CHECK(fired[0].kind == timer_kind::schedule_to_start);
  CAF_CHECK_EQUAL(task_status(t), "TIMED_OUT");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)", params::of(t)), 0);
  CAF_CHECK_EQUAL(events(wf), "1:TASK_TIMED_OUT");
  CAF_CHECK_EQUAL(decide_reason(wf), "scheduleToStart");
}

// pollTimeoutSeconds waits for a first poll. A task its worker gave back for a while (a
// callback) is SCHEDULED again without a queue row until due: its poll deadline, passed
// meanwhile, must not time it out.
CAF_TEST(a scheduleToStart deadline is a no-op for a task given back after a poll) {
  auto wf = insert_workflow();
  insert_task(wf, "a", "q7");
  auto t = lease_one("q7");
  CAF_REQUIRE(postpone_lease(conn, postponed_lease{wf, t.task, t.token, 3600}));
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::schedule_to_start, wf, t.task)}));
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 1u);
  CAF_CHECK(fired[0].kind == timer_kind::schedule_to_start);
  CAF_CHECK(!fired[0].acted);
  CAF_CHECK_EQUAL(task_status(t.task), "SCHEDULED");
}

CAF_TEST(a delay enqueues its task once and tells which queue to nudge) {
  auto wf = insert_workflow(7);
  auto t = insert_task(wf, "later", "q7", false);
  auto gone = insert_task(wf, "gone", "q7", false);
  sql(R"(UPDATE "TaskExecutions" SET "status" = 'CANCELED', "endedAt" = now() WHERE "id" = $1)",
      params::of(gone));
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::delay, wf, t), due_now(timer_kind::delay, wf, gone)}));
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 2u);
  int acted = 0;
  for (const auto& f : fired) {
    if (f.task->str() == t.str()) {
      CAF_CHECK(f.acted);
      CAF_CHECK_EQUAL(f.queue, "q7");
      ++acted;
    } else {
      CAF_CHECK(!f.acted);
      CAF_CHECK(f.queue.empty());
    }
  }
  CAF_CHECK_EQUAL(acted, 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1 AND "queueName" = 'q7'
                            AND "priority" = 7 AND "leaseToken" IS NULL AND "taskType" = 'SIMPLE')",
                        params::of(t)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)", params::of(gone)), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
  // A second delay for a task already queued is a no-op.
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::delay, wf, t)}));
  auto again = fire();
  CAF_REQUIRE_EQUAL(again.size(), 1u);
  CAF_CHECK(!again[0].acted);
  auto leased = lease_one("q7");
  CAF_CHECK_EQUAL(leased.task.str(), t.str());
}

CAF_TEST(workflow deadlines wake the decider while the workflow runs and are no-ops after) {
  auto wf = insert_workflow();
  auto waiting = insert_task(wf, "wait", "q8", false);
  auto open = insert_task(wf, "long", "q8", false);
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::workflow_timeout, wf, std::nullopt),
                                due_now(timer_kind::wait, wf, waiting),
                                due_now(timer_kind::task_timeout, wf, open)}));
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 3u);
  for (const auto& f : fired)
    CAF_CHECK(f.acted);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)", params::of(wf)), 1);
  CAF_CHECK_EQUAL(events(wf), "1:TIMER_FIRED,2:TIMER_FIRED,3:TIMER_FIRED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT string_agg("payload"->>'timer', ',' ORDER BY "seq") FROM "WorkflowEvents"
                             WHERE "workflowId" = $1)",
                         params::of(wf)),
                  "workflowTimeout,wait,taskTimeout");
  // Once the workflow ended, the same deadlines change nothing.
  sql(R"(UPDATE "WorkflowExecutions" SET "status" = 'COMPLETED', "endedAt" = now() WHERE "id" = $1)",
      params::of(wf));
  sql(R"(DELETE FROM "DecideQueues")");
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::workflow_timeout, wf, std::nullopt),
                                due_now(timer_kind::wait, wf, waiting),
                                due_now(timer_kind::schedule_to_start, wf, open)}));
  auto before = snapshot(wf, false);
  auto late = fire();
  CAF_REQUIRE_EQUAL(late.size(), 3u);
  for (const auto& f : late)
    CAF_CHECK(!f.acted);
  CAF_CHECK_EQUAL(snapshot(wf, false), before);
}

CAF_TEST(a taskTimeout is a no-op once no attempt of its task is open) {
  auto wf = insert_workflow();
  auto t = insert_task(wf, "done", "q9", false);
  sql(R"(UPDATE "TaskExecutions" SET "status" = 'COMPLETED', "endedAt" = now() WHERE "id" = $1)",
      params::of(t));
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::task_timeout, wf, t)}));
  auto fired = fire();
  CAF_REQUIRE_EQUAL(fired.size(), 1u);
  CAF_CHECK(!fired[0].acted);
  // A retry (attempt 1) of the same ref still running: the total timeout applies.
  insert_task(wf, "done", "q9", false, 1);
  CAF_REQUIRE(arm_timers(conn, {due_now(timer_kind::task_timeout, wf, t)}));
  auto again = fire();
  CAF_REQUIRE_EQUAL(again.size(), 1u);
  CAF_CHECK(again[0].acted);
  CAF_CHECK_EQUAL(decide_reason(wf), "taskTimeout");
}

CAF_TEST(timers fire only when due and the earliest pending one sets the sleep) {
  auto wf = insert_workflow();
  auto t = insert_task(wf, "a", "q10", false);
  auto shard = shard_id{shard_of(wf)};
  auto none = earliest_pending_timer(conn, {shard});
  CAF_REQUIRE(none);
  CAF_CHECK(!none->has_value());
  auto soon = due_now(timer_kind::delay, wf, t);
  soon.after_ms = 5000;
  auto later = soon;
  later.after_ms = 600000;
  // Three hours ahead is past the hours the lookup plans for: the timer's poll finds it.
  auto far = soon;
  far.after_ms = 3 * 3600 * 1000;
  CAF_REQUIRE(arm_timers(conn, {far}));
  auto beyond = earliest_pending_timer(conn, {shard});
  CAF_REQUIRE(beyond);
  CAF_CHECK(!beyond->has_value());
  CAF_REQUIRE(arm_timers(conn, {later, soon}));
  auto e = earliest_pending_timer(conn, {shard});
  CAF_REQUIRE(e);
  CAF_REQUIRE(e->has_value());
  CAF_CHECK_LESS_OR_EQUAL(**e, 5000);
  CAF_CHECK_GREATER(**e, 3000);
  auto other = earliest_pending_timer(conn, {shard_id{static_cast<int16_t>((shard.value() + 1) % 16)}});
  CAF_REQUIRE(other);
  CAF_CHECK(!other->has_value());
  CAF_CHECK(fire().empty());
  auto bad = arm_timers(conn, {timer_spec{timer_kind::start_to_close, wf, 0, t, std::nullopt, 0}});
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::code_of(bad.error()), nf::errc::invalid);
  CAF_CHECK_EQUAL(nf::message_of(bad.error()), "timers[0].token: expected the lease token a startToClose timer guards");
}

CAF_TEST_FIXTURE_SCOPE_END()
