#define CAF_SUITE actors.node
#include "tests/actors/actor_fixture.hpp"

#include <chrono>
#include <thread>

#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <boost/json/parse.hpp>

#include "actors/node/node.hpp"
#include "store/ids.hpp"
#include "store/sharding.hpp"
#include "net/http/client.hpp"

using namespace nf;

namespace {

// A whole node (membership, partitions, maintenance, runner) on a database with two
// partitions; "PartitionLeases" rows live forever, so every test has its own database.
struct fixture : test::actor_fixture {
  caf::actor node;

  fixture() : actor_fixture("actors_node", 2, true) {
    task_defs(R"([{"name": "work", "retryCount": 0, "responseTimeoutSeconds": 600,
                   "timeoutSeconds": 900}])");
    workflow_def(R"({"name": "one", "version": 1, "tasks": [
      {"name": "work", "taskReferenceName": "a", "type": "SIMPLE",
       "inputParameters": {"x": "${workflow.input.x}"}}],
      "outputParameters": {"y": "${a.output.y}"}})");
  }

  ~fixture() {
    if (node)
      caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  }

  void spawn(bool nudges, std::vector<std::pair<std::string, std::string>> overrides = {}) {
    actors::node_options o;
    o.http = std::make_shared<nf::http::beast_client>();
    o.dsn = db->dsn();
    o.advertise = "test:1";
    auto set = [&](const char* k, const std::string& v) {
      CAF_REQUIRE(!o.settings.set(k, v, "test"));
    };
    set("engine.partitions", "2");
    set("engine.nudges", nudges ? "true" : "false");
    set("membership.heartbeat_ms", "20");
    set("decider.poll_interval_ms", "20");
    set("lessor.poll_interval_ms", "20");
    set("timer.poll_interval_ms", "20");
    set("relay.poll_interval_ms", "50");
    for (const auto& [k, v] : overrides)
      set(k.c_str(), v);
    node = actors::spawn_node(sys, o);
  }

  std::string node_id() {
    return scalar(R"(SELECT "id"::text FROM "Nodes" WHERE "address" = 'test:1')");
  }

  /// The node's parked polls of "work" offered to its committers (status "waitingPolls").
  int64_t waiting_polls() {
    auto s = ask<std::string>(node, status_atom_v);
    NF_REQUIRE_OK(s);
    auto status = boost::json::parse(*s);
    const auto& w = status.as_object().at("waitingPolls").as_object();
    return w.contains("work") ? w.at("work").to_number<int64_t>() : 0;
  }

  bool owns(int n) {
    return test::wait_until([&] {
      auto s = ask<std::string>(node, status_atom_v);
      return s && s->find(n == 2 ? R"("running":[0,1])" : R"("running":[0])")
                    != std::string::npos;
    });
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(node_tests, fixture)

CAF_TEST(I9 with nudges off a node finishes a workflow by polling alone) {
  spawn(false);
  CAF_REQUIRE(owns(2));
  msg::start_request s;
  s.workflow_name = "one";
  s.input_json = R"({"x": 5})";
  auto started = ask<msg::start_reply>(node, start_atom_v, s);
  NF_REQUIRE_OK(started);
  msg::poll_request p;
  p.queue = "work";
  p.worker_id = "w1";
  p.timeout_ms = 5000;
  std::vector<msg::leased_task> got;
  CAF_REQUIRE(test::wait_until([&] {
    auto r = ask<std::vector<msg::leased_task>>(node, poll_atom_v, p);
    NF_REQUIRE_OK(r);
    got = *r;
    return !got.empty();
  }));
  CAF_CHECK_EQUAL(got[0].workflow_id, started->workflow_id);
  CAF_CHECK_EQUAL(got[0].input_json, R"({"x": 5})");
  msg::task_result done;
  done.task_id = got[0].task_id;
  done.workflow_id = got[0].workflow_id;
  done.lease_token = got[0].lease_token;
  done.output_json = R"({"y": 6})";
  NF_REQUIRE_OK(ask<std::string>(node, complete_atom_v, done));
  CAF_CHECK(wait_status(started->workflow_id, "COMPLETED"));
  auto status = ask<std::string>(node, status_atom_v);
  NF_REQUIRE_OK(status);
  CAF_CHECK_NOT_EQUAL(status->find(R"("nudges":false)"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(status->find(R"("epoch":1)"), std::string::npos);
}

namespace {

/// Parks a long poll of "work" on `node` and waits until its lessor offers it to the
/// committers (or, with offering off, until it has had time to park), starts "one", and
/// returns what the poll got and how many transactions wrote the task's scheduled and
/// started events.
struct parked_lease {
  std::vector<msg::leased_task> got;
  std::string workflow_id;
  std::string transactions;
  int64_t waiting_after = 0;  ///< polls of "work" still offered after the lease
  std::string history;        ///< history_of the workflow
  std::string published;      ///< published_from_rows of its TASK_STARTED
};

/// "seq type" of each event of `wf`, then its execution row's "lastSeq": gap-free whichever
/// transaction wrote which event (I8), and the row's "lastSeq" is the last event's.
std::string history_of(fixture& f, const std::string& wf) {
  return f.scalar(R"(SELECT string_agg(e."seq" || ' ' || e."eventType", ', ' ORDER BY e."seq")
                            || ' / ' || max(w."lastSeq")
                       FROM "WorkflowEvents" e
                       JOIN "WorkflowExecutions" w ON w."id" = e."workflowId"
                      WHERE e."workflowId" = $1)",
                  store::params::of(wf));
}

/// "n / outbox rows / events" of `wf`: n of its `type` events have the outbox row the
/// lessor's and the completions' own statement makes from the stored event (store::add_events),
/// and, with a webhook sink enabled, every event has one outbox row.
std::string published_from_rows(fixture& f, const std::string& wf, const std::string& type) {
  return f.scalar(R"(SELECT (SELECT count(*) FROM "OutboxEvents" o
                               JOIN "WorkflowEvents" e
                                 ON e."workflowId" = o."workflowId" AND e."eventType"::text = $2
                              WHERE o."workflowId" = $1 AND o."eventType" = $2
                                AND o."payload" = jsonb_build_object(
                                      'workflowId', e."workflowId", 'seq', e."seq",
                                      'at', e."at", 'taskId', e."taskId",
                                      'refName', e."refName", 'data', e."payload"))
                            || ' / ' || (SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1)
                            || ' / ' || (SELECT count(*) FROM "WorkflowEvents"
                                          WHERE "workflowId" = $1))",
                  store::params::of(wf, type));
}

parked_lease lease_to_parked_poll(fixture& f, bool offered) {
  test::enable_webhook_sink(f.conn); // every event gets an outbox row (published_from_rows)
  parked_lease out;
  msg::poll_request p;
  p.queue = "work";
  p.worker_id = "w1";
  p.timeout_ms = 0;
  // An empty claim marks the queue dry: the next poll parks without a transaction.
  NF_REQUIRE_OK(f.ask<std::vector<msg::leased_task>>(f.node, poll_atom_v, p));
  caf::scoped_actor worker{f.sys};
  p.timeout_ms = 20000;
  worker->send(f.node, poll_atom_v, p); // answered to `worker` below
  if (offered) {
    CAF_REQUIRE(test::wait_until([&] { return f.waiting_polls() == 1; }));
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
  }
  msg::start_request s;
  s.workflow_name = "one";
  s.input_json = R"({"x": 5})";
  auto started = f.ask<msg::start_reply>(f.node, start_atom_v, s);
  NF_REQUIRE_OK(started);
  out.workflow_id = started->workflow_id;
  worker->receive([&](std::vector<msg::leased_task>& xs) { out.got = std::move(xs); },
                  [&](caf::error& err) { CAF_FAIL("poll failed: " << to_string(err)); },
                  caf::after(std::chrono::seconds{30}) >> [] { CAF_FAIL("poll unanswered"); });
  out.waiting_after = f.waiting_polls();
  out.transactions = f.scalar(R"(SELECT count(DISTINCT xmin::text)::text FROM "WorkflowEvents"
                                  WHERE "workflowId" = $1
                                    AND "eventType" IN ('TASK_SCHEDULED', 'TASK_STARTED'))",
                              store::params::of(out.workflow_id));
  out.history = history_of(f, out.workflow_id);
  out.published = published_from_rows(f, out.workflow_id, "TASK_STARTED");
  return out;
}

const char* const leased_history = "1 WORKFLOW_STARTED, 2 TASK_SCHEDULED, 3 TASK_STARTED / 3";

} // namespace

CAF_TEST(a task decided while a poll waits is leased to it in the deciding commit) {
  // Every update of an execution row, by transaction: the events of the lease and of the
  // completion are numbered by the decision's compare-and-set, not by updates of their own.
  // Made before the node starts and never dropped (the database is this test's own): DDL on
  // the partitioned table while the node runs locks its partitions one by one and can
  // deadlock with the node's statements.
  sql(R"(CREATE TABLE "test_execution_updates" ("id" uuid, "xact" xid8))");
  sql(R"(CREATE FUNCTION "test_note_execution_update"() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           INSERT INTO "test_execution_updates" VALUES (NEW."id", pg_current_xact_id());
           RETURN NEW;
         END $$)");
  sql(R"(CREATE TRIGGER "test_note_execution_update" BEFORE UPDATE ON "WorkflowExecutions"
         FOR EACH ROW EXECUTE FUNCTION "test_note_execution_update"())");
  // The lessor's periodic retry takes its parked polls back for a moment: not during this.
  spawn(true, {{"lessor.poll_interval_ms", "60000"}});
  CAF_REQUIRE(owns(2));
  auto updates = [&](const std::string& wf) {
    return scalar(R"(SELECT string_agg(n::text, ' ' ORDER BY x) FROM (
                       SELECT "xact" AS x, count(*) AS n FROM "test_execution_updates"
                        WHERE "id" = $1 GROUP BY "xact") c)",
                  store::params::of(wf));
  };
  auto r = lease_to_parked_poll(*this, true);
  CAF_REQUIRE_EQUAL(r.got.size(), 1u);
  CAF_CHECK_EQUAL(r.got[0].workflow_id, r.workflow_id);
  CAF_CHECK_EQUAL(boost::json::parse(r.got[0].input_json), boost::json::parse(R"({"x": 5})"));
  // The start, its decision and the lease are one commit: no lease transaction between.
  CAF_CHECK_EQUAL(r.transactions, "1");
  CAF_CHECK_EQUAL(updates(r.workflow_id), "1");
  // Its TASK_STARTED takes the seq after the decision's events, allocated with them.
  CAF_CHECK_EQUAL(r.history, leased_history);
  CAF_CHECK_EQUAL(r.published, "1 / 3 / 3");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text || ' ' || "workerId" || ' ' || "pollCount"
                              FROM "TaskExecutions" WHERE "id" = $1)",
                         store::params::of(r.got[0].task_id)),
                  "IN_PROGRESS w1 1");
  // Its queue row carries the lease, and its start-to-close timer guards that lease (I6).
  CAF_CHECK_EQUAL(scalar(R"(SELECT "leaseToken"::text || ' ' || "leasedBy" FROM "TaskQueues"
                              WHERE "taskId" = $1)",
                         store::params::of(r.got[0].task_id)),
                  r.got[0].lease_token + " w1");
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*)::text FROM "Timers" WHERE "taskId" = $1
                              AND "kind" = 'startToClose' AND "leaseToken" = $2
                              AND "fireAt" > now() + interval '800 seconds')",
                         store::params::of(r.got[0].task_id, r.got[0].lease_token)),
                  "1");
  CAF_CHECK_EQUAL(r.waiting_after, 0);
  // The lease is a lease like any (I5): its token completes the task, and the workflow.
  msg::task_result done;
  done.task_id = r.got[0].task_id;
  done.workflow_id = r.got[0].workflow_id;
  done.lease_token = "00000000-0000-7000-8000-000000000000";
  done.output_json = R"({"y": 6})";
  auto lost = ask<std::string>(node, complete_atom_v, done);
  CAF_REQUIRE(!lost);
  CAF_CHECK_EQUAL(nf::message_of(lost.error()), "lease lost");
  done.lease_token = r.got[0].lease_token;
  NF_REQUIRE_OK(ask<std::string>(node, complete_atom_v, done));
  CAF_CHECK(wait_status(r.workflow_id, "COMPLETED"));
  // The completion's event went with the decision it caused, numbered before its events.
  CAF_CHECK_EQUAL(history_of(*this, r.workflow_id),
                  "1 WORKFLOW_STARTED, 2 TASK_SCHEDULED, 3 TASK_STARTED, 4 TASK_COMPLETED, "
                  "5 WORKFLOW_COMPLETED / 5");
  CAF_CHECK_EQUAL(published_from_rows(*this, r.workflow_id, "TASK_COMPLETED"), "1 / 5 / 5");
  CAF_CHECK_EQUAL(updates(r.workflow_id), "1 1");
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(DISTINCT xmin::text)::text FROM "WorkflowEvents"
                              WHERE "workflowId" = $1 AND "seq" >= 4)",
                         store::params::of(r.workflow_id)),
                  "1");
}

CAF_TEST(with lessor.lease_in_decision off the lessor leases in a transaction of its own) {
  spawn(true, {{"lessor.lease_in_decision", "false"}, {"lessor.poll_interval_ms", "60000"}});
  CAF_REQUIRE(owns(2));
  auto r = lease_to_parked_poll(*this, false);
  CAF_REQUIRE_EQUAL(r.got.size(), 1u);
  CAF_CHECK_EQUAL(r.transactions, "2");
  CAF_CHECK_EQUAL(r.history, leased_history);
  CAF_CHECK_EQUAL(r.published, "1 / 3 / 3");
}

CAF_TEST(committers switching between one and two lose and repeat nothing) {
  // Any flush of two requests spreads the partitions over both committers; a second of
  // idle polls gives them all back to one.
  spawn(true, {{"decider.split_at_requests", "2"}});
  CAF_REQUIRE(owns(2));
  auto deciding = [&](const char* n) {
    auto s = ask<std::string>(node, status_atom_v);
    return s && s->find(std::string{R"("decidingCommitters":)"} + n) != std::string::npos;
  };
  caf::scoped_actor client{sys};
  constexpr int burst = 8;
  std::vector<std::string> started;
  int splits = 0, merges = 0;
  for (int round = 0; round < 12 && (splits < 2 || merges < 2); ++round) {
    // A burst of starts, then one of completions: each flush takes what has arrived.
    for (int i = 0; i < burst; ++i) {
      msg::start_request s;
      s.workflow_name = "one";
      s.input_json = R"({"x": )" + std::to_string(i) + "}";
      client->send(node, start_atom_v, s);
    }
    int got = 0;
    client->receive_for(got, burst)(
      [&](const msg::start_reply& r) { started.push_back(r.workflow_id); },
      [&](caf::error& err) { CAF_FAIL("start: " << nf::message_of(err)); });
    splits += deciding("2") ? 1 : 0;
    std::vector<msg::leased_task> tasks;
    CAF_REQUIRE(test::wait_until([&] {
      msg::poll_request p;
      p.queue = "work";
      p.worker_id = "w1";
      p.max_tasks = burst;
      p.timeout_ms = 100;
      auto r = ask<std::vector<msg::leased_task>>(node, poll_atom_v, p);
      NF_REQUIRE_OK(r);
      tasks.insert(tasks.end(), r->begin(), r->end());
      return tasks.size() >= static_cast<size_t>(burst);
    }));
    for (const auto& t : tasks) {
      msg::task_result done;
      done.task_id = t.task_id;
      done.workflow_id = t.workflow_id;
      done.lease_token = t.lease_token;
      done.output_json = R"({"y": 1})";
      client->send(node, complete_atom_v, done);
    }
    got = 0;
    client->receive_for(got, static_cast<int>(tasks.size()))(
      [&](const std::string&) {},
      [&](caf::error& err) { CAF_FAIL("complete: " << nf::message_of(err)); });
    merges += test::wait_until([&] { return deciding("1"); }, std::chrono::seconds{5}) ? 1 : 0;
  }
  CAF_CHECK(splits >= 2);
  CAF_CHECK(merges >= 2);
  for (const auto& id : started)
    CAF_CHECK(wait_status(id, "COMPLETED"));
  // One task per workflow (I1), and nothing left to decide.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions")"),
                  static_cast<int64_t>(started.size()));
  CAF_CHECK(test::wait_until([&] { return count(R"(SELECT count(*) FROM "DecideQueues")") == 0; }));
}

CAF_TEST(a request for a partition owned elsewhere is answered unavailable) {
  // Another (live) node holds partition 1.
  sql(R"(INSERT INTO "PartitionLeases" ("partition", "nodeId", "expiresAt")
         VALUES (1, '00000000-0000-7000-8000-000000000009', now() + interval '1 hour'))");
  spawn(true);
  CAF_REQUIRE(owns(1));
  std::string id;
  do
    id = new_uuidv7();
  while (shard_of(id, 2) != 1);
  msg::workflow_command c;
  c.op = "pause";
  c.workflow_id = id;
  auto r = ask<std::string>(node, command_atom_v, c);
  CAF_REQUIRE(!r);
  CAF_CHECK(nf::code_of(r.error()) == nf::errc::unavailable);
  CAF_CHECK_EQUAL(nf::message_of(r.error()), "partition 1 is not owned by this node");
  // Starts go to a partition this node owns.
  msg::start_request s;
  s.workflow_name = "one";
  auto started = ask<msg::start_reply>(node, start_atom_v, s);
  NF_REQUIRE_OK(started);
  CAF_CHECK_EQUAL(shard_of(started->workflow_id, 2), 0);
}

CAF_TEST(stopping the node releases its leases and marks it stopped) {
  spawn(true);
  CAF_REQUIRE(owns(2));
  auto id = node_id();
  caf::scoped_actor self{sys};
  self->monitor(node);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  self->receive([](caf::down_msg&) {},
                caf::after(std::chrono::seconds{20}) >> [] { CAF_FAIL("node did not stop"); });
  node = caf::actor{};
  CAF_CHECK(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "Nodes" WHERE "id" = $1 AND "stoppedAt" IS NOT NULL)",
                 store::params::of(id))
           == 1;
  }));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "expiresAt" > now())"), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
