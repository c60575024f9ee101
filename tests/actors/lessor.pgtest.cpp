#define CAF_SUITE actors.lessor
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "actors/lessor/lessor.hpp"
#include "store/sharding.hpp"
#include "store/tasks.hpp"
#include "tests/actors/partition_actors_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;
using leased = std::vector<msg::leased_task>;

namespace {

struct fixture : test::partition_actors_fixture {
  fixture() : partition_actors_fixture("actors_lessor") {}

  caf::actor lessor(std::vector<std::pair<std::string, std::string>> overrides = {}) {
    return keep(actors::spawn_lessor(sys, context(3, std::move(overrides))));
  }

  static msg::poll_request poll_of(const std::string& queue, int max_tasks, int64_t timeout_ms,
                                   const std::string& worker = "w1") {
    msg::poll_request r;
    r.queue = queue;
    r.worker_id = worker;
    r.max_tasks = max_tasks;
    r.timeout_ms = timeout_ms;
    return r;
  }

  /// Sends a poll; the answer is received from the handle later.
  auto start_poll(const caf::actor& l, const msg::poll_request& r) {
    return self->request(l, caf::duration{40s}, poll_atom_v, r);
  }

  /// A poll answered within `wait`; the test fails on an error or no answer.
  leased poll(const caf::actor& l, const msg::poll_request& r, caf::timespan wait = 40s) {
    leased out;
    self->request(l, wait, poll_atom_v, r)
      .receive([&](leased& got) { out = std::move(got); },
               [&](caf::error& err) { CAF_FAIL("poll failed: " << to_string(err)); });
    return out;
  }

  /// Queues `n` runnable tasks on `queue` (one workflow each).
  std::vector<task_id> enqueue(const std::string& queue, int n) {
    std::vector<task_id> out;
    for (int i = 0; i < n; ++i)
      out.push_back(insert_task(insert_workflow(), "t" + std::to_string(i), queue));
    return out;
  }

  void task_def(const std::string& name, const std::string& columns, const std::string& values) {
    sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name", )" + columns
        + ") VALUES ('00000000-0000-0000-0000-000000000001', '" + name + "', " + values + ")");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(lessor_tests, fixture)

CAF_TEST(a poll with work is answered at once and the lease is fenced) {
  auto tasks = enqueue("email", 3);
  auto l = lessor();
  auto got = poll(l, poll_of("email", 2, 0));
  CAF_REQUIRE_EQUAL(got.size(), 2u);
  for (const auto& t : got) {
    CAF_CHECK(!t.lease_token.empty());
    CAF_CHECK_EQUAL(task_status(task_id{t.task_id}), "IN_PROGRESS");
    CAF_CHECK_EQUAL(t.task_type, "SIMPLE");
    CAF_CHECK_EQUAL(t.task_def_name, "email");
  }
  // The token handed out is the one the queue row holds (I5).
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "leaseToken" = ANY($1::uuid[]))",
                        store::params::of(store::text_array(std::vector<std::string>{got[0].lease_token, got[1].lease_token}))),
                  2);
  CAF_CHECK_EQUAL(poll(l, poll_of("email", 5, 0)).size(), 1u);
  CAF_CHECK(poll(l, poll_of("email", 5, 0)).empty());
}

CAF_TEST(a parked poll is answered when work arrives and not at the next retry) {
  // Retry interval 60 s, poll timeout 20 s: only the work hint can deliver the task in time.
  auto l = lessor({{"lessor.poll_interval_ms", "60000"}});
  auto handle = start_poll(l, poll_of("jobs", 1, 20000));
  // A second poll, answered only after a lease transaction that saw the first one: once it
  // answers, the first poll is parked.
  CAF_REQUIRE(poll(l, poll_of("other", 1, 0)).empty());
  auto tasks = enqueue("jobs", 1);
  self->send(l, work_atom_v, std::string{"jobs"});
  leased got;
  handle.receive([&](leased& x) { got = std::move(x); },
                 [&](caf::error& err) { CAF_FAIL("poll failed: " << to_string(err)); });
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].task_id, tasks[0].str());
}

CAF_TEST(a parked poll gets work at the periodic retry without any hint) {
  auto l = lessor({{"lessor.poll_interval_ms", "100"}});
  auto handle = start_poll(l, poll_of("quiet", 1, 30000));
  CAF_REQUIRE(poll(l, poll_of("other", 1, 0)).empty());
  auto tasks = enqueue("quiet", 1);
  leased got;
  handle.receive([&](leased& x) { got = std::move(x); },
                 [&](caf::error& err) { CAF_FAIL("poll failed: " << to_string(err)); });
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].task_id, tasks[0].str());
}

CAF_TEST(a poll that finds nothing is answered empty at its timeout) {
  auto l = lessor({{"lessor.poll_interval_ms", "60000"}});
  auto start = std::chrono::steady_clock::now();
  CAF_CHECK(poll(l, poll_of("idle", 1, 300), 20s).empty());
  CAF_CHECK(std::chrono::steady_clock::now() - start >= 290ms);
  // lessor.max_poll_timeout_ms bounds what a worker asks for.
  auto l2 = lessor({{"lessor.max_poll_timeout_ms", "200"}, {"lessor.poll_interval_ms", "60000"}});
  CAF_CHECK(poll(l2, poll_of("idle", 1, 600000), 20s).empty());
}

CAF_TEST(concurrent polls share one lease transaction) {
  for (int i = 0; i < 5; ++i)
    enqueue("batch" + std::to_string(i), 1);
  task_def("gate", R"("concurrentExecLimit")", "10");
  enqueue("gate", 1);
  auto l = lessor({{"lessor.poll_interval_ms", "60000"}});
  // Hold the lock the lessor takes for a concurrency-limited queue, so its first lease
  // transaction blocks while the other polls queue up behind it.
  auto gate = db.connect();
  CAF_REQUIRE(gate.exec("BEGIN"));
  CAF_REQUIRE(gate.exec("SELECT pg_advisory_xact_lock(hashtextextended('nf.lease:gate', 0))"));
  auto first = start_poll(l, poll_of("gate", 1, 0));
  auto waiting = [&] {
    return count(R"(SELECT count(*) FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock')");
  };
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (waiting() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(2ms);
  CAF_REQUIRE_EQUAL(waiting(), 1);
  std::vector<decltype(start_poll(l, poll_of("x", 1, 0)))> rest;
  for (int i = 0; i < 5; ++i)
    rest.push_back(start_poll(l, poll_of("batch" + std::to_string(i), 1, 0, "w" + std::to_string(i))));
  CAF_REQUIRE(gate.exec("COMMIT"));
  first.receive([&](leased& x) { CAF_CHECK_EQUAL(x.size(), 1u); },
                [&](caf::error& err) { CAF_FAIL(to_string(err)); });
  for (auto& h : rest)
    h.receive([&](leased& x) { CAF_CHECK_EQUAL(x.size(), 1u); },
              [&](caf::error& err) { CAF_FAIL(to_string(err)); });
  // now() is the transaction's start time: one value = one transaction.
  CAF_CHECK_EQUAL(count(R"(SELECT count(DISTINCT "startedAt") FROM "TaskExecutions"
                            WHERE "queueName" LIKE 'batch%')"),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(DISTINCT "startedAt") FROM "TaskExecutions"
                            WHERE "status" = 'IN_PROGRESS')"),
                  2);
}

CAF_TEST(the concurrency limit of a queue is never exceeded) {
  task_def("limited", R"("concurrentExecLimit")", "2");
  auto tasks = enqueue("limited", 6);
  auto l = lessor({{"lessor.poll_interval_ms", "50"}});
  std::vector<decltype(start_poll(l, poll_of("x", 1, 0)))> polls;
  for (int i = 0; i < 4; ++i)
    polls.push_back(start_poll(l, poll_of("limited", 5, 0, "w" + std::to_string(i))));
  leased all;
  for (auto& h : polls)
    h.receive([&](leased& x) { all.insert(all.end(), x.begin(), x.end()); },
              [&](caf::error& err) { CAF_FAIL(to_string(err)); });
  CAF_CHECK_EQUAL(all.size(), 2u);
  // A long poll waits while the limit is reached, and gets a slot when one frees up.
  auto waiting = start_poll(l, poll_of("limited", 5, 30000));
  CAF_REQUIRE(poll(l, poll_of("other", 1, 0)).empty());
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues"
                            WHERE "queueName" = 'limited' AND "leaseToken" IS NOT NULL)"),
                  2);
  store::task_result done;
  done.workflow = workflow_id{all[0].workflow_id};
  done.task = task_id{all[0].task_id};
  done.token = lease_token{all[0].lease_token};
  CAF_REQUIRE(store::complete_task(conn, done));
  leased more;
  waiting.receive([&](leased& x) { more = std::move(x); },
                  [&](caf::error& err) { CAF_FAIL(to_string(err)); });
  CAF_CHECK_EQUAL(more.size(), 1u);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues"
                            WHERE "queueName" = 'limited' AND "leaseToken" IS NOT NULL)"),
                  2);
}

CAF_TEST(the rate limit of a queue is never exceeded) {
  task_def("metered", R"("rateLimitPerFrequency", "rateLimitFrequencyInSeconds")", "3, 1");
  enqueue("metered", 12);
  auto l = lessor({{"lessor.poll_interval_ms", "20"}});
  size_t total = 0;
  auto until = std::chrono::steady_clock::now() + 2500ms;
  while (std::chrono::steady_clock::now() < until) {
    total += poll(l, poll_of("metered", 10, 0)).size();
    std::this_thread::sleep_for(20ms);
  }
  CAF_CHECK_GREATER_OR_EQUAL(total, 6u); // it does let leases through, window after window
  // Fixed windows, each opened by the first lease after the previous one ended (§0010).
  auto r = sql(R"(SELECT extract(epoch FROM "startedAt") * 1000 FROM "TaskExecutions"
                   WHERE "queueName" = 'metered' AND "startedAt" IS NOT NULL ORDER BY "startedAt")");
  CAF_REQUIRE_EQUAL(static_cast<size_t>(r.rows()), total);
  double window_start = -1e18;
  int in_window = 0;
  for (int i = 0; i < r.rows(); ++i) {
    auto at = r.f64(i, 0);
    if (at >= window_start + 1000) {
      window_start = at;
      in_window = 0;
    }
    ++in_window;
    CAF_CHECK_LESS_OR_EQUAL(in_window, 3);
  }
}

CAF_TEST(a poll asking for more than one lease carries is served within the bound) {
  // The api bounds a client's poll (net/api/checks); a system task runner asks for as
  // many tasks as it has free slots (up to system_tasks.concurrency, 1024).
  auto tasks = enqueue("many", 3);
  auto l = lessor({{"lessor.max_batch", "10000"}});
  CAF_CHECK_EQUAL(poll(l, poll_of("many", 1024, 0)).size(), 3u);
}

// responseTimeoutSeconds left out of a definition (stored as 0) is no 1-second lease: the
// task is leased for lessor.lease_seconds, as a heartbeat would extend it, and as a queue
// no definition serves is leased.
CAF_TEST(a definition without responseTimeoutSeconds leases for lessor lease_seconds) {
  task_def("unset", R"("responseTimeoutSeconds")", "0");  // as registering leaves it
  task_def("set", R"("responseTimeoutSeconds")", "30");
  enqueue("unset", 1);
  enqueue("set", 1);
  auto l = lessor({{"lessor.lease_seconds", "120"}});
  auto lease_s = [&](const std::string& queue) {
    auto got = poll(l, poll_of(queue, 1, 0));
    CAF_REQUIRE_EQUAL(got.size(), 1u);
    return count(R"(SELECT round(extract(epoch FROM "leaseExpiresAt" - now()))::bigint
                      FROM "TaskQueues" WHERE "leaseToken" = $1)",
                 store::params::of(got.front().lease_token));
  };
  auto unset = lease_s("unset");
  CAF_CHECK(unset > 110 && unset <= 120);
  auto set = lease_s("set");
  CAF_CHECK(set > 20 && set <= 30);
}

CAF_TEST_FIXTURE_SCOPE_END()
