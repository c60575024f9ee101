#define CAF_SUITE store.decide
#include "caf/test/unit_test.hpp"

#include <set>
#include <thread>

#include <boost/json.hpp>

#include "store/decide_reads.hpp"
#include "store/decisions.hpp"
#include "store/index_scans.hpp"
#include "store/json.hpp"
#include "store/lease_hand_back.hpp"
#include "store/queues.hpp"
#include "store/pg/transaction.hpp"
#include "store/sharding.hpp"
#include "store/signals.hpp"
#include "tests/store/decide_fixture.hpp"
#include "tests/store/plan_reads.hpp"

using namespace nf;
using namespace nf::store;

namespace {

task_insert simple(const std::string& ref, int attempt = 0) {
  task_insert t;
  t.identity = {ref, 0, attempt};
  t.type = flow::task_type::simple;
  t.task_def_name = "work";
  t.queue = "work";
  t.input = json(boost::json::object{{"x", 1}});
  return t;
}

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("decide") { define_workflow("order"); }

  workflow_snapshot snapshot(transaction& tx, const workflow_id& id) {
    auto s = load_snapshots(tx, {id});
    NF_REQUIRE_OK(s);
    if (s->size() != 1)
      CAF_FAIL("snapshot of " << id.str() << ": " << s->size() << " executions");
    return std::move(s->front());
  }

  /// Claims the pending evaluations of `shard` in `tx` (which must begin first).
  std::vector<decide_claim> claim(transaction& tx, shard_id shard) {
    if (!tx.active()) {
      CAF_REQUIRE(tx.begin());
    }
    auto claimed = claim_decide_batch(tx, {shard}, 10);
    NF_REQUIRE_OK(claimed);
    return std::move(*claimed);
  }

  /// Reads and applies in one transaction of its own; returns the result.
  caf::expected<apply_result> apply_one(const decision_write& w) {
    return perform(conn, [&](transaction& tx) { return apply_decisions(tx, {w}); });
  }

  /// A write for workflow `id` (of the default namespace, priority 0) against `version`.
  decision_write write_for(const workflow_id& id, int64_t version) {
    decision_write w;
    w.id = id;
    w.expected_version = version;
    w.ns = default_namespace;
    w.shard = shard_of(id, partitions);
    return w;
  }

  decision_write schedule(const workflow_id& id, int64_t version, const std::string& ref,
                          int attempt = 0) {
    auto w = write_for(id, version);
    w.inserts.push_back(simple(ref, attempt));
    w.events.push_back({"TASK_SCHEDULED", std::nullopt, flow::task_identity{ref, 0, attempt},
                        json(boost::json::object{{"ref", ref}})});
    w.outbox.push_back({"task.scheduled", json(boost::json::object{{"ref", ref}})});
    return w;
  }

  int64_t tasks_of(const workflow_id& id, const std::string& ref) {
    return count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1 AND "refName" = $2)",
                 params::of(id, ref));
  }
};


} // namespace

CAF_TEST_FIXTURE_SCOPE(decide_tests, fixture)

CAF_TEST(claim snapshot and apply write one evaluation and release the queue row) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  auto started = start("order");
  sql(R"(UPDATE "WorkflowExecutions" SET "priority" = 9)");
  transaction tx{conn};
  auto claimed = claim(tx, started.shard);
  CAF_REQUIRE_EQUAL(claimed.size(), 1u);
  CAF_CHECK_EQUAL(claimed.front().id, started.id);
  CAF_CHECK_EQUAL(claimed.front().ns, default_namespace);
  auto s = snapshot(tx, started.id);
  CAF_CHECK_EQUAL(s.version, 0);
  CAF_CHECK_EQUAL(s.last_seq, 1);
  CAF_CHECK_EQUAL(s.workflow_name, "order");
  CAF_CHECK_EQUAL(s.started_at_ms, claimed.front().started_at_ms);
  CAF_CHECK(s.tasks.empty());
  auto w = schedule(started.id, s.version, "a");
  w.priority = s.priority;  // the snapshot's: its new queue row carries it
  w.variables = json(boost::json::object{{"w", true}});
  auto applied = apply_decisions(tx, {w});
  NF_REQUIRE_OK(applied);
  CAF_REQUIRE(tx.commit());

  CAF_CHECK_EQUAL(applied->queues, std::vector<std::string>{"work"});
  CAF_REQUIRE_EQUAL(applied->inserted.size(), 1u);
  const auto& t = applied->inserted.front();
  CAF_CHECK_EQUAL(t.workflow, started.id);
  CAF_CHECK_EQUAL(t.identity.ref, "a");
  CAF_CHECK_EQUAL(t.queue, "work");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "version" = 1
                             AND "lastSeq" = 2 AND "variables" = '{"v": 1, "w": true}')"),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1
                             AND "queueName" = 'work' AND "priority" = 9 AND "shard" = $2
                             AND "taskType" = 'SIMPLE' AND "leaseToken" IS NULL)",
                        params::of(t.id, started.shard.value())),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "seq" = 2
                             AND "eventType" = 'TASK_SCHEDULED' AND "taskId" = $1 AND "refName" = 'a')",
                        params::of(t.id)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "eventType" = 'task.scheduled'
                             AND "shard" = $1)",
                        params::of(started.shard.value())),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
}

CAF_TEST(a decision writes its events and no outbox row while no webhook sink is enabled) {
  auto started = start("order");
  transaction tx{conn};
  CAF_REQUIRE_EQUAL(claim(tx, started.shard).size(), 1u);
  auto s = snapshot(tx, started.id);
  NF_REQUIRE_OK(apply_decisions(tx, {schedule(started.id, s.version, "a")}));
  CAF_REQUIRE(tx.commit());
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                        params::of(started.id)),
                  2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents")"), 0);
}

CAF_TEST(a claimed row is skipped by a second decider until the first ends) {
  auto started = start("order");
  auto other = db->connect();
  transaction a{conn};
  CAF_CHECK_EQUAL(claim(a, started.shard).size(), 1u);
  {
    transaction b{other};
    CAF_CHECK(claim(b, started.shard).empty()); // SKIP LOCKED: no waiting, no double claim
  }
  a.rollback(); // nothing applied: the row stays queued
  transaction b{other};
  CAF_CHECK_EQUAL(claim(b, started.shard).size(), 1u);
}

CAF_TEST(the reads sent with the claim equal the reads sent after it) {
  auto mine = start("order");
  auto held = start("order");
  NF_REQUIRE_OK(deliver_signal(conn, mine.id, "go", boost::json::object{{"n", 1}}));
  NF_REQUIRE_OK(deliver_signal(conn, held.id, "go", boost::json::object{{"n", 2}}));
  auto other = db->connect();
  // Another decider holds `held`'s row: the claim skips it, and the snapshot read with
  // the claim is there for the caller to drop.
  transaction b{other};
  CAF_REQUIRE(b.begin());
  CAF_REQUIRE(other.exec(R"(SELECT 1 FROM "DecideQueues" WHERE "workflowId" = $1 FOR UPDATE)",
                         params::of(held.id)));
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  // The history facts only of the workflows asked for.
  auto reads = claim_and_read(tx, {mine.shard, held.shard}, 10, {mine.id, held.id}, {mine.id},
                              {default_namespace});
  NF_REQUIRE_OK(reads);
  CAF_REQUIRE_EQUAL(reads->claims.size(), 1u);
  CAF_CHECK_EQUAL(reads->claims.front().id, mine.id);
  CAF_REQUIRE_EQUAL(reads->snapshots.size(), 2u);
  auto now = server_now_ms(conn);
  NF_REQUIRE_OK(now);
  CAF_CHECK_LESS_OR_EQUAL(reads->now_ms, *now);
  CAF_CHECK_GREATER(reads->now_ms, 0);
  auto one_by_one = load_snapshots(tx, {mine.id, held.id});
  NF_REQUIRE_OK(one_by_one);
  for (size_t i = 0; i < 2; ++i) {
    CAF_CHECK_EQUAL(reads->snapshots[i].id, (*one_by_one)[i].id);
    CAF_CHECK_EQUAL(reads->snapshots[i].version, (*one_by_one)[i].version);
    CAF_CHECK_EQUAL(reads->snapshots[i].last_seq, (*one_by_one)[i].last_seq);
    CAF_CHECK_EQUAL(reads->snapshots[i].tasks.size(), (*one_by_one)[i].tasks.size());
  }
  auto facts = load_history_facts(tx, {mine.id});
  NF_REQUIRE_OK(facts);
  CAF_REQUIRE_EQUAL(reads->facts.size(), 1u);
  CAF_REQUIRE_EQUAL(reads->facts.count(mine.id.str()), 1u);
  const auto& signals = reads->facts.at(mine.id.str()).signals;
  CAF_REQUIRE_EQUAL(signals.size(), facts->at(mine.id.str()).signals.size());
  CAF_CHECK_EQUAL(signals.at(0).payload, facts->at(mine.id.str()).signals.at(0).payload);
  auto stamps = load_definition_stamps(conn, {default_namespace});
  NF_REQUIRE_OK(stamps);
  CAF_CHECK_EQUAL(reads->stamps, *stamps);
  CAF_CHECK_EQUAL(reads->stamps.count(default_namespace.str()), 1u);
  // Nothing expected, no namespace: the claim and the clock alone.
  tx.rollback();
  transaction again{conn};
  CAF_REQUIRE(again.begin());
  auto bare = claim_and_read(again, {mine.shard}, 10, {}, {}, {});
  NF_REQUIRE_OK(bare);
  CAF_CHECK_EQUAL(bare->claims.size(), 1u); // `held` is still locked by the other decider
  CAF_CHECK(bare->snapshots.empty());
  CAF_CHECK(bare->facts.empty());
  CAF_CHECK(bare->stamps.empty());
}

CAF_TEST(a namespace s definition stamp moves with every write of its definitions alone) {
  auto other = namespace_id{
    scalar(R"(INSERT INTO "Namespaces" ("name") VALUES ('stamps-other') RETURNING "id")")};
  auto stamp = [&](const namespace_id& ns) {
    auto s = load_definition_stamps(conn, {ns});
    CAF_REQUIRE(s);
    CAF_REQUIRE_EQUAL(s->count(ns.str()), 1u);
    return s->at(ns.str());
  };
  CAF_CHECK_EQUAL(stamp(other), "0"); // never had a definition
  auto mine = stamp(default_namespace);
  auto moved = [&](const namespace_id& ns, const std::string& before) {
    auto now = stamp(ns);
    CAF_CHECK_NOT_EQUAL(now, before);
    return now;
  };
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name") VALUES ($1, 't1'))",
      params::of(other));
  auto theirs = moved(other, "0");
  CAF_CHECK_EQUAL(stamp(default_namespace), mine); // another namespace's write
  sql(R"(UPDATE "TaskDefinitions" SET "retryCount" = 5 WHERE "namespaceId" = $1)",
      params::of(other));
  theirs = moved(other, theirs);
  sql(R"(INSERT INTO "WorkflowDefinitions" ("namespaceId", "name", "version", "tasks")
         VALUES ($1, 'w', 1, '[]'))",
      params::of(other));
  theirs = moved(other, theirs);
  sql(R"(UPDATE "WorkflowDefinitions" SET "description" = 'edited in place'
          WHERE "namespaceId" = $1)",
      params::of(other));
  theirs = moved(other, theirs);
  // A statement that changes nothing moves nothing.
  sql(R"(UPDATE "WorkflowDefinitions" SET "description" = 'x' WHERE "name" = 'none')");
  CAF_CHECK_EQUAL(stamp(other), theirs);
  sql(R"(DELETE FROM "WorkflowDefinitions" WHERE "namespaceId" = $1)", params::of(other));
  theirs = moved(other, theirs);
  sql(R"(DELETE FROM "TaskDefinitions" WHERE "namespaceId" = $1)", params::of(other));
  moved(other, theirs);
  CAF_CHECK_EQUAL(stamp(default_namespace), mine);
  // A definition moved to another namespace moves both stamps.
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name") VALUES ($1, 't2'))",
      params::of(default_namespace));
  mine = stamp(default_namespace);
  theirs = stamp(other);
  sql(R"(UPDATE "TaskDefinitions" SET "namespaceId" = $1 WHERE "name" = 't2')",
      params::of(other));
  moved(default_namespace, mine);
  moved(other, theirs);
  sql(R"(DELETE FROM "TaskDefinitions" WHERE "namespaceId" = $1)", params::of(other));
  // The namespace can go once its definitions have; its stamp goes with it.
  sql(R"(DELETE FROM "Namespaces" WHERE "id" = $1)", params::of(other));
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*) FROM "DefinitionStamps" WHERE "namespaceId" = $1)",
                         params::of(other)),
                  "0");
}

CAF_TEST(a snapshot holds every attempt and marks exactly the unprocessed terminals) {
  auto one = start("order");
  auto two = start("order");
  NF_REQUIRE_OK(apply_one(schedule(one.id, 0, "a")));
  NF_REQUIRE_OK(apply_one(schedule(two.id, 0, "b")));
  sql(R"(UPDATE "TaskExecutions" SET "status" = 'FAILED', "endedAt" = now(),
           "output" = '{"err": 1}' WHERE "refName" = 'a')");
  NF_REQUIRE_OK(apply_one(schedule(one.id, 1, "a", 1)));
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto missing = workflow_id{"00000000-0000-7000-8000-000000000000"};
  auto snaps = load_snapshots(tx, {one.id, missing, two.id});
  NF_REQUIRE_OK(snaps);
  CAF_REQUIRE_EQUAL(snaps->size(), 2u);
  const auto& s = snaps->at(0).id == one.id ? snaps->at(0) : snaps->at(1);
  CAF_REQUIRE_EQUAL(s.tasks.size(), 2u);
  CAF_CHECK_EQUAL(s.version, 2);
  const auto& failed = s.tasks[0].identity.attempt == 0 ? s.tasks[0] : s.tasks[1];
  const auto& retry = s.tasks[0].identity.attempt == 1 ? s.tasks[0] : s.tasks[1];
  CAF_CHECK(failed.status == flow::task_status::failed);
  CAF_CHECK(failed.unprocessed);
  CAF_CHECK_EQUAL(failed.output, std::string{R"({"err": 1})"});
  CAF_CHECK(failed.ended_at_ms.has_value());
  CAF_CHECK(!retry.unprocessed);
  CAF_CHECK_EQUAL(retry.retried_task_id, failed.id);
  CAF_CHECK_EQUAL(s.unprocessed(), std::vector<task_id>{failed.id});
}

CAF_TEST(I1 a re-applied decision inserts each identity once and a retry is a new row) {
  auto started = start("order");
  auto first = apply_one(schedule(started.id, 0, "a"));
  NF_REQUIRE_OK(first);
  CAF_CHECK_EQUAL(first->inserted.size(), 1u);
  // The same evaluation run again (e.g. a decider that re-read after the first commit).
  auto again = apply_one(schedule(started.id, 1, "a"));
  NF_REQUIRE_OK(again);
  CAF_CHECK(again->inserted.empty());
  CAF_CHECK(again->queues.empty());
  CAF_CHECK_EQUAL(tasks_of(started.id, "a"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 1);
  // A retry is attempt + 1: a different identity, never absorbed by the conflict.
  auto retry = apply_one(schedule(started.id, 2, "a", 1));
  NF_REQUIRE_OK(retry);
  CAF_REQUIRE_EQUAL(retry->inserted.size(), 1u);
  CAF_CHECK_EQUAL(retry->inserted.front().identity.attempt, 1);
  CAF_CHECK_EQUAL(tasks_of(started.id, "a"), 2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" r JOIN "TaskExecutions" p
                             ON r."retriedTaskId" = p."id" WHERE r."attempt" = 1 AND p."attempt" = 0)"),
                  1);
}

CAF_TEST(I3 a completion committed after the read stays unprocessed although it ended earlier) {
  auto started = start("order");
  NF_REQUIRE_OK(apply_one(schedule(started.id, 0, "a")));
  auto task = scalar(R"(SELECT "id" FROM "TaskExecutions" WHERE "refName" = 'a')");
  auto worker = db->connect();
  // B (a completion) ends the task with "endedAt" = its transaction start: before A reads.
  CAF_REQUIRE(worker.exec("BEGIN"));
  CAF_REQUIRE(worker.exec(R"(SELECT now())")); // pins B's now() before A's read
  transaction a{conn};
  CAF_REQUIRE(a.begin());
  auto watermark = scalar("SELECT now()::text"); // A's read time, after B's now()
  CAF_REQUIRE(worker.exec(R"(UPDATE "TaskExecutions" SET "status" = 'COMPLETED', "endedAt" = now(),
                               "output" = '{"ok": true}' WHERE "id" = $1)",
                          params::of(task)));
  auto s = snapshot(a, started.id); // B has not committed: A sees the task running
  CAF_REQUIRE_EQUAL(s.tasks.size(), 1u);
  CAF_CHECK(s.tasks[0].status == flow::task_status::scheduled);
  CAF_CHECK(s.unprocessed().empty());
  CAF_REQUIRE(worker.exec("COMMIT")); // B commits after A's read
  auto w = write_for(started.id, s.version);
  w.seen = s.unprocessed(); // exactly what A read (nothing)
  w.events.push_back({"VARIABLES_UPDATED", std::nullopt, std::nullopt, std::nullopt});
  NF_REQUIRE_OK(apply_decisions(a, {w}));
  CAF_REQUIRE(a.commit());
  // The next evaluation sees the completion.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                             AND "endedAt" < $2::timestamptz AND "deciderSeenAt" IS NULL)",
                        params::of(task, watermark)),
                  1);
  transaction next{conn};
  CAF_REQUIRE(next.begin());
  auto again = snapshot(next, started.id);
  CAF_CHECK_EQUAL(again.unprocessed(), std::vector<task_id>{task_id{task}});
  next.rollback();
  // The clock watermark A would have used marks it although A never saw it: lost.
  transaction clock{conn};
  CAF_REQUIRE(clock.begin());
  auto lost = conn.exec(R"(UPDATE "TaskExecutions" SET "deciderSeenAt" = now()
                            WHERE "workflowId" = $1 AND "endedAt" IS NOT NULL
                              AND "deciderSeenAt" IS NULL AND "endedAt" <= $2::timestamptz)",
                        params::of(started.id, watermark));
  NF_REQUIRE_OK(lost);
  CAF_CHECK_EQUAL(lost->affected(), 1);
}

CAF_TEST(I4 a second evaluation of the same version is stale rolls back whole and is requeued) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  auto started = start("order");
  auto other = db->connect();
  // A: the owner claims and evaluates version 0.
  transaction a{conn};
  CAF_REQUIRE_EQUAL(claim(a, started.shard).size(), 1u);
  auto sa = snapshot(a, started.id);
  // B: a second owner (failover overlap) evaluates the same version without the queue row.
  transaction b{other};
  CAF_REQUIRE(b.begin());
  auto sb_all = load_snapshots(b, {started.id});
  NF_REQUIRE_OK(sb_all);
  auto sb = sb_all->front();
  CAF_CHECK_EQUAL(sa.version, sb.version);
  NF_REQUIRE_OK(apply_decisions(a, {schedule(started.id, sa.version, "from_a")}));
  // B writes while A still holds the execution row: B waits on it, then finds version 1.
  auto wb = schedule(started.id, sb.version, "from_b");
  wb.dequeue = false;
  auto now_b = server_now_ms(other);
  NF_REQUIRE_OK(now_b);
  wb.arm.push_back({timer_kind::delay, flow::task_identity{"from_b", 0, 0}, *now_b + 1000});
  caf::expected<apply_result> b_result{apply_result{}};
  std::thread tb{[&] { b_result = apply_decisions(b, {wb}); }};
  CAF_CHECK(wait_until_blocked(conn, other.backend_pid()));
  CAF_REQUIRE(a.commit());
  tb.join();
  CAF_REQUIRE(!b_result);
  CAF_CHECK_EQUAL(nf::code_of(b_result.error()), nf::errc::stale);
  b.rollback();
  NF_REQUIRE_OK(requeue(other, {started.id}, "stale"));
  // Nothing of B remains; A's evaluation is version 1; the workflow is queued again.
  CAF_CHECK_EQUAL(tasks_of(started.id, "from_b"), 0);
  CAF_CHECK_EQUAL(tasks_of(started.id, "from_a"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers")"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "eventType" = 'task.scheduled')"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT max("seq") FROM "WorkflowEvents")"), 2);
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions")"), 1);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1)",
                         params::of(started.id)),
                  "stale");
}

CAF_TEST(a timer fires at the time decide asked for however long its transaction ran before) {
  // decide() reads the clock after the claim, well after its transaction's now(): a
  // deadline turned into a delay from now() would fire early by that difference (a
  // retry's backoff was seen 23 ms short).
  auto started = start("order");
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  NF_REQUIRE_OK(tx.conn().run(statement{"test.sleep", "SELECT pg_sleep(0.3)"}, {}));
  auto clock = server_now_ms(tx.conn());
  NF_REQUIRE_OK(clock);
  auto w = schedule(started.id, 0, "a");
  w.arm.push_back({timer_kind::schedule_to_start, flow::task_identity{"a", 0, 0}, *clock + 1000});
  auto r = apply_decisions(tx, {w});
  NF_REQUIRE_OK(r);
  CAF_REQUIRE(r->earliest_timer_ms);
  CAF_CHECK_EQUAL(*r->earliest_timer_ms, *clock + 1000);
  CAF_REQUIRE(tx.commit());
  CAF_CHECK_EQUAL(count(R"(SELECT (extract(epoch FROM "fireAt") * 1000)::bigint FROM "Timers"
                            WHERE "kind" = 'scheduleToStart')"),
                  *clock + 1000);
}

CAF_TEST(a stale write is answered stale even when a write after its compare and set fails) {
  auto started = start("order");
  auto before = table_counts();
  // The writes go in the compare-and-set's pipeline; this one's event cannot be written,
  // and the version it expects is not the workflow's.
  auto w = schedule(started.id, 5, "a");
  w.events.push_back({"NOT_AN_EVENT_TYPE", std::nullopt, std::nullopt, std::nullopt});
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto r = apply_decisions(tx, {w});
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::stale);
  CAF_CHECK(nf::message_of(r.error()).find(started.id.str() + " (expected version 5)")
            != std::string::npos);
  tx.rollback();
  CAF_CHECK(table_counts() == before);
}

CAF_TEST(changes end tasks once release their queue rows and cancel their timers) {
  auto started = start("order");
  decision_write w = schedule(started.id, 0, "a");
  task_insert wait;
  wait.identity = {"w", 0, 0};
  wait.type = flow::task_type::wait;
  wait.task_def_name = "wait";
  wait.status = flow::task_status::in_progress;
  w.inserts.push_back(wait);
  task_insert later = simple("later");
  later.start_delay_ms = 5000;
  w.inserts.push_back(later);
  task_insert inline_done;
  inline_done.identity = {"set", 0, 0};
  inline_done.type = flow::task_type::set_variable;
  inline_done.task_def_name = "set";
  inline_done.status = flow::task_status::completed;
  inline_done.output = json(boost::json::object{{"done", true}});
  w.inserts.push_back(inline_done);
  auto before = count("SELECT (extract(epoch FROM now()) * 1000)::bigint");
  w.arm.push_back({timer_kind::schedule_to_start, flow::task_identity{"a", 0, 0}, before + 30000});
  w.arm.push_back({timer_kind::wait, flow::task_identity{"w", 0, 0}, before + 60000});
  w.arm.push_back({timer_kind::delay, flow::task_identity{"later", 0, 0}, before + 5000});
  auto first = apply_one(w);
  NF_REQUIRE_OK(first);
  CAF_CHECK_EQUAL(first->inserted.size(), 4u);
  CAF_REQUIRE(first->earliest_timer_ms);
  CAF_CHECK_GREATER_OR_EQUAL(*first->earliest_timer_ms, before + 5000);
  CAF_CHECK_LESS(*first->earliest_timer_ms, before + 30000);
  // Only the undelayed worker task is queued; the delayed one waits for its timer.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "claimedAt" IS NULL)"), 3);
  // An inline task is inserted ended and already seen; WAIT is started, not ended.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'set'
                             AND "endedAt" IS NOT NULL AND "deciderSeenAt" IS NOT NULL
                             AND "output" = '{"done": true}')"),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'w'
                             AND "status" = 'IN_PROGRESS' AND "startedAt" IS NOT NULL
                             AND "endedAt" IS NULL)"),
                  1);

  auto end = write_for(started.id, 1);
  end.changes.push_back({{"a", 0, 0}, flow::task_status::canceled, std::nullopt,
                         std::string{"workflow ended"}});
  end.changes.push_back({{"w", 0, 0}, flow::task_status::completed,
                         json(boost::json::object{{"waited", 1}}), std::nullopt});
  end.changes.push_back({{"set", 0, 0}, flow::task_status::failed, std::nullopt,
                         std::string{"ignored: already ended"}});
  end.cancel.push_back({timer_kind::schedule_to_start, {"a", 0, 0}});
  end.cancel.push_back({timer_kind::wait, {"w", 0, 0}});
  // Arming again what is pending is absorbed.
  end.arm.push_back({timer_kind::delay, flow::task_identity{"later", 0, 0}, before + 5000});
  end.status = flow::workflow_status::completed;
  end.output = json(boost::json::object{{"result", "ok"}});
  NF_REQUIRE_OK(apply_one(end));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'a'
                             AND "status" = 'CANCELED' AND "endedAt" IS NOT NULL
                             AND "reasonForIncompletion" = 'workflow ended'
                             AND "deciderSeenAt" IS NOT NULL)"),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'w'
                             AND "status" = 'COMPLETED' AND "output" = '{"waited": 1}')"),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'set'
                             AND "status" = 'COMPLETED')"),
                  1);
  // The two cancelled timers are deleted; the third is still pending.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "claimedAt" IS NULL)"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "status" = 'COMPLETED'
                             AND "endedAt" IS NOT NULL AND "output" = '{"result": "ok"}'
                             AND "version" = 2)"),
                  1);
}

CAF_TEST(the first evaluation does not arm the workflow timeout the start armed) {
  define_workflow("timed", 300);
  auto started = start("timed");
  decision_write first = schedule(started.id, 0, "a");
  first.arm.push_back({timer_kind::workflow_timeout, std::nullopt, 300000});
  NF_REQUIRE_OK(apply_one(first));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "kind" = 'workflowTimeout')"), 1);
  // A later evaluation (a rerun that restarts the clock) arms one.
  auto later = write_for(started.id, 1);
  later.arm.push_back({timer_kind::workflow_timeout, std::nullopt, 300000});
  NF_REQUIRE_OK(apply_one(later));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "kind" = 'workflowTimeout')"), 2);
}

CAF_TEST(many workflows share one apply and requeue never duplicates a row) {
  std::vector<workflow_id> ids;
  for (int i = 0; i < 20; ++i)
    ids.push_back(start("order").id);
  std::vector<decision_write> writes;
  for (const auto& id : ids)
    writes.push_back(schedule(id, 0, "a"));
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto r = apply_decisions(tx, writes);
  NF_REQUIRE_OK(r);
  CAF_REQUIRE(tx.commit());
  CAF_CHECK_EQUAL(r->inserted.size(), 20u);
  CAF_CHECK_EQUAL(r->queues, std::vector<std::string>{"work"});
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 20);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "seq" = 2)"), 20);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
  auto twice = ids;
  twice.push_back(ids.front());
  NF_REQUIRE_OK(requeue(conn, twice, "timer"));
  NF_REQUIRE_OK(requeue(conn, {ids.front()}, "signal"));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 20);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "reason" = 'signal')"), 1);
}

CAF_TEST(a decision with its COMMIT in the same round trip is committed when it returns) {
  auto started = start("order");
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto r = apply_decisions(tx, {schedule(started.id, 0, "a")}, true);
  NF_REQUIRE_OK(r);
  CAF_CHECK(tx.committed());
  CAF_CHECK(!tx.active());
  CAF_CHECK_EQUAL(r->inserted.size(), 1u);
  CAF_CHECK_EQUAL(r->queues, std::vector<std::string>{"work"});
  // Another connection sees it before the caller's commit(), which has nothing left to do.
  auto other = db->connect();
  auto seen = other.exec(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'a')");
  NF_REQUIRE_OK(seen);
  CAF_CHECK_EQUAL(seen->i64(0, 0), 1);
  CAF_CHECK(tx.commit());
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions")"), 1);
}

CAF_TEST(I4 a stale decision with its COMMIT in the same round trip commits nothing) {
  test::enable_webhook_sink(conn); // its outbox row would show too
  auto started = start("order");
  NF_REQUIRE_OK(apply_one(schedule(started.id, 0, "first")));
  auto before = table_counts();
  // Evaluated at version 0, which the write above moved on: only the statement's own check
  // stops the writes after it, and the COMMIT behind them, from committing.
  auto w = schedule(started.id, 0, "late");
  auto now = server_now_ms(conn);
  NF_REQUIRE_OK(now);
  w.arm.push_back({timer_kind::delay, flow::task_identity{"late", 0, 0}, *now + 60000});
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto r = apply_decisions(tx, {w}, true);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::stale);
  CAF_CHECK(nf::message_of(r.error()).find(started.id.str() + " (expected version 0)")
            != std::string::npos);
  CAF_CHECK(!tx.committed());
  tx.rollback();
  CAF_CHECK_EQUAL(tasks_of(started.id, "late"), 0);
  CAF_CHECK(table_counts() == before);
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions")"), 1);
}

// A lease handed back (or taken) between an evaluation's read and its write moves the task
// row outside the evaluation's claim. A timeout decided on the attempt as it was read is
// then stale: refused whole and requeued, never applied to the row as it is now (which
// would end, and stamp as started, an attempt that is waiting for its next worker).
CAF_TEST(a change decided on a task status that moved meanwhile is stale and commits nothing) {
  auto started = start("order");
  NF_REQUIRE_OK(apply_one(schedule(started.id, 0, "a")));
  lease_request lr;
  lr.queue = "work";
  lr.max_tasks = 1;
  lr.worker_id = "w1";
  lr.lease_seconds = 300;
  auto leased = lease_tasks(conn, lr);
  CAF_REQUIRE(leased);
  CAF_REQUIRE_EQUAL(leased->size(), 1u);
  const auto t = leased->front();
  // Decided while the attempt was IN_PROGRESS: time it out and schedule the retry.
  auto timeout = [&] {
    auto w = write_for(started.id, 1);
    w.changes.push_back({{"a", 0, 0}, flow::task_status::timed_out, std::nullopt,
                         std::string{"timeoutSeconds exceeded"}, flow::task_status::in_progress});
    w.inserts.push_back(simple("a", 1));
    return w;
  };
  // Meanwhile its lease is handed back: SCHEDULED again, as the same attempt.
  auto back = hand_back_leases(conn, {undelivered_lease{started.id, t.task, t.token}});
  CAF_REQUIRE(back);
  CAF_REQUIRE_EQUAL(back->size(), 1u);
  auto before = table_counts();
  auto r = apply_one(timeout());
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::stale);
  CAF_CHECK(nf::message_of(r.error()).find(started.id.str()) != std::string::npos);
  CAF_CHECK(table_counts() == before);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text || ' ' || ("startedAt" IS NULL)
                              FROM "TaskExecutions" WHERE "id" = $1)",
                         params::of(t.task)),
                  "SCHEDULED true");
  CAF_CHECK_EQUAL(tasks_of(started.id, "a"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions")"), 1);
  // Leased again, the row is what the decision saw: it applies.
  auto again = lease_tasks(conn, lr);
  CAF_REQUIRE(again);
  CAF_REQUIRE_EQUAL(again->size(), 1u);
  NF_REQUIRE_OK(apply_one(timeout()));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text FROM "TaskExecutions"
                             WHERE "id" = $1)", params::of(t.task)),
                  "TIMED_OUT");
  CAF_CHECK_EQUAL(tasks_of(started.id, "a"), 2);
}

CAF_TEST(a task leased in a decision whose identity exists fails the insert before its COMMIT) {
  auto started = start("order");
  NF_REQUIRE_OK(apply_one(schedule(started.id, 0, "a")));
  auto before = table_counts();
  // The version is right, so only the insert's own check sees that the leased row was
  // absorbed by the identity already there (I1).
  auto w = schedule(started.id, 1, "a");
  task_lease lease;
  lease.id = task_id{new_uuidv7()};
  lease.worker_id = "w1";
  lease.token = lease_token{new_uuidv7()};
  auto now = server_now_ms(conn);
  NF_REQUIRE_OK(now);
  lease.expires_at_ms = *now + 60000;
  w.inserts.front().lease = lease;
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto r = apply_decisions(tx, {w}, true);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::internal);
  CAF_CHECK(nf::message_of(r.error()).find("1 tasks leased in the decision, 0 inserted")
            != std::string::npos);
  CAF_CHECK(!tx.committed());
  tx.rollback();
  CAF_CHECK(table_counts() == before);
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions")"), 1);
}

CAF_TEST(a claim reads the pending rows it takes and not every row of its shards) {
  // 4,000 pending evaluations over four shards, a claim of 256. Ordered by "enqueuedAt"
  // across the shards, the claim sorted all 4,000 at each call: a committer that fell
  // behind paid for its whole backlog at every claim.
  sql(R"(DELETE FROM "DecideQueues")");
  sql(R"(INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "workflowStartedAt", "shard", "enqueuedAt")
         SELECT w, $1, uuid_extract_timestamp(w), (g % 4)::smallint, now() - g * interval '1 ms'
           FROM (SELECT uuidv7() AS w, g FROM generate_series(1, 4000) g) s)",
      params::of(default_namespace));
  sql(R"(ANALYZE "DecideQueues")");
  CAF_REQUIRE(prefer_index_scans(conn)); // as the engine's connections do
  sql("SET plan_cache_mode = force_generic_plan");
  std::vector<shard_id> shards{shard_id{0}, shard_id{1}, shard_id{2}, shard_id{3}};
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto claimed = claim_decide_batch(tx, shards, 256); // prepares the statement
  NF_REQUIRE_OK(claimed);
  CAF_CHECK_EQUAL(claimed->size(), 256u);
  auto text = scalar(R"(EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "decide.claim_batch"('{0,1,2,3}', 256, 1))");
  boost::system::error_code ec;
  auto plan = boost::json::parse(text, ec);
  CAF_REQUIRE(!ec);
  auto read = test::rows_read(plan.as_array().at(0).as_object().at("Plan").as_object(),
                               "DecideQueues");
  CAF_MESSAGE("the claim read " << read << " rows of \"DecideQueues\"");
  // The rows this transaction locked already are its own to take again: 256 read.
  CAF_CHECK_LESS_OR_EQUAL(read, 2 * 256.0);
}

CAF_TEST(claims start at each of their shards in turn and take a shard s oldest rows first) {
  // A backlog on every shard, larger than a claim: were each claim to start at the same
  // shard, the others would wait until its backlog was gone.
  sql(R"(DELETE FROM "DecideQueues")");
  sql(R"(INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "workflowStartedAt", "shard", "enqueuedAt")
         SELECT w, $1, uuid_extract_timestamp(w), (g % 4)::smallint, now() - g * interval '1 ms'
           FROM (SELECT uuidv7() AS w, g FROM generate_series(1, 200) g) s)",
      params::of(default_namespace));
  std::vector<shard_id> shards{shard_id{0}, shard_id{1}, shard_id{2}, shard_id{3}};
  std::set<int64_t> first_shards;
  for (size_t i = 0; i < shards.size(); ++i) {
    transaction tx{conn};
    CAF_REQUIRE(tx.begin());
    auto claimed = claim_decide_batch(tx, shards, 10);
    NF_REQUIRE_OK(claimed);
    CAF_REQUIRE_EQUAL(claimed->size(), 10u);
    std::vector<std::string> ids;
    for (const auto& c : *claimed)
      ids.push_back(c.id.str());
    // The ten rows: one shard's ten oldest, in their order.
    auto r = sql(R"(SELECT q."shard", q."enqueuedAt" = (SELECT min(o."enqueuedAt") FROM "DecideQueues" o
                                                       WHERE o."shard" = q."shard"),
                          count(*) OVER (PARTITION BY q."shard"),
                          bool_and(q."enqueuedAt" <= ALL (SELECT o."enqueuedAt" FROM "DecideQueues" o
                                                           WHERE o."shard" = q."shard"
                                                             AND o."workflowId" <> ALL($1::uuid[]))) OVER ()
                     FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, k)
                     JOIN "DecideQueues" q ON q."workflowId" = u.id
                    ORDER BY u.k)",
                 params::of(text_array(ids)));
    CAF_REQUIRE_EQUAL(r.rows(), 10);
    CAF_CHECK(r.str(0, 1) == "t");           // the claim begins with its shard's oldest row
    CAF_CHECK_EQUAL(r.i64(0, 2), 10);        // all ten of one shard
    CAF_CHECK(r.str(0, 3) == "t");           // none older left behind in that shard
    first_shards.insert(r.i64(0, 0));
    tx.rollback();
  }
  CAF_CHECK_EQUAL(first_shards.size(), shards.size());
}

CAF_TEST_FIXTURE_SCOPE_END()
