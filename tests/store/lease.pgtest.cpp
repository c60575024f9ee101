#define CAF_SUITE store.lease
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <set>
#include <thread>

#include "store/lease_hand_back.hpp"
#include "store/lease_postpone.hpp"
#include "store/timers.hpp"
#include "store/partition_fence.hpp"
#include "store/pg/transaction.hpp"
#include "store/queue_partitions.hpp"
#include "store/queues.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

/// A lease on its own connection and thread: the second leaser of a race.
struct other_leaser {
  connection conn;
  std::atomic<bool> done{false};
  caf::expected<std::vector<leased_task>> got{std::vector<leased_task>{}};
  std::thread th;

  other_leaser(const test::test_database& db, lease_request r) : conn{db.connect()} {
    th = std::thread{[this, r] {
      got = lease_tasks(conn, r);
      done = true;
    }};
  }
  ~other_leaser() {
    if (th.joinable())
      th.join();
  }
  void join() { th.join(); }
};

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("lease") {}

  static lease_request req(const std::string& queue, int n, int start_to_close = 0) {
    lease_request r;
    r.queue = queue;
    r.max_tasks = n;
    r.worker_id = "w1";
    r.lease_seconds = 300;
    r.start_to_close_seconds = start_to_close;
    return r;
  }

  /// `n` tasks in `queue`, each in a workflow of its own (so concurrent leasers never
  /// meet on an execution row and only the queue decides who waits).
  void fill(const std::string& queue, int n) {
    for (int i = 0; i < n; ++i)
      insert_task(insert_workflow(), "t" + std::to_string(i), queue);
  }

  /// Leases `first` in a transaction left open, runs `second` on another connection
  /// meanwhile, and checks whether it had to wait for the first to commit.
  std::pair<std::vector<leased_task>, std::vector<leased_task>>
  race(const lease_request& first, const lease_request& second, bool second_waits) {
    auto mine = db.connect();
    transaction tx{mine};
    CAF_REQUIRE(tx.begin());
    auto a = lease_batches(tx, {first}); // uncommitted: its rows and locks stay held
    CAF_REQUIRE(a);
    other_leaser other{db, second};
    bool blocked = wait_until_blocked(other.conn.backend_pid(), [&] { return other.done.load(); });
    CAF_CHECK_EQUAL(blocked, second_waits);
    if (blocked)
      CAF_REQUIRE(tx.commit());
    other.join();
    if (!blocked)
      CAF_REQUIRE(tx.commit());
    CAF_REQUIRE(other.got);
    return {std::move((*a)[0]), std::move(*other.got)};
  }

  int64_t leased_rows(const std::string& queue) {
    return count(R"(SELECT count(*) FROM "TaskQueues" WHERE "queueName" = $1 AND "leaseToken" IS NOT NULL)",
                 params::of(queue));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(lease_tests, fixture)

CAF_TEST(a lease takes the highest priority first then FIFO and starts the tasks) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  auto wf = insert_workflow();
  auto a = insert_task(wf, "a", "q1", true, 0, 0);
  auto b = insert_task(wf, "b", "q1", true, 0, 5);
  auto c = insert_task(wf, "c", "q1", true, 0, 5);
  auto d = insert_task(wf, "d", "q1", true, 0, 0);
  auto got = lease_tasks(conn, req("q1", 3, 60));
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->size(), 3u);
  CAF_CHECK_EQUAL((*got)[0].task.str(), b.str());
  CAF_CHECK_EQUAL((*got)[1].task.str(), c.str());
  CAF_CHECK_EQUAL((*got)[2].task.str(), a.str());
  std::set<std::string> tokens;
  for (const auto& t : *got) {
    CAF_CHECK_EQUAL(t.queue, "q1");
    CAF_CHECK_EQUAL(t.workflow.str(), wf.str());
    CAF_CHECK_EQUAL(t.task_type, "SIMPLE");
    CAF_CHECK_EQUAL(t.task_def_name, "q1");
    CAF_CHECK_EQUAL(t.input, "{\"ref\": \"" + t.ref_name + "\"}");
    tokens.insert(t.token.str());
    // The lease row carries exactly the token handed out, stamped by the server clock.
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1 AND "leaseToken" = $2
                              AND "leasedBy" = 'w1' AND "leaseExpiresAt" BETWEEN now() + interval '299 s'
                              AND now() + interval '301 s'
                              AND (extract(epoch FROM "leaseExpiresAt") * 1000)::bigint = $3)",
                          params::of(t.task, t.token, t.lease_expires_at_ms)),
                    1);
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1 AND "status" = 'IN_PROGRESS'
                              AND "workerId" = 'w1' AND "pollCount" = 1 AND "startedAt" IS NOT NULL)",
                          params::of(t.task)),
                    1);
    // startToClose armed with the lease token it guards, ~60 s out.
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1 AND "kind" = 'startToClose'
                              AND "leaseToken" = $2 AND "claimedAt" IS NULL
                              AND "fireAt" BETWEEN now() + interval '59 s' AND now() + interval '61 s')",
                          params::of(t.task, t.token)),
                    1);
  }
  CAF_CHECK_EQUAL(tokens.size(), 3u);
  CAF_CHECK_EQUAL(task_status(d), "SCHEDULED");
  // One TASK_STARTED per task, seqs 1..3 with no gap, each published through the outbox.
  CAF_CHECK_EQUAL(scalar(R"(SELECT string_agg("seq"::text || ':' || "eventType"::text, ',' ORDER BY "seq")
                              FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                         params::of(wf)),
                  "1:TASK_STARTED,2:TASK_STARTED,3:TASK_STARTED");
  CAF_CHECK_EQUAL(count(R"(SELECT "lastSeq" FROM "WorkflowExecutions" WHERE "id" = $1)", params::of(wf)), 3);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1
                            AND "eventType" = 'TASK_STARTED' AND "payload" ? 'seq')",
                        params::of(wf)),
                  3);
}

CAF_TEST(no timeout arms no timer and an empty queue leases nothing) {
  auto wf = insert_workflow();
  insert_task(wf, "a", "q2");
  auto got = lease_tasks(conn, req("q2", 5));
  CAF_REQUIRE(got);
  CAF_CHECK_EQUAL(got->size(), 1u);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers")"), 0);
  auto none = lease_tasks(conn, req("q2", 5));
  CAF_REQUIRE(none);
  CAF_CHECK(none->empty());
  auto unknown = lease_tasks(conn, req("nobody-uses-this-queue", 5));
  CAF_REQUIRE(unknown);
  CAF_CHECK(unknown->empty());
}

CAF_TEST(several queues lease in one transaction and each request gets its own answer) {
  auto wf = insert_workflow();
  insert_task(wf, "a1", "qa");
  insert_task(wf, "a2", "qa");
  auto b1 = insert_task(wf, "b1", "qb");
  auto rb = req("qb", 5);
  rb.worker_id = "wb";
  auto got = lease_batches(conn, {rb, req("qa", 1)});
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->size(), 2u);
  CAF_REQUIRE_EQUAL((*got)[0].size(), 1u);
  CAF_CHECK_EQUAL((*got)[0][0].task.str(), b1.str());
  CAF_CHECK_EQUAL((*got)[0][0].queue, "qb");
  CAF_REQUIRE_EQUAL((*got)[1].size(), 1u);
  CAF_CHECK_EQUAL((*got)[1][0].queue, "qa");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "workerId" FROM "TaskExecutions" WHERE "id" = $1)", params::of(b1)), "wb");
  // Two events, one seq allocation: 1 and 2, no gap across the queues.
  CAF_CHECK_EQUAL(scalar(R"(SELECT string_agg("seq"::text, ',' ORDER BY "seq") FROM "WorkflowEvents"
                             WHERE "workflowId" = $1)",
                         params::of(wf)),
                  "1,2");
}

// What each leased task's completion needs (lease_facts), given out only after the lease
// and only for the requests whose timers' reach is known.
CAF_TEST(a lease gives out what its completions need for the requests that ask) {
  auto wf = insert_workflow();
  auto a = insert_task(wf, "a1", "qa");
  insert_task(wf, "b1", "qb");
  auto ra = req("qa", 5, 30);
  ra.timers_within_s = 31;
  std::vector<lease_facts> facts{lease_facts{}};  // a stale entry: cleared first
  auto got = lease_batches(conn, {ra, req("qb", 5)}, &facts);
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL((*got)[0].size(), 1u);
  CAF_REQUIRE_EQUAL((*got)[1].size(), 1u);
  CAF_REQUIRE_EQUAL(facts.size(), 1u);
  const auto& f = facts[0];
  const auto& t = (*got)[0][0];
  CAF_CHECK_EQUAL(f.task.str(), a.str());
  CAF_CHECK_EQUAL(f.workflow.str(), wf.str());
  CAF_CHECK_EQUAL(f.token.str(), t.token.str());
  CAF_CHECK_EQUAL(f.queue, "qa");
  CAF_CHECK_EQUAL(f.identity.ref, "a1");
  CAF_CHECK_EQUAL(f.timers_within_s.value_or(0), 31);
  CAF_CHECK_EQUAL(f.ns.str(), scalar(R"(SELECT "namespaceId"::text FROM "TaskExecutions"
                                         WHERE "id" = $1)",
                                     params::of(a)));
  CAF_CHECK_EQUAL(f.shard, count(R"(SELECT "shard" FROM "TaskQueues" WHERE "taskId" = $1)",
                                 params::of(a)));
  // A minute before the lease, as the server's clock has it.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1
                           AND $2::timestamptz BETWEEN "leaseExpiresAt" - interval '6 minutes 1 second'
                                                   AND "leaseExpiresAt" - interval '5 minutes 59 seconds')",
                        params::of(a, f.scheduled_at)),
                  1);
}

CAF_TEST(polls of one queue share a claim and each gets its rows in order under its worker) {
  auto wf = insert_workflow();
  std::vector<task_id> tasks;
  for (int i = 0; i < 5; ++i)
    tasks.push_back(insert_task(wf, "s" + std::to_string(i), "qs"));
  auto urgent = insert_task(wf, "urgent", "qs", true, 0, 9);
  std::vector<lease_request> reqs;
  for (const char* w : {"w1", "w2", "w3"}) {
    reqs.push_back(req("qs", 2));
    reqs.back().worker_id = w;
  }
  auto got = lease_batches(conn, reqs);
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->size(), 3u);
  // Priority first, then FIFO, handed out poll by poll.
  std::vector<std::vector<task_id>> want{{urgent, tasks[0]}, {tasks[1], tasks[2]},
                                         {tasks[3], tasks[4]}};
  for (size_t i = 0; i < 3; ++i) {
    CAF_REQUIRE_EQUAL((*got)[i].size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      const auto& t = (*got)[i][k];
      CAF_CHECK_EQUAL(t.task.str(), want[i][k].str());
      // The queue row and the task row name the worker the task went to.
      CAF_CHECK_EQUAL(scalar(R"(SELECT "leasedBy" FROM "TaskQueues" WHERE "taskId" = $1
                                 AND "leaseToken" = $2)",
                             params::of(t.task, t.token.str())),
                      reqs[i].worker_id);
      CAF_CHECK_EQUAL(scalar(R"(SELECT "workerId" FROM "TaskExecutions" WHERE "id" = $1)",
                             params::of(t.task)),
                      reqs[i].worker_id);
    }
  }
}

CAF_TEST(a concurrent leaser skips rows another lease holds and never blocks on them) {
  fill("qc", 4);
  auto [first, second] = race(req("qc", 2), req("qc", 4), false);
  CAF_REQUIRE_EQUAL(first.size(), 2u);
  CAF_REQUIRE_EQUAL(second.size(), 2u);
  std::set<task_id> all;
  for (const auto& t : first)
    all.insert(t.task);
  for (const auto& t : second)
    all.insert(t.task);
  CAF_CHECK_EQUAL(all.size(), 4u);
}

CAF_TEST(racing leasers in a loop never hand out a task twice) {
  // Shared workflows on purpose: the leasers also meet on execution rows.
  std::vector<workflow_id> wfs;
  for (int i = 0; i < 6; ++i)
    wfs.push_back(insert_workflow());
  for (int i = 0; i < 60; ++i)
    insert_task(wfs[static_cast<size_t>(i) % wfs.size()], "t" + std::to_string(i), "qr");
  std::vector<std::vector<leased_task>> got(2);
  std::atomic<int> errors{0};
  std::vector<std::thread> ths;
  for (size_t k = 0; k < 2; ++k)
    ths.emplace_back([&, k] {
      auto c = db.connect();
      for (;;) {
        auto r = lease_tasks(c, req("qr", 3));
        if (!r) {
          ++errors;
          return;
        }
        if (r->empty())
          return;
        got[k].insert(got[k].end(), r->begin(), r->end());
      }
    });
  for (auto& t : ths)
    t.join();
  CAF_CHECK_EQUAL(errors.load(), 0);
  std::set<task_id> all;
  for (const auto& g : got)
    for (const auto& t : g)
      all.insert(t.task);
  CAF_CHECK_EQUAL(got[0].size() + got[1].size(), 60u);
  CAF_CHECK_EQUAL(all.size(), 60u);
  // Every workflow's history is gap-free: seqs 1..lastSeq, each once.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" w
                            WHERE "lastSeq" <> (SELECT count(DISTINCT "seq") FROM "WorkflowEvents" e
                                                 WHERE e."workflowId" = w."id")
                               OR "lastSeq" <> (SELECT max("seq") FROM "WorkflowEvents" e
                                                 WHERE e."workflowId" = w."id"))"),
                  0);
}

CAF_TEST(the concurrency limit holds against a concurrent leaser) {
  fill("qk", 10);
  auto limited = [](int n) {
    auto r = req("qk", n);
    r.concurrency_limit = 3;
    return r;
  };
  // The second leaser must wait for the first (it cannot count uncommitted leases), then
  // see them: 3 - 2 = 1.
  auto [first, second] = race(limited(2), limited(5), true);
  CAF_CHECK_EQUAL(first.size(), 2u);
  CAF_CHECK_EQUAL(second.size(), 1u);
  CAF_CHECK_EQUAL(leased_rows("qk"), 3);
  auto full = lease_tasks(conn, limited(5));
  CAF_REQUIRE(full);
  CAF_CHECK(full->empty());
  // A finished task frees its slot.
  sql(R"(DELETE FROM "TaskQueues" WHERE "id" = (SELECT min("id") FROM "TaskQueues"
                                                WHERE "queueName" = 'qk' AND "leaseToken" IS NOT NULL))");
  auto one = lease_tasks(conn, limited(5));
  CAF_REQUIRE(one);
  CAF_CHECK_EQUAL(one->size(), 1u);
  CAF_CHECK_EQUAL(leased_rows("qk"), 3);
}

CAF_TEST(the rate limit holds against a concurrent leaser and restarts with the window) {
  fill("qrl", 10);
  auto limited = [](int n) {
    auto r = req("qrl", n);
    r.rate = rate_limit{default_namespace, "qrl", 4, 3600};
    return r;
  };
  auto [first, second] = race(limited(3), limited(5), true);
  CAF_CHECK_EQUAL(first.size(), 3u);
  CAF_CHECK_EQUAL(second.size(), 1u);
  auto none = lease_tasks(conn, limited(5));
  CAF_REQUIRE(none);
  CAF_CHECK(none->empty());
  CAF_CHECK_EQUAL(leased_rows("qrl"), 4);
  // The window ended: a new one grants up to the limit again.
  sql(R"(UPDATE "RateLimitBuckets" SET "windowStart" = now() - interval '2 hours' WHERE "taskDefName" = 'qrl')");
  auto next = lease_tasks(conn, limited(10));
  CAF_REQUIRE(next);
  CAF_CHECK_EQUAL(next->size(), 4u);
  CAF_CHECK_EQUAL(leased_rows("qrl"), 8);
}

CAF_TEST(a grant larger than the work available is given back) {
  fill("qgb", 1);
  auto r = req("qgb", 5);
  r.rate = rate_limit{default_namespace, "qgb", 10, 3600};
  auto got = lease_tasks(conn, r);
  CAF_REQUIRE(got);
  CAF_CHECK_EQUAL(got->size(), 1u);
  CAF_CHECK_EQUAL(count(R"(SELECT "count" FROM "RateLimitBuckets" WHERE "taskDefName" = 'qgb')"), 1);
}

CAF_TEST(a queue row whose task is no longer scheduled is dropped and not leased) {
  auto wf = insert_workflow();
  auto t = insert_task(wf, "gone", "qs");
  sql(R"(UPDATE "TaskExecutions" SET "status" = 'CANCELED', "endedAt" = now() WHERE "id" = $1)", params::of(t));
  auto got = lease_tasks(conn, req("qs", 5));
  CAF_REQUIRE(got);
  CAF_CHECK(got->empty());
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "queueName" = 'qs')"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)", params::of(wf)), 0);
}

CAF_TEST(a heartbeat extends only the current lease) {
  auto wf = insert_workflow();
  insert_task(wf, "h1", "qh");
  insert_task(wf, "h2", "qh");
  auto got = lease_tasks(conn, req("qh", 2));
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->size(), 2u);
  const auto& t = (*got)[0];
  auto longer = heartbeat_task(conn, heartbeat_request{wf, t.task, t.token, 7200});
  CAF_REQUIRE(longer);
  CAF_CHECK_GREATER(*longer, t.lease_expires_at_ms + 3600 * 1000);
  auto before = snapshot(wf);
  auto wrong = heartbeat_task(conn, heartbeat_request{wf, t.task, (*got)[1].token, 7200});
  CAF_REQUIRE(!wrong);
  CAF_CHECK_EQUAL(nf::code_of(wrong.error()), nf::errc::lease_lost);
  CAF_CHECK_EQUAL(nf::message_of(wrong.error()), "lease lost");
  CAF_CHECK_EQUAL(snapshot(wf), before);
  auto batch = heartbeat_tasks(conn, {heartbeat_request{wf, (*got)[1].task, (*got)[1].token, 60},
                                      heartbeat_request{wf, (*got)[1].task, t.token, 60}});
  CAF_REQUIRE(batch);
  CAF_REQUIRE_EQUAL(batch->size(), 2u);
  CAF_CHECK((*batch)[0].has_value());
  CAF_CHECK(!(*batch)[1].has_value());
  auto bad = heartbeat_task(conn, heartbeat_request{wf, t.task, t.token, 0});
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::code_of(bad.error()), nf::errc::invalid);
}

CAF_TEST(a lease handed back is leased again as the same attempt and its old token is lost) {
  auto wf = insert_workflow();
  insert_task(wf, "g1", "qg");
  const auto t = lease_one("qg");
  auto back = hand_back_leases(conn, {undelivered_lease{wf, t.task, t.token}});
  CAF_REQUIRE(back);
  CAF_CHECK_EQUAL(*back, std::vector<std::string>{"qg"});
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text || ' ' || ("workerId" IS NULL)
                              FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t.task)),
                  "SCHEDULED true");
  auto lost = heartbeat_task(conn, heartbeat_request{wf, t.task, t.token, 60});
  CAF_REQUIRE(!lost);
  CAF_CHECK_EQUAL(nf::code_of(lost.error()), nf::errc::lease_lost);
  auto again = lease_tasks(conn, req("qg", 1));
  CAF_REQUIRE(again);
  CAF_REQUIRE_EQUAL(again->size(), 1u);
  CAF_CHECK_EQUAL((*again)[0].task, t.task);
  CAF_CHECK_EQUAL((*again)[0].attempt, t.attempt);
  CAF_CHECK_NOT_EQUAL((*again)[0].token, t.token);
  // The old token hands back nothing: the new lease stays.
  auto stale = hand_back_leases(conn, {undelivered_lease{wf, t.task, t.token}});
  CAF_REQUIRE(stale);
  CAF_CHECK(stale->empty());
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t.task)),
                  "IN_PROGRESS");
}

// Conductor's callback: a worker gives its task back for a while. The lease ends at once (its
// token is lost), the task waits SCHEDULED with no queue row, and its delay timer queues it
// again when due, for the next poll to take as the same attempt.
CAF_TEST(a postponed lease ends now and its task is queued again when due) {
  auto wf = insert_workflow();
  insert_task(wf, "cb", "qcb");
  const auto t = lease_one("qcb");
  auto bad = postpone_lease(conn, postponed_lease{wf, t.task, t.token, 0});
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::code_of(bad.error()), nf::errc::invalid);
  auto now_ms = std::stoll(scalar("SELECT (extract(epoch FROM now()) * 1000)::bigint"));
  auto due = postpone_lease(conn, postponed_lease{wf, t.task, t.token, 1});
  CAF_REQUIRE(due);
  CAF_CHECK_GREATER_OR_EQUAL(*due, now_ms + 1000);
  CAF_CHECK_LESS(*due, now_ms + 60000);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text || ' ' || ("startedAt" IS NULL) || ' '
                                   || "pollCount" FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t.task)),
                  "SCHEDULED true 1");
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)",
                         params::of(t.task)),
                  "0");
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1 AND "kind" = 'delay'
                              AND "claimedAt" IS NULL)",
                         params::of(t.task)),
                  "1");
  // The token is lost: no heartbeat, no second postponement, nothing to lease until due.
  auto hb = heartbeat_task(conn, heartbeat_request{wf, t.task, t.token, 60});
  CAF_REQUIRE(!hb);
  CAF_CHECK_EQUAL(nf::code_of(hb.error()), nf::errc::lease_lost);
  auto twice = postpone_lease(conn, postponed_lease{wf, t.task, t.token, 1});
  CAF_REQUIRE(!twice);
  CAF_CHECK_EQUAL(nf::code_of(twice.error()), nf::errc::lease_lost);
  auto early = lease_tasks(conn, req("qcb", 1));
  CAF_REQUIRE(early);
  CAF_CHECK(early->empty());
  // Due: the delay timer queues it, and the next poll takes the same attempt.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto fired = fire_due_timers(conn, fire_options{});
  CAF_REQUIRE(fired);
  CAF_REQUIRE_EQUAL(fired->size(), 1u);
  CAF_CHECK(fired->front().acted);
  CAF_CHECK_EQUAL(fired->front().queue, "qcb");
  auto again = lease_tasks(conn, req("qcb", 1));
  CAF_REQUIRE(again);
  CAF_REQUIRE_EQUAL(again->size(), 1u);
  CAF_CHECK_EQUAL((*again)[0].task, t.task);
  CAF_CHECK_EQUAL((*again)[0].attempt, t.attempt);
  CAF_CHECK_NOT_EQUAL((*again)[0].token, t.token);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text || ' ' || "pollCount" FROM "TaskExecutions"
                             WHERE "id" = $1)", params::of(t.task)),
                  "IN_PROGRESS 2");
}

CAF_TEST(a lease fenced at a partition epoch that moved on is refused and leases nothing) {
  // Partition 900: far from any this suite's nodes would hold.
  const std::string owner = "01900000-0000-7000-8000-0000000000bb";
  auto epoch = std::stoll(scalar(R"(
    INSERT INTO "PartitionLeases" ("partition", "nodeId", "expiresAt")
    VALUES (900, $1, now() + interval '1 hour')
    ON CONFLICT ("partition") DO UPDATE
      SET "nodeId" = EXCLUDED."nodeId", "epoch" = "PartitionLeases"."epoch" + 1,
          "expiresAt" = EXCLUDED."expiresAt"
    RETURNING "epoch"::text)", params::of(owner)));
  auto wf = insert_workflow();
  insert_task(wf, "f1", "qf");
  partition_fence stale{node_id{owner}, {{int16_t{900}, epoch - 1}}};
  auto refused = lease_batches(conn, {req("qf", 1)}, nullptr, &stale);
  CAF_REQUIRE(!refused);
  CAF_CHECK(is_fenced(refused.error()));
  CAF_CHECK_EQUAL(fenced_partitions(refused.error()), std::vector<int16_t>{900});
  CAF_CHECK_NOT_EQUAL(nf::message_of(refused.error()).find("partition 900 epoch "
                                                           + std::to_string(epoch - 1)
                                                           + " (now epoch "
                                                           + std::to_string(epoch)),
                      std::string::npos);
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*)::text FROM "TaskQueues"
                             WHERE "queueName" = 'qf' AND "leaseExpiresAt" IS NULL)"),
                  "1");
  partition_fence other{node_id{"01900000-0000-7000-8000-0000000000cc"},
                        {{int16_t{900}, epoch}}};
  auto not_mine = lease_batches(conn, {req("qf", 1)}, nullptr, &other);
  CAF_REQUIRE(!not_mine);
  CAF_CHECK(is_fenced(not_mine.error()));
  partition_fence current{node_id{owner}, {{int16_t{900}, epoch}}};
  auto leased = lease_batches(conn, {req("qf", 1)}, nullptr, &current);
  CAF_REQUIRE(leased);
  CAF_CHECK_EQUAL(leased->at(0).size(), 1u);
}

CAF_TEST(bad lease requests are rejected before any write) {
  fill("qv", 2);
  auto zero = req("qv", 0);
  auto r = lease_batches(conn, {req("qv", 1), zero});
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::invalid);
  CAF_CHECK_EQUAL(nf::message_of(r.error()), "lease[1].max_tasks: expected an integer 1 … 1000, got 0");
  auto limit = req("qv", 1);
  limit.concurrency_limit = 0;
  auto r2 = lease_tasks(conn, limit);
  CAF_REQUIRE(!r2);
  CAF_CHECK_EQUAL(nf::message_of(r2.error()), "lease[0].concurrency_limit: expected an integer >= 1, got 0");
  CAF_CHECK_EQUAL(leased_rows("qv"), 0);
}

CAF_TEST(a task definition gives the queue policy) {
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name", "timeoutSeconds", "responseTimeoutSeconds",
                                         "concurrentExecLimit", "rateLimitPerFrequency",
                                         "rateLimitFrequencyInSeconds")
         VALUES ('00000000-0000-0000-0000-000000000001', 'enc', 30, 10, 4, 7, 60))");
  auto p = load_queue_policy(conn, default_namespace, "enc");
  CAF_REQUIRE(p);
  CAF_CHECK_EQUAL(p->lease_seconds, 10);
  CAF_CHECK_EQUAL(p->start_to_close_seconds, 30);
  CAF_CHECK_EQUAL(p->concurrency_limit.value_or(0), 4);
  CAF_REQUIRE(p->rate);
  CAF_CHECK_EQUAL(p->rate->per_frequency, 7);
  CAF_CHECK_EQUAL(p->rate->frequency_seconds, 60);
  // The longest timeout plus a second: here timeoutSeconds alone.
  CAF_CHECK_EQUAL(p->timers_within_s.value_or(0), 31);
  sql(R"(UPDATE "TaskDefinitions" SET "pollTimeoutSeconds" = 7200, "totalTimeoutSeconds" = 600
          WHERE "name" = 'enc')");
  CAF_CHECK_EQUAL(load_queue_policy(conn, default_namespace, "enc")->timers_within_s.value_or(0),
                  7201);
  // No responseTimeoutSeconds: 0, which the lessor takes as its own lease length.
  sql(R"(UPDATE "TaskDefinitions" SET "responseTimeoutSeconds" = 0 WHERE "name" = 'enc')");
  CAF_CHECK_EQUAL(load_queue_policy(conn, default_namespace, "enc")->lease_seconds, 0);
  auto missing = load_queue_policy(conn, default_namespace, "nope");
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(nf::code_of(missing.error()), nf::errc::not_found);
}

CAF_TEST(a queue s partition is the one its rows are stored in) {
  // The claim reads and updates that partition alone (store/queue_partitions.hpp): a wrong
  // answer would lease nothing from a full queue.
  std::vector<std::string> queues{"q", "orders", "Orders", "with space", "quote\"d", "ünï",
                                  std::string(200, 'x')};
  for (int i = 0; i < 40; ++i)
    queues.push_back("queue-" + std::to_string(i));
  for (const auto& q : queues) {
    sql(R"(INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "shard")
           VALUES ($1, uuidv7(), uuidv7(), 'SIMPLE', 0))", params::of(q));
    auto stored = sql(R"(SELECT c.relname::text FROM "TaskQueues" t JOIN pg_class c ON c.oid = t.tableoid
                          WHERE t."queueName" = $1)", params::of(q));
    auto found = queue_partition(conn, q);
    CAF_REQUIRE(found);
    CAF_CHECK_EQUAL(*found, stored.str(0, 0));
    // Asked again, the answer is the one remembered.
    CAF_CHECK_EQUAL(*queue_partition(conn, q), *found);
  }
  CAF_CHECK_GREATER(count(R"(SELECT count(DISTINCT tableoid) FROM "TaskQueues")"), 4);
}

CAF_TEST_FIXTURE_SCOPE_END()
