#define CAF_SUITE actors.timer
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <thread>

#include "actors/timer/node_timer.hpp"
#include "actors/timer/timer.hpp"
#include "store/schema/partitions.hpp"
#include "store/tasks.hpp"
#include "store/timers.hpp"
#include "tests/actors/partition_actors_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

struct fixture : test::partition_actors_fixture {
  fixture() : partition_actors_fixture("actors_timer") {}

  /// As a node does: the partition's timer joins a node timer, which fires.
  caf::actor timer(int16_t shard, const std::string& poll_interval_ms,
                   const std::string& full_sweep_interval_ms = "60000") {
    return timer(shard, poll_interval_ms, full_sweep_interval_ms, nullptr);
  }

  /// The same, joining `node_timer` when it is given (as a second partition of a node).
  caf::actor timer(int16_t shard, const std::string& poll_interval_ms,
                   const std::string& full_sweep_interval_ms, caf::actor* node_timer) {
    auto ctx = context(shard, {{"timer.poll_interval_ms", poll_interval_ms},
                               {"timer.full_sweep_interval_ms", full_sweep_interval_ms}});
    if (node_timer == nullptr || !*node_timer) {
      actors::node_timer_context t;
      t.dsn = ctx.dsn;
      t.node = ctx.node;
      t.settings = ctx.settings;
      ctx.node_timer = keep(actors::spawn_node_timer(sys, t));
      if (node_timer != nullptr)
        *node_timer = ctx.node_timer;
    } else {
      ctx.node_timer = *node_timer;
    }
    return keep(actors::spawn_timer(sys, ctx));
  }

  void arm(store::timer_kind kind, const workflow_id& wf, const task_id& task,
           std::optional<lease_token> token, int64_t after_ms) {
    store::timer_spec t;
    t.kind = kind;
    t.workflow = wf;
    t.shard = shard_of(wf);
    t.task = task;
    t.token = std::move(token);
    t.after_ms = after_ms;
    CAF_REQUIRE(store::arm_timers(conn, {t}));
  }

  int64_t pending_timers() {
    return count(R"(SELECT count(*) FROM "Timers" WHERE "claimedAt" IS NULL)");
  }

  /// The "Timers" partitions of the last hours (the manager makes them from now on).
  void make_past_hours() {
    CAF_REQUIRE(store::partition_manager{}.ensure_ahead(conn, std::chrono::system_clock::now()
                                                                - std::chrono::hours{3}));
  }

  /// A workflow timeout of `wf` that fell due two hours ago, as for a shard nobody served
  /// since (make_past_hours first).
  void arm_overdue(const workflow_id& wf) {
    store::timer_spec t;
    t.kind = store::timer_kind::workflow_timeout;
    t.workflow = wf;
    t.shard = shard_of(wf);
    t.after_ms = 3600000; // not due before it is moved back: no poll may claim it on the way
    CAF_REQUIRE(store::arm_timers(conn, {t}));
    sql(R"(UPDATE "Timers" SET "fireAt" = now() - interval '2 hours' WHERE "workflowId" = $1)",
        store::params::of(wf));
  }

  int64_t pending_timers_of(const workflow_id& wf) {
    return count(R"(SELECT count(*) FROM "Timers" WHERE "claimedAt" IS NULL AND "workflowId" = $1)",
                 store::params::of(wf));
  }

  bool await_fired(const workflow_id& wf, std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (pending_timers_of(wf) > 0) {
      if (std::chrono::steady_clock::now() >= deadline)
        return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

  static int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(timer_tests, fixture)

CAF_TEST(an armed hint wakes the timer long before its next poll) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "jobs");
  auto leased = lease_one("jobs");
  auto shard = shard_of(wf);
  auto before = backends();
  auto t = timer(shard, "60000"); // only the hint can make it fire within the test
  await_round(before, R"("fireAt" - now())");
  arm(store::timer_kind::start_to_close, wf, task, leased.token, 100);
  self->send(t, armed_atom_v, wall_ms() + 100);
  CAF_REQUIRE(await_hints([&] { return decided(shard); }));
  CAF_CHECK_EQUAL(task_status(task), "TIMED_OUT");
  CAF_CHECK_EQUAL(pending_timers(), 0);
  CAF_CHECK(await_hints([&] { return !hints.outbox.empty(); })); // TASK_TIMED_OUT went out
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)",
                        store::params::of(task)),
                  0);
}

CAF_TEST(a late deadline against finished work is a no-op) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "jobs");
  auto leased = lease_one("jobs");
  store::task_result done;
  done.workflow = wf;
  done.task = task;
  done.token = leased.token;
  CAF_REQUIRE(store::complete_task(conn, done));
  sql(R"(DELETE FROM "DecideQueues")");
  auto before = snapshot(wf, false);
  // The deadline the completion raced: it comes due after the task finished.
  arm(store::timer_kind::start_to_close, wf, task, leased.token, 50);
  auto shard = shard_of(wf);
  timer(shard, "50");
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (pending_timers() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  CAF_REQUIRE_EQUAL(pending_timers(), 0);
  CAF_CHECK_EQUAL(snapshot(wf, false), before);
  CAF_CHECK_EQUAL(task_status(task), "COMPLETED");
  await_hints([] { return false; }, 200ms);
  CAF_CHECK(hints.decide.empty());
  CAF_CHECK(hints.outbox.empty());
}

CAF_TEST(a due delay timer enqueues its task and wakes the queue s lessor without a hint) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "later", "delayed", false);
  auto shard = shard_of(wf);
  timer(shard, "100"); // no hint is sent: the periodic poll finds it (I9)
  arm(store::timer_kind::delay, wf, task, std::nullopt, 50);
  CAF_REQUIRE(await_hints([&] { return !hints.work.empty(); }));
  CAF_CHECK_EQUAL(hints.work.front(), "delayed");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1 AND "queueName" = 'delayed')",
                        store::params::of(task)),
                  1);
  CAF_CHECK(hints.decide.empty()); // nothing for the decider: the task just became runnable
}

CAF_TEST(the timer only fires its own partition) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "jobs");
  auto leased = lease_one("jobs");
  auto shard = shard_of(wf);
  arm(store::timer_kind::start_to_close, wf, task, leased.token, 0);
  timer(static_cast<int16_t>((shard + 1) % 16), "20");
  await_hints([] { return false; }, 300ms);
  CAF_CHECK_EQUAL(pending_timers(), 1);
  CAF_CHECK_EQUAL(task_status(task), "IN_PROGRESS");
}

CAF_TEST(expired leases are swept on the poll and the decider is woken) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "jobs");
  lease_one("jobs");
  auto shard = shard_of(wf);
  // Only the sweep can time it out: no deadline timer, and a lease already past.
  sql(R"(DELETE FROM "Timers")");
  sql(R"(UPDATE "TaskQueues" SET "leaseExpiresAt" = now() - interval '1 second'
          WHERE "taskId" = $1)",
      store::params::of(task));
  timer(shard, "50");
  CAF_REQUIRE(await_hints([&] { return decided(shard); }));
  CAF_CHECK_EQUAL(task_status(task), "TIMED_OUT");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        store::params::of(wf)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)",
                        store::params::of(task)),
                  0);
}

CAF_TEST(a partition whose timer stopped is no longer fired by the node timer) {
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "jobs");
  auto leased = lease_one("jobs");
  auto shard = shard_of(wf);
  auto t = timer(shard, "20");
  // The node timer learns of the partition's end from its monitor, as when the
  // partition moves to another node.
  self->send_exit(t, caf::exit_reason::user_shutdown);
  await_hints([] { return false; }, 300ms);
  arm(store::timer_kind::start_to_close, wf, task, leased.token, 0);
  await_hints([] { return false; }, 300ms);
  CAF_CHECK_EQUAL(pending_timers(), 1);
  CAF_CHECK_EQUAL(task_status(task), "IN_PROGRESS");
}

CAF_TEST(a timer overdue by hours fires when its shard is joined) {
  make_past_hours();
  auto wf = insert_workflow();
  auto shard = shard_of(wf);
  // The node timer serves another shard first: its own first sweep is over before the
  // overdue timer is armed, and the next is an hour away.
  caf::actor node_timer;
  timer(static_cast<int16_t>((shard + 1) % 16), "20", "3600000", &node_timer);
  await_hints([] { return false; }, 300ms);
  arm_overdue(wf);
  // Polls every 20 ms look at the last hour only: the join's check sweeps the horizon.
  timer(shard, "20", "3600000", &node_timer);
  CAF_CHECK(await_fired(wf, 10s));
}

CAF_TEST(a timer overdue by hours is left to the full sweep and fired by it) {
  make_past_hours();
  auto early = insert_workflow();
  auto shard = shard_of(early);
  auto fresh = insert_workflow();
  while (shard_of(fresh) != shard)
    fresh = insert_workflow();
  timer(shard, "20", "3000");
  await_hints([] { return false; }, 300ms); // the join's full sweep is over
  arm_overdue(early);
  store::timer_spec t;
  t.kind = store::timer_kind::workflow_timeout;
  t.workflow = fresh;
  t.shard = shard;
  CAF_REQUIRE(store::arm_timers(conn, {t}));
  // The polls' claims, of the last hour, fire the fresh one and leave the old one...
  CAF_REQUIRE(await_fired(fresh, 5s));
  CAF_CHECK_EQUAL(pending_timers_of(early), 1);
  // ...to the full sweep, which comes within timer.full_sweep_interval_ms.
  CAF_CHECK(await_fired(early, 15s));
}

CAF_TEST_FIXTURE_SCOPE_END()
