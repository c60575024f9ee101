#define CAF_SUITE store.complete
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <thread>

#include <boost/json.hpp>

#include "store/json.hpp"
#include "store/lease_sweep.hpp"
#include "store/pg/transaction.hpp"
#include "store/queues.hpp"
#include "store/tasks.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("complete") {}

  static task_result result_of(const leased_task& t, task_outcome o = task_outcome::completed) {
    task_result r;
    r.workflow = t.workflow;
    r.task = t.task;
    r.token = t.token;
    r.outcome = o;
    r.output = json(boost::json::object{{"answer", 42}});
    return r;
  }

  void expire(const leased_task& t) {
    sql(R"(UPDATE "TaskQueues" SET "leaseExpiresAt" = now() - interval '1 second' WHERE "taskId" = $1)",
        params::of(t.task));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(complete_tests, fixture)

CAF_TEST(a completion finishes the task and wakes the decider in one transaction) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  auto wf = insert_workflow();
  insert_task(wf, "a", "qc");
  auto t = lease_one("qc", "w1", 60);
  auto r = result_of(t);
  CAF_REQUIRE(complete_task(conn, r));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1 AND "status" = 'COMPLETED'
                            AND "output" = '{"answer": 42}' AND "endedAt" IS NOT NULL
                            AND "deciderSeenAt" IS NULL)",
                        params::of(t.task)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)", params::of(t.task)), 0);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1
                             AND "workflowStartedAt" = uuid_extract_timestamp("workflowId"))",
                         params::of(wf)),
                  "taskCompleted");
  // The startToClose deadline is cancelled (deleted), not left to fire.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1)", params::of(t.task)),
                  0);
  CAF_CHECK_EQUAL(events(wf), "1:TASK_STARTED,2:TASK_COMPLETED");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1
                            AND "eventType" = 'TASK_COMPLETED' AND ("payload"->>'seq')::int = 2)",
                        params::of(wf)),
                  1);
}

// secretOutputFields are redacted at rest: the stored output never holds them, whatever reads it.
CAF_TEST(a completion stores the secret output fields of its definition redacted) {
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name", "secretOutputFields")
         VALUES ('00000000-0000-0000-0000-000000000001', 'qs', '{token,absent}'))");
  auto wf = insert_workflow();
  insert_task(wf, "a", "qs");
  insert_task(wf, "b", "qs");
  auto t = lease_one("qs", "w1", 60);
  auto r = result_of(t);
  r.output = json(boost::json::object{{"token", "s3cr3t"}, {"n", 1}});
  CAF_REQUIRE(complete_task(conn, r));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t.task)),
                  R"({"n": 1, "token": "***"})");
  // An output that is not an object, or a task whose definition names no field, is kept.
  auto other = lease_one("qs", "w1", 60);
  auto r2 = result_of(other);
  r2.output = json(boost::json::array{"s3cr3t"});
  CAF_REQUIRE(complete_task(conn, r2));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(other.task)),
                  R"(["s3cr3t"])");
}

CAF_TEST(a completion whose workflow its caller decides writes no DecideQueues row) {
  auto here = insert_workflow();
  auto elsewhere = insert_workflow();
  insert_task(here, "a", "qh");
  insert_task(elsewhere, "a", "qh");
  auto t1 = lease_one("qh", "w1", 60);
  auto t2 = lease_one("qh", "w1", 60);
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto out = complete_tasks(tx, {result_of(t1), result_of(t2)}, true, {here});
  CAF_REQUIRE(out);
  CAF_REQUIRE(tx.commit());
  CAF_CHECK((*out)[0] == completion::done && (*out)[1] == completion::done);
  auto queued = [&](const workflow_id& wf) {
    return count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                 params::of(wf.str()));
  };
  CAF_CHECK_EQUAL(queued(here), 0);
  CAF_CHECK_EQUAL(queued(elsewhere), 1);
  // Both tasks finished all the same.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "status" = 'COMPLETED'
                            AND "id" = ANY($1::uuid[]))",
                        params::of("{" + t1.task.str() + "," + t2.task.str() + "}")),
                  2);
}

CAF_TEST(failures record their status and reason) {
  auto wf = insert_workflow();
  insert_task(wf, "f1", "qf");
  insert_task(wf, "f2", "qf");
  auto t1 = lease_one("qf");
  auto t2 = lease_one("qf");
  auto r1 = result_of(t1, task_outcome::failed);
  r1.reason = "boom";
  r1.output.reset();
  auto r2 = result_of(t2, task_outcome::failed_terminal);
  r2.reason = "never again";
  CAF_REQUIRE(complete_task(conn, r1));
  CAF_REQUIRE(complete_task(conn, r2));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text || '/' || "reasonForIncompletion" || '/' ||
                                   coalesce("output"::text, 'null')
                              FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t1.task)),
                  "FAILED/boom/null");
  CAF_CHECK_EQUAL(task_status(t2.task), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1)", params::of(wf)),
                  "taskFailed");
  CAF_CHECK_EQUAL(events(wf), "1:TASK_STARTED,2:TASK_STARTED,3:TASK_FAILED,4:TASK_FAILED");
}

// I5: a late worker whose lease expired and was swept, or expired and was re-leased,
// gets "lease lost" for complete, fail and heartbeat alike, and changes nothing.
CAF_TEST(a late worker gets lease lost and changes nothing) {
  auto wf = insert_workflow();
  insert_task(wf, "swept", "q5");
  auto swept = lease_one("q5", "late");
  expire(swept);
  auto s = sweep_expired_leases(conn, 10);
  CAF_REQUIRE(s);
  CAF_CHECK_EQUAL(s->size(), 1u);
  CAF_CHECK_EQUAL(task_status(swept.task), "TIMED_OUT");
  // The same attempt re-leased (a requeue puts its row back unleased): a new token.
  auto rel = insert_task(wf, "released", "q5");
  auto first = lease_one("q5", "late");
  CAF_REQUIRE_EQUAL(first.task.str(), rel.str());
  expire(first);
  requeue(rel);
  auto second = lease_one("q5", "fresh");
  CAF_REQUIRE_EQUAL(second.task.str(), rel.str());
  CAF_REQUIRE_NOT_EQUAL(second.token.str(), first.token.str());
  auto before = snapshot(wf);
  for (const auto* late : {&swept, &first}) {
    auto done = complete_task(conn, result_of(*late));
    CAF_REQUIRE(!done);
    CAF_CHECK_EQUAL(nf::code_of(done.error()), nf::errc::lease_lost);
    CAF_CHECK_EQUAL(nf::message_of(done.error()), "lease lost");
    auto failed = complete_task(conn, result_of(*late, task_outcome::failed));
    CAF_REQUIRE(!failed);
    CAF_CHECK_EQUAL(nf::code_of(failed.error()), nf::errc::lease_lost);
    auto hb = heartbeat_task(conn, heartbeat_request{wf, late->task, late->token, 600});
    CAF_REQUIRE(!hb);
    CAF_CHECK_EQUAL(nf::code_of(hb.error()), nf::errc::lease_lost);
    // Task row, queue row, events, "DecideQueues", outbox, timers, lastSeq: all unchanged.
    CAF_CHECK_EQUAL(snapshot(wf), before);
  }
  // The current lease still works.
  CAF_CHECK(complete_task(conn, result_of(second)));
  CAF_CHECK_EQUAL(task_status(rel), "COMPLETED");
}

CAF_TEST(a batch completes every task whose lease holds and reports the others) {
  auto wf1 = insert_workflow();
  auto wf2 = insert_workflow();
  insert_task(wf1, "a", "qb");
  insert_task(wf1, "b", "qb");
  insert_task(wf2, "c", "qb");
  auto a = lease_one("qb");
  auto b = lease_one("qb");
  auto c = lease_one("qb");
  auto lost = result_of(b);
  lost.token = a.token; // someone else's lease
  auto before_b = scalar(R"(SELECT row_to_json(t)::text FROM "TaskExecutions" t WHERE "id" = $1)",
                         params::of(b.task));
  task_result unknown = result_of(c);
  unknown.task = task_id{"00000000-0000-7000-8000-000000000000"};
  auto out = complete_tasks(conn, {result_of(a), lost, result_of(c, task_outcome::failed), unknown});
  CAF_REQUIRE(out);
  CAF_REQUIRE_EQUAL(out->size(), 4u);
  CAF_CHECK((*out)[0] == completion::done);
  CAF_CHECK((*out)[1] == completion::lease_lost);
  CAF_CHECK((*out)[2] == completion::done);
  CAF_CHECK((*out)[3] == completion::not_found);
  CAF_CHECK_EQUAL(task_status(a.task), "COMPLETED");
  CAF_CHECK_EQUAL(task_status(c.task), "FAILED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT row_to_json(t)::text FROM "TaskExecutions" t WHERE "id" = $1)",
                         params::of(b.task)),
                  before_b);
  CAF_CHECK_EQUAL(events(wf1), "1:TASK_STARTED,2:TASK_STARTED,3:TASK_COMPLETED");
  CAF_CHECK_EQUAL(events(wf2), "1:TASK_STARTED,2:TASK_FAILED");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 2);
  auto dup = complete_tasks(conn, {result_of(b), result_of(b)});
  CAF_REQUIRE(!dup);
  CAF_CHECK_EQUAL(nf::code_of(dup.error()), nf::errc::invalid);
}

CAF_TEST(the sweep times out expired leases and wakes the decider) {
  auto wf = insert_workflow();
  insert_task(wf, "slow", "qs");
  insert_task(wf, "alive", "qs");
  auto slow = lease_one("qs", "w1", 600);
  auto alive = lease_one("qs", "w2", 600);
  expire(slow);
  auto s = sweep_expired_leases(conn, 100);
  CAF_REQUIRE(s);
  CAF_REQUIRE_EQUAL(s->size(), 1u);
  CAF_CHECK_EQUAL((*s)[0].task.str(), slow.task.str());
  CAF_CHECK_EQUAL((*s)[0].queue, "qs");
  CAF_CHECK_EQUAL(task_status(slow.task), "TIMED_OUT");
  CAF_CHECK_EQUAL(task_status(alive.task), "IN_PROGRESS");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)", params::of(slow.task)), 0);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1)", params::of(wf)),
                  "leaseExpired");
  // The timed-out lease's deadline is cancelled (deleted); the live lease keeps its own.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1)", params::of(slow.task)),
                  0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1 AND "claimedAt" IS NULL)",
                        params::of(alive.task)),
                  1);
  CAF_CHECK_EQUAL(events(wf), "1:TASK_STARTED,2:TASK_STARTED,3:TASK_TIMED_OUT");
  auto again = sweep_expired_leases(conn, 100);
  CAF_REQUIRE(again);
  CAF_CHECK(again->empty());
}

// The sweep reads an expired lease, then queues behind a decider for the workflow's
// "DecideQueues" row; meanwhile the worker heartbeats. The heartbeat must win: the sweep's
// re-check (same token AND still expired) under the row lock finds the lease alive.
CAF_TEST(a heartbeat that races the sweep wins) {
  auto wf = insert_workflow();
  insert_task(wf, "hb", "qh");
  auto t = lease_one("qh");
  expire(t);
  sql(R"(INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "workflowStartedAt", "shard")
         VALUES ($1, '00000000-0000-0000-0000-000000000001', uuid_extract_timestamp($1::uuid), 0))",
      params::of(wf));
  auto decider = db.connect();
  CAF_REQUIRE(decider.exec("BEGIN"));
  CAF_REQUIRE(decider.exec(R"(SELECT 1 FROM "DecideQueues" WHERE "workflowId" = $1 FOR UPDATE)",
                           params::of(wf)));
  auto sweeper = db.connect();
  std::atomic<bool> done{false};
  caf::expected<std::vector<swept_lease>> swept{std::vector<swept_lease>{}};
  std::thread th{[&] {
    swept = sweep_expired_leases(sweeper, 10);
    done = true;
  }};
  CAF_CHECK(wait_until_blocked(sweeper.backend_pid(), [&] { return done.load(); }));
  auto hb = heartbeat_task(conn, heartbeat_request{wf, t.task, t.token, 600});
  CAF_CHECK(hb);
  CAF_REQUIRE(decider.exec("COMMIT"));
  th.join();
  CAF_REQUIRE(swept);
  CAF_CHECK(swept->empty());
  CAF_CHECK_EQUAL(task_status(t.task), "IN_PROGRESS");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1 AND "leaseToken" = $2
                            AND "leaseExpiresAt" > now())",
                        params::of(t.task, t.token)),
                  1);
  CAF_CHECK_EQUAL(events(wf), "1:TASK_STARTED");
  CAF_CHECK(complete_task(conn, result_of(t)));
}

CAF_TEST_FIXTURE_SCOPE_END()
