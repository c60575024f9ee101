#define CAF_SUITE actors.decider
#include "tests/actors/decider_fixture.hpp"

#include "engine/decide/batch.hpp"
#include "actors/decider/committer_split.hpp"
#include "flow/uuid.hpp"
#include "store/sharding.hpp"
#include "store/signals.hpp"
#include "store/timers.hpp"

using namespace nf;

namespace {

// Two sequential SIMPLE tasks on queues "work" and "next", no retries.
constexpr const char* two_steps = R"({"name": "two", "version": 1, "tasks": [
  {"name": "work", "taskReferenceName": "a", "type": "SIMPLE",
   "inputParameters": {"x": "${workflow.input.x}"}},
  {"name": "next", "taskReferenceName": "b", "type": "SIMPLE",
   "inputParameters": {"y": "${a.output.y}"}}],
  "outputParameters": {"result": "${b.output.z}"}})";

/// A worker's report that `t` completed with `output`.
store::task_result completed(const store::leased_task& t, boost::json::object output) {
  return {t.workflow, t.task, t.token, store::task_outcome::completed,
          store::json(std::move(output)), std::nullopt};
}

/// A start of "two" whose id falls in `shard` of `partitions`.
store::start_request two_in(int16_t shard, int partitions) {
  store::start_request r;
  r.name = "two";
  r.id = engine::new_workflow_id_in(shard, partitions);
  return r;
}

struct fixture : test::decider_fixture {
  fixture() : decider_fixture("actors_decider") {
    task_defs(R"([{"name": "work", "retryCount": 0, "responseTimeoutSeconds": 600},
                  {"name": "next", "retryCount": 0, "responseTimeoutSeconds": 600}])");
    workflow_def(two_steps);
  }

  caf::expected<msg::start_reply> start(const caf::actor& d, const std::string& input = "{}") {
    return decider_fixture::start(d, "two", input);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(decider_tests, fixture)

CAF_TEST(a start is answered after its first task is scheduled in the same commit) {
  auto d = decider();
  auto reply = start(d, R"({"x": 7})");
  NF_REQUIRE_OK(reply);
  CAF_CHECK(reply->created);
  CAF_CHECK_EQUAL(shard_of(reply->workflow_id, 1), 0);
  // Fast path a: no poll and no hint was needed for the first task to exist.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" t JOIN "TaskQueues" q
                             ON q."taskId" = t."id" AND q."queueName" = 'work'
                           WHERE t."workflowId" = $1 AND t."refName" = 'a'
                             AND t."status" = 'SCHEDULED' AND t."input" = '{"x": 7}')",
                        store::params::of(reply->workflow_id)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        store::params::of(reply->workflow_id)),
                  1);
  CAF_CHECK(test::wait_until([&] { return hints->count("work") == 1; }));
  CAF_CHECK(hints->count("outbox") >= 1);
  // Bad input fails alone with a message naming the field, and writes nothing.
  auto bad = start(d, R"([1, 2])");
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::message_of(bad.error()), "input: expected a JSON object, got an array");
  msg::start_request unknown;
  unknown.workflow_name = "missing";
  auto nf_ = ask<msg::start_reply>(d, start_atom_v, unknown);
  CAF_REQUIRE(!nf_);
  CAF_CHECK(nf::code_of(nf_.error()) == nf::errc::not_found);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 1);
}

CAF_TEST(a committer that does not decide for the shard keeps the start s row and nudges its decider) {
  // Two committers sharing the node's partitions, not split: committer 0 decides for all of
  // them, and a start routed to committer 1 just before the switch is applied there.
  auto d = decider(3600000, {}, std::make_shared<actors::committer_split>(2, 64), 1);
  auto nudges = hints->count("decide");
  auto reply = start(d);
  NF_REQUIRE_OK(reply);
  CAF_CHECK_EQUAL(tasks_of(reply->workflow_id, "a"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        store::params::of(reply->workflow_id)),
                  1);
  CAF_CHECK(test::wait_until([&] { return hints->count("decide") > nudges; }));
}

CAF_TEST(a commit hints the outbox only while the relay has sinks and a timer only if due soon) {
  // The timer's own poll (timer.poll_interval_ms, 1 s by default) finds a timer due in an
  // hour in time; one due in a second needs the hint.
  workflow_def(R"({"name": "long_wait", "version": 1, "tasks": [{"name": "w",
    "taskReferenceName": "w", "type": "WAIT", "inputParameters": {"duration": "1h"}}]})");
  workflow_def(R"({"name": "short_wait", "version": 1, "tasks": [{"name": "w",
    "taskReferenceName": "w", "type": "WAIT", "inputParameters": {"duration": "1s"}}]})");
  auto presence = std::make_shared<actors::sink_presence>();
  presence->note(false);
  sinks = presence;
  auto d = decider();
  NF_REQUIRE_OK(decider_fixture::start(d, "long_wait"));
  NF_REQUIRE_OK(decider_fixture::start(d, "short_wait"));
  // The committer's hints reach the probe in the order it sent them: once the second
  // start's arrived, so had any of the first's.
  CAF_REQUIRE(test::wait_until([&] { return hints->count("armed") >= 1; }));
  CAF_CHECK_EQUAL(hints->count("armed"), 1);
  CAF_CHECK_EQUAL(hints->count("outbox"), 0);
  // The relay read a sink: the outbox is hinted again (after the timer: wait for it).
  presence->note(true);
  NF_REQUIRE_OK(decider_fixture::start(d, "short_wait"));
  CAF_CHECK(test::wait_until([&] { return hints->count("outbox") >= 1; }));
  CAF_CHECK_EQUAL(hints->count("armed"), 2);
}

CAF_TEST(an idempotent start returns the same workflow) {
  auto d = decider();
  msg::start_request r;
  r.workflow_name = "two";
  r.idempotency_key = "order-1";
  auto first = ask<msg::start_reply>(d, start_atom_v, r);
  auto again = ask<msg::start_reply>(d, start_atom_v, r);
  NF_REQUIRE_OK(first);
  NF_REQUIRE_OK(again);
  CAF_CHECK(first->created);
  CAF_CHECK(!again->created);
  CAF_CHECK_EQUAL(first->workflow_id, again->workflow_id);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 1);
}

CAF_TEST(a completion through the decider advances the workflow in the same commit) {
  auto d = decider();
  auto wf = start(d, R"({"x": 1})");
  NF_REQUIRE_OK(wf);
  auto a = lease("work");
  CAF_REQUIRE_EQUAL(a.size(), 1u);
  auto done = ask<std::string>(d, complete_atom_v, result(a[0], R"({"y": 2})"));
  NF_REQUIRE_OK(done);
  CAF_CHECK_NOT_EQUAL(done->find("\"COMPLETED\""), std::string::npos);
  // The next task exists when the completion is answered, with the output wired in.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                             AND "refName" = 'b' AND "input" = '{"y": 2}')",
                        store::params::of(wf->workflow_id)),
                  1);
  // A second report with the same (now spent) token: lease lost, nothing changes.
  auto late = ask<std::string>(d, complete_atom_v, result(a[0], R"({"y": 99})"));
  CAF_REQUIRE(!late);
  CAF_CHECK(nf::code_of(late.error()) == nf::errc::lease_lost);
  CAF_CHECK_EQUAL(nf::message_of(late.error()), "lease lost");
  auto b = lease("next");
  CAF_REQUIRE_EQUAL(b.size(), 1u);
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(b[0], R"({"z": "ok"})")));
  CAF_CHECK_EQUAL(status_of(wf->workflow_id), "COMPLETED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                         store::params::of(wf->workflow_id)),
                  R"({"result": "ok"})");
  // I8: the history has no gap.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                        store::params::of(wf->workflow_id)),
                  count(R"(SELECT "lastSeq" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        store::params::of(wf->workflow_id)));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'WORKFLOW_COMPLETED')",
                        store::params::of(wf->workflow_id)),
                  1);
}

// The rows of a running workflow's ended tasks are the committer's to remember after its
// decision: the next snapshot reads only the rows past them, while the execution's version
// says no other evaluation committed since. Each row below is changed behind the engine's
// back, once without a new version (the remembered row is used: it was not read again) and
// once with one (the workflow is read whole).
CAF_TEST(a decision reads only the task rows past those its committer knows) {
  workflow_def(R"({"name": "three", "version": 1, "tasks": [
    {"name": "work", "taskReferenceName": "a", "type": "SIMPLE"},
    {"name": "next", "taskReferenceName": "b", "type": "SIMPLE"},
    {"name": "work", "taskReferenceName": "c", "type": "SIMPLE",
     "inputParameters": {"fromA": "${a.output.y}"}}],
    "outputParameters": {"a": "${a.output.y}", "c": "${c.output.z}"}})");
  auto d = decider();
  auto wf = decider_fixture::start(d, "three");
  NF_REQUIRE_OK(wf);
  auto id = store::params::of(wf->workflow_id);
  auto a = lease_one("work");
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(a, R"({"y": 1})")));
  sql(R"(UPDATE "TaskExecutions" SET "output" = '{"y": 7}'
          WHERE "workflowId" = $1 AND "refName" = 'a')", id);
  auto b = lease_one("next");
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(b, "{}")));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "input"::text FROM "TaskExecutions"
                             WHERE "workflowId" = $1 AND "refName" = 'c')", id),
                  R"({"fromA": 1})");
  sql(R"(UPDATE "TaskExecutions" SET "output" = '{"y": 9}'
          WHERE "workflowId" = $1 AND "refName" = 'a')", id);
  sql(R"(UPDATE "WorkflowExecutions" SET "version" = "version" + 1 WHERE "id" = $1)", id);
  auto c = lease_one("work");
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(c, R"({"z": 3})")));
  CAF_CHECK_EQUAL(status_of(wf->workflow_id), "COMPLETED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "WorkflowExecutions" WHERE "id" = $1)", id),
                  R"({"a": 9, "c": 3})");
}

// I5 across the committer's round trips: the lease is read, then the writes go with the
// claim; a lease that moved in between must fail the writes' re-check, and the retried
// attempt answers "lease lost".
CAF_TEST(I5 a lease that moves between the completion s read and its writes is lost) {
  auto d = decider();
  auto wf = start(d, R"({"x": 1})");
  NF_REQUIRE_OK(wf);
  auto a = lease("work");
  CAF_REQUIRE_EQUAL(a.size(), 1u);
  // Hold the execution row: the completion's writes (its event first) wait for it.
  auto holder = db->connect();
  CAF_REQUIRE(holder.exec("BEGIN"));
  CAF_REQUIRE(holder.exec(R"(SELECT 1 FROM "WorkflowExecutions" WHERE "id" = $1 FOR UPDATE)",
                          store::params::of(wf->workflow_id)));
  caf::expected<std::string> done{caf::error{}};
  std::thread reporter{
    [&] { done = ask<std::string>(d, complete_atom_v, result(a[0], R"({"y": 2})")); }};
  // Once a backend waits on that lock, the lease has been read: it now expires and goes
  // to another worker.
  auto waiting = [&] {
    return count(R"(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
                     AND wait_event_type = 'Lock')")
           > 0;
  };
  CAF_CHECK(test::wait_until(waiting));
  sql(R"(UPDATE "TaskQueues" SET "leaseToken" = uuidv7(), "leasedBy" = 'other'
          WHERE "taskId" = $1)",
      store::params::of(a[0].task.str()));
  CAF_REQUIRE(holder.exec("COMMIT"));
  reporter.join();
  CAF_REQUIRE(!done);
  CAF_CHECK(nf::code_of(done.error()) == nf::errc::lease_lost);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text FROM "TaskExecutions" WHERE "id" = $1)",
                         store::params::of(a[0].task.str())),
                  "IN_PROGRESS");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1
                             AND "leasedBy" = 'other')",
                        store::params::of(a[0].task.str())),
                  1);
  CAF_CHECK_EQUAL(tasks_of(wf->workflow_id, "b"), 0);
}

CAF_TEST(I4 a stale evaluation is rolled back requeued and decided again) {
  // The workflow waits in "DecideQueues"; the test holds its execution row and bumps
  // the version, as a second owner's evaluation would, while the decider evaluates.
  store::start_request req;
  req.name = "two";
  auto started = store::start_workflow(conn, req, 1);
  NF_REQUIRE_OK(started);
  auto wf = started->id.str();
  auto other = db->connect();
  CAF_REQUIRE(other.exec("BEGIN"));
  CAF_REQUIRE(other.exec(R"(UPDATE "WorkflowExecutions" SET "version" = "version" + 1
                              WHERE "id" = $1)",
                         store::params::of(wf)));
  auto d = decider(); // its first flush claims the row and blocks on the compare-and-set
  CAF_REQUIRE(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock')")
           == 1;
  }));
  CAF_REQUIRE(other.exec("COMMIT"));
  // Stale: nothing of the evaluation was written and the workflow is queued again.
  CAF_REQUIRE(test::wait_until([&] {
    return scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1)",
                  store::params::of(wf))
           == "stale";
  }));
  CAF_CHECK_EQUAL(tasks_of(wf, "a"), 0);
  caf::anon_send(d, decide_atom_v);
  CAF_REQUIRE(test::wait_until([&] { return tasks_of(wf, "a") == 1; }));
  CAF_CHECK(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "DecideQueues")") == 0;
  }));
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        store::params::of(wf)),
                  2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_SCHEDULED')",
                        store::params::of(wf)),
                  1);
}

CAF_TEST(a start behind a backlog the claim cannot hold is decided in its own commit) {
  // Three workflows wait with older rows; a batch of size 1 claims 1 + its one start = 2
  // rows, the oldest. The start needs none of them: no other transaction can see its
  // workflow, so it has no "DecideQueues" row and is decided in the commit that starts it
  // (fast path a). The claim still takes the backlog oldest first.
  std::vector<std::string> backlog;
  for (int i = 0; i < 3; ++i) {
    store::start_request req;
    req.name = "two";
    auto started = store::start_workflow(conn, req, 1);
    NF_REQUIRE_OK(started);
    backlog.push_back(started->id.str());
  }
  engine::decider_core core{1, db->dsn(), 1};
  core.serve({0});
  engine::batch_input in;
  auto req = two_in(0, 1);
  in.starts.push_back(req);
  auto first = core.run(in);
  CAF_REQUIRE_EQUAL(first.starts.size(), 1u);
  NF_REQUIRE_OK(first.starts[0]);
  auto wf = req.id->str();
  CAF_CHECK(first.more); // the claim was full
  CAF_CHECK_EQUAL(tasks_of(wf, "a"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        store::params::of(wf)),
                  0);
  CAF_CHECK_EQUAL(tasks_of(backlog[0], "a") + tasks_of(backlog[1], "a"), 2);
  CAF_CHECK_EQUAL(tasks_of(backlog[2], "a"), 0);
  for (int i = 0; i < 3 && count(R"(SELECT count(*) FROM "DecideQueues")") > 0; ++i)
    core.run({});
  CAF_CHECK_EQUAL(tasks_of(wf, "a"), 1);
  CAF_CHECK_EQUAL(tasks_of(backlog[2], "a"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
}

CAF_TEST(I3 an end is seen by the evaluation of its own commit and stays unseen without one) {
  engine::decider_core core{1, db->dsn(), 1};
  core.serve({0});
  auto seen = [&](const store::leased_task& t) {
    return count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                     AND "status" = 'COMPLETED' AND "deciderSeenAt" IS NOT NULL)",
                 store::params::of(t.task));
  };
  auto report = [&](const store::leased_task& t) {
    engine::batch_input in;
    in.completions.push_back(completed(t, {{"y", 1}}));
    auto out = core.run(in);
    CAF_REQUIRE_EQUAL(out.completions.size(), 1u);
    NF_REQUIRE_OK(out.completions[0]);
  };
  store::start_request req;
  req.name = "two";
  // A started workflow whose first task a worker holds.
  auto started_and_leased = [&] {
    auto wf = store::start_workflow(conn, req, 1);
    NF_REQUIRE_OK(wf);
    core.run({});
    auto a = lease("work");
    CAF_REQUIRE_EQUAL(a.size(), 1u);
    return std::make_pair(wf->id.str(), a[0]);
  };
  auto [first, a] = started_and_leased();
  // Decided in the completion's own commit: its end is seen, and "b" is scheduled.
  report(a);
  CAF_CHECK_EQUAL(seen(a), 1);
  CAF_CHECK_EQUAL(tasks_of(first, "b"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
  // A committer that does not serve the workflow's shard (another node owns it) applies
  // the completion but does not evaluate it: the end waits unseen, and its row waits.
  auto [second, a2] = started_and_leased();
  core.serve({});
  report(a2);
  CAF_CHECK_EQUAL(tasks_of(second, "b"), 0);
  CAF_CHECK_EQUAL(seen(a2), 0); // ended, not yet reacted to
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        store::params::of(second)),
                  1);
  core.serve({0});
  for (int i = 0; i < 3 && count(R"(SELECT count(*) FROM "DecideQueues")") > 0; ++i)
    core.run({});
  CAF_CHECK_EQUAL(tasks_of(second, "b"), 1);
  CAF_CHECK_EQUAL(seen(a2), 1);
}

CAF_TEST(I3 an end a batch applies without evaluating it is unseen before the batch commits) {
  // The batch evaluates its start (a shard the committer decides for) but only applies the
  // completion (its workflow's shard is another committer's). Its decisions' writes are then
  // not the transaction's last: the end, stamped seen with the completion, must be unseen
  // before the COMMIT, not after it.
  engine::decider_core core{2, db->dsn(), 1};
  core.serve({0, 1});
  auto req = two_in(1, 2);
  NF_REQUIRE_OK(store::start_workflow(conn, req, 2));
  core.run({});
  auto a = lease("work");
  CAF_REQUIRE_EQUAL(a.size(), 1u);
  core.serve({0});
  engine::batch_input in;
  in.completions.push_back(completed(a[0], {{"y", 1}}));
  auto next = two_in(0, 2);
  in.starts.push_back(next);
  auto out = core.run(in);
  CAF_REQUIRE_EQUAL(out.starts.size(), 1u);
  NF_REQUIRE_OK(out.starts[0]);
  CAF_REQUIRE_EQUAL(out.completions.size(), 1u);
  NF_REQUIRE_OK(out.completions[0]);
  CAF_CHECK_EQUAL(out.stats.workflows, 1u);
  CAF_CHECK_EQUAL(tasks_of(next.id->str(), "a"), 1);
  // Applied, not yet reacted to: ended, unseen, and its workflow due.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                             AND "status" = 'COMPLETED' AND "deciderSeenAt" IS NULL)",
                        store::params::of(a[0].task)),
                  1);
  CAF_CHECK_EQUAL(tasks_of(req.id->str(), "b"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        store::params::of(*req.id)),
                  1);
  core.serve({0, 1});
  for (int i = 0; i < 3 && count(R"(SELECT count(*) FROM "DecideQueues")") > 0; ++i)
    core.run({});
  CAF_CHECK_EQUAL(tasks_of(req.id->str(), "b"), 1);
}

namespace {

/// A decide committer of one partition whose decisions lease "work" to a parked poll.
struct leasing_core {
  std::shared_ptr<engine::waiting_polls> polls = std::make_shared<engine::waiting_polls>();
  /// The node's lease memory, shared with its lessors.
  std::shared_ptr<engine::lease_memory> leases = std::make_shared<engine::lease_memory>();
  engine::decider_core core;

  explicit leasing_core(const std::string& dsn) : core(1, dsn, 8, polls, leases) {
    core.serve({0});
  }

  /// Parks a poll of "work" whose leases arm a start-to-close timer.
  void park(int64_t id, int lease_seconds = 600) {
    engine::waiting_poll p;
    p.poll = id;
    p.request.queue = "work";
    p.request.worker_id = "w" + std::to_string(id);
    p.request.lease_seconds = lease_seconds;
    p.request.start_to_close_seconds = 300;
    polls->offer(std::move(p));
  }

  /// Starts "two" with a poll parked: its first task is leased in the start's decision.
  std::pair<std::string, store::leased_task> start_leased(int64_t poll,
                                                          int lease_seconds = 600) {
    park(poll, lease_seconds);
    engine::batch_input in;
    auto req = two_in(0, 1);
    in.starts.push_back(req);
    auto out = core.run(in);
    CAF_REQUIRE_EQUAL(out.lent.size(), 1u);
    CAF_REQUIRE_EQUAL(out.lent[0].tasks.size(), 1u);
    return {req.id->str(), out.lent[0].tasks[0]};
  }

  /// A batch of the one report `r`.
  engine::batch_output report(const store::task_result& r) {
    engine::batch_input in;
    in.completions.push_back(r);
    auto out = core.run(in);
    CAF_REQUIRE_EQUAL(out.completions.size(), 1u);
    return out;
  }
};

bool lease_lost(const caf::expected<std::string>& answer) {
  return !answer && nf::code_of(answer.error()) == nf::errc::lease_lost;
}

} // namespace

// The completion of a task leased in its decision is written from what that decision
// knew (lease_memory), with no read of its rows: the writes still finish the task, drop its
// queue row and cancel every timer it has, in whatever hour they fire.
namespace {

/// A workflow started and decided, whose first task a lessor's lease transaction took, with
/// that lease's facts given out to `facts` (null: none).
std::pair<std::string, store::leased_task>
lessor_leased(engine::decider_core& core, std::vector<store::lease_facts>* facts,
                   store::connection& conn) {
  store::start_request req;
  req.name = "two";
  auto started = store::start_workflow(conn, req, 1);
  NF_REQUIRE_OK(started);
  core.run({});
  auto policy = store::load_queue_policy(conn, default_namespace, "work");
  NF_REQUIRE_OK(policy);
  store::lease_request r;
  r.queue = "work";
  r.worker_id = "lessor";
  r.lease_seconds = policy->lease_seconds;
  r.start_to_close_seconds = policy->start_to_close_seconds;
  r.timers_within_s = policy->timers_within_s;
  auto leased = store::lease_batches(conn, {r}, facts);
  NF_REQUIRE_OK(leased);
  CAF_REQUIRE_EQUAL(leased->front().size(), 1u);
  return {started->id.str(), leased->front().front()};
}

} // namespace

CAF_TEST(a completion of a task its own decision leased is written without reading its lease) {
  task_defs(R"([{"name": "work", "retryCount": 0, "responseTimeoutSeconds": 300,
                 "timeoutSeconds": 300, "pollTimeoutSeconds": 7200,
                 "totalTimeoutSeconds": 86400}])");
  leasing_core c{db->dsn()};
  auto [wf, a] = c.start_leased(1);
  auto pending_timers = [&](const store::leased_task& t) {
    return count(R"(SELECT count(*) FROM "Timers" WHERE "taskId" = $1 AND "claimedAt" IS NULL)",
                 store::params::of(t.task));
  };
  // startToClose (5 minutes), scheduleToStart (2 hours) and taskTimeout (a day ahead).
  CAF_CHECK_EQUAL(pending_timers(a), 3);
  auto report = [&](const store::leased_task& t) {
    auto out = c.report(completed(t, {{"y", 1}}));
    NF_REQUIRE_OK(out.completions[0]);
    CAF_CHECK_EQUAL(out.stats.attempts, 1);
    return out.stats.recalled;
  };
  CAF_CHECK_EQUAL(report(a), 1u);
  CAF_CHECK_EQUAL(pending_timers(a), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1)",
                        store::params::of(a.task)),
                  0);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text FROM "TaskExecutions" WHERE "id" = $1)",
                         store::params::of(a.task)),
                  "COMPLETED");
  CAF_CHECK_EQUAL(tasks_of(wf, "b"), 1);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "payload"->>'attempt' FROM "WorkflowEvents"
                            WHERE "workflowId" = $1 AND "eventType" = 'TASK_COMPLETED')",
                         store::params::of(wf)),
                  "0");
  // I8: the history has no gap.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                        store::params::of(wf)),
                  count(R"(SELECT "lastSeq" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        store::params::of(wf)));
  // Asked once: a second report of the same lease reads it, and finds it spent.
  auto late = c.report(completed(a, {{"y", 3}}));
  CAF_CHECK(lease_lost(late.completions[0]));
  CAF_CHECK_EQUAL(late.stats.recalled, 0u);
  // A lease that gave out no facts (made elsewhere): its completion reads its rows.
  auto [other, b] = lessor_leased(c.core, nullptr, conn);
  CAF_CHECK_EQUAL(report(b), 0u);
  CAF_CHECK_EQUAL(tasks_of(other, "b"), 1);
  // The node's lessor gives out its leases' facts (the timers' reach from the definition):
  // their completions are written without a read too, and reach every timer.
  std::vector<store::lease_facts> facts;
  auto [third, d] = lessor_leased(c.core, &facts, conn);
  CAF_REQUIRE_EQUAL(facts.size(), 1u);
  c.leases->remember(std::move(facts));
  CAF_CHECK_EQUAL(pending_timers(d), 3);
  CAF_CHECK_EQUAL(report(d), 1u);
  CAF_CHECK_EQUAL(pending_timers(d), 0);
  CAF_CHECK_EQUAL(tasks_of(third, "b"), 1);
}

// A report that comes when its lease has expired (or is about to) is likely late: the lease
// may be swept or taken by now, and writing from what was remembered would cost the batch a
// rolled-back attempt. Its rows are read instead, and it is applied if the lease still holds.
CAF_TEST(a report after its remembered lease expired reads the lease instead) {
  leasing_core c{db->dsn()};
  auto [wf, a] = c.start_leased(1, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds{1200});
  auto out = c.report(completed(a, {{"y", 1}}));
  NF_REQUIRE_OK(out.completions[0]);  // nothing swept it: the lease still holds
  CAF_CHECK_EQUAL(out.stats.recalled, 0u);
  CAF_CHECK_EQUAL(out.stats.attempts, 1);
  CAF_CHECK_EQUAL(tasks_of(wf, "b"), 1);
}

// The starts and the remembered completions of a batch go with the claim, in one pipeline
// whose first result is the starts': both are applied, and both workflows decided.
CAF_TEST(a batch of starts and remembered completions is applied with its claim) {
  leasing_core c{db->dsn()};
  auto [wf, a] = c.start_leased(1);
  engine::batch_input in;
  in.completions.push_back(completed(a, {{"y", 1}}));
  auto next = two_in(0, 1);
  in.starts.push_back(next);
  auto out = c.core.run(in);
  CAF_REQUIRE_EQUAL(out.starts.size(), 1u);
  NF_REQUIRE_OK(out.starts[0]);
  CAF_CHECK(out.starts[0]->created);
  CAF_REQUIRE_EQUAL(out.completions.size(), 1u);
  NF_REQUIRE_OK(out.completions[0]);
  CAF_CHECK_EQUAL(out.stats.recalled, 1u);
  CAF_CHECK_EQUAL(out.stats.workflows, 2u);
  CAF_CHECK_EQUAL(tasks_of(wf, "b"), 1);
  CAF_CHECK_EQUAL(tasks_of(next.id->str(), "a"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
}

// I5 with the lease memory: a remembered lease that expired and went to another worker
// fails the writes' re-check under their locks; the attempt is rolled back, and its retry
// reads the lease and answers "lease lost". Nothing of the report is written.
CAF_TEST(I5 a remembered lease that has moved since is lost and nothing is written) {
  leasing_core c{db->dsn()};
  auto [wf, a] = c.start_leased(1);
  sql(R"(UPDATE "TaskQueues" SET "leaseToken" = uuidv7(), "leasedBy" = 'other'
          WHERE "taskId" = $1)",
      store::params::of(a.task.str()));
  auto events = count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                      store::params::of(wf));
  auto out = c.report(completed(a, {{"y", 1}}));
  CAF_CHECK(lease_lost(out.completions[0]));
  CAF_CHECK_EQUAL(out.stats.attempts, 2);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "status"::text FROM "TaskExecutions" WHERE "id" = $1)",
                         store::params::of(a.task.str())),
                  "IN_PROGRESS");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "taskId" = $1
                             AND "leasedBy" = 'other')",
                        store::params::of(a.task.str())),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                        store::params::of(wf)),
                  events);
  CAF_CHECK_EQUAL(tasks_of(wf, "b"), 0);
}

CAF_TEST(a burst larger than one transaction takes is cut into batches and all is answered) {
  // After a busy batch the committer waits 100 ms, so the rest of each burst is
  // pending at once: more starts and completions than one transaction takes.
  auto d = decider(3600000, {{"decider.group_commit_us", "100000"},
                             {"decider.group_commit_from_requests", "2"}});
  constexpr int n = 1300;
  caf::scoped_actor client{sys};
  auto burst = [&](auto make) {
    for (int i = 0; i < n; ++i)
      client->send(d, make(i));
    int ok = 0;
    std::string first_error;
    client->receive_for(ok, n)(
      [&](const msg::start_reply&) {}, [&](const std::string&) {},
      [&](caf::error& err) {
        if (first_error.empty())
          first_error = nf::message_of(err);
      });
    return first_error;
  };
  CAF_CHECK_EQUAL(burst([](int i) {
                    msg::start_request r;
                    r.workflow_name = "two";
                    r.input_json = R"({"x": )" + std::to_string(i) + "}";
                    return caf::make_message(start_atom_v, std::move(r));
                  }),
                  "");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), n);
  CAF_REQUIRE_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "queueName" = 'work')"), n);
  auto leased = lease("work", 1000);
  auto more = lease("work", 1000);
  leased.insert(leased.end(), more.begin(), more.end());
  CAF_REQUIRE_EQUAL(leased.size(), static_cast<size_t>(n));
  CAF_CHECK_EQUAL(burst([&](int i) {
                    return caf::make_message(complete_atom_v, result(leased[i], R"({"y": 1})"));
                  }),
                  "");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'a'
                             AND "status" = 'COMPLETED')"),
                  n);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues" WHERE "queueName" = 'next')"), n);
}

CAF_TEST(I9 with no hint at all the periodic poll alone finishes a workflow) {
  // Starts and completions go through the store (the worker path), never the
  // decider, and nothing nudges it: only its poll sees the "DecideQueues" rows.
  auto d = decider(20);
  store::start_request req;
  req.name = "two";
  req.input = boost::json::object{{"x", 3}};
  auto started = store::start_workflow(conn, req, 1);
  NF_REQUIRE_OK(started);
  auto wf = started->id.str();
  std::vector<store::leased_task> a;
  CAF_REQUIRE(test::wait_until([&] {
    a = lease("work");
    return !a.empty();
  }));
  auto r = completed(a[0], {{"y", 4}});
  NF_REQUIRE_OK(store::complete_task(conn, r));
  std::vector<store::leased_task> b;
  CAF_REQUIRE(test::wait_until([&] {
    b = lease("next");
    return !b.empty();
  }));
  r = completed(b[0], {{"z", 5}});
  NF_REQUIRE_OK(store::complete_task(conn, r));
  CAF_CHECK(wait_status(wf, "COMPLETED"));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                         store::params::of(wf)),
                  R"({"result": 5})");
}

CAF_TEST(I1 I4 I9 two deciders owning the same partition never duplicate a step) {
  // Overlapping owners (a failover): both poll the same shard every 10 ms and are
  // nudged constantly; every evaluation is fenced by the version (I4), every insert
  // by the identity (I1), so each step is scheduled and recorded exactly once.
  auto one = decider(10);
  auto two = decider(10);
  constexpr int n = 12;
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    store::start_request req;
    req.name = "two";
    auto s = store::start_workflow(conn, req, 1);
    NF_REQUIRE_OK(s);
    ids.push_back(s->id.str());
  }
  auto finished = [&] {
    return count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "status" = 'COMPLETED')");
  };
  CAF_REQUIRE(test::wait_until(
    [&] {
      for (const char* q : {"work", "next"})
        for (auto& t : lease(q, 50)) {
          NF_REQUIRE_OK(store::complete_task(conn, completed(t, {{"y", 1}, {"z", 2}})));
          caf::anon_send(one, decide_atom_v);
          caf::anon_send(two, decide_atom_v);
        }
      return finished() == n;
    },
    std::chrono::seconds{60}));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions")"), 2 * n);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "eventType" = 'TASK_SCHEDULED')"),
                  2 * n);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents"
                            WHERE "eventType" = 'WORKFLOW_COMPLETED')"),
                  n);
  // Gap-free and duplicate-free histories (I8).
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" w
                            WHERE "lastSeq" <> (SELECT count(DISTINCT "seq") FROM "WorkflowEvents" e
                                                 WHERE e."workflowId" = w."id")
                               OR "lastSeq" <> (SELECT count(*) FROM "WorkflowEvents" e
                                                 WHERE e."workflowId" = w."id"))"),
                  0);
}

CAF_TEST(a signal delivered to a waiting workflow completes its WAIT task) {
  workflow_def(R"({"name": "signalled", "version": 1, "tasks": [
    {"name": "w", "taskReferenceName": "w", "type": "WAIT", "inputParameters": {"signal": "go"}},
    {"name": "work", "taskReferenceName": "a", "type": "SIMPLE",
     "inputParameters": {"x": "${w.output.payload.v}"}}]})");
  auto d = decider();
  auto wf = decider_fixture::start(d, "signalled");
  NF_REQUIRE_OK(wf);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'w'
                             AND "status" = 'IN_PROGRESS')"),
                  1);
  NF_REQUIRE_OK(store::deliver_signal(conn, workflow_id{wf->workflow_id}, "go",
                                      boost::json::object{{"v", 9}}));
  caf::anon_send(d, decide_atom_v);
  auto a = lease_one("work");
  CAF_CHECK_EQUAL(a.input, R"({"x": 9})");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"->>'signalSeq' FROM "TaskExecutions"
                             WHERE "refName" = 'w')"),
                  scalar(R"(SELECT "seq"::text FROM "WorkflowEvents"
                             WHERE "eventType" = 'SIGNAL_RECEIVED')"));
}

CAF_TEST(a WAIT whose timer fired after the batch began is decided with the clock after the claim) {
  // The batch's transaction starts before the WAIT falls due and claims the timer's
  // wake-up after it fired: decided with the transaction's start time, the WAIT
  // would look not yet due, and its wake-up would be spent with nothing left to
  // wake it (the poll interval here is an hour).
  workflow_def(R"({"name": "pause", "version": 1, "tasks": [
    {"name": "w", "taskReferenceName": "w", "type": "WAIT", "inputParameters": {"duration": "1s"}}]})");
  auto d = decider();
  NF_REQUIRE_OK(start(d, R"({"x": 1})"));
  auto a = lease_one("work");
  auto waiting = decider_fixture::start(d, "pause");
  NF_REQUIRE_OK(waiting);
  // Holding task a's row makes the next batch open its transaction and then wait
  // on the completion of a.
  auto other = db->connect();
  CAF_REQUIRE(other.exec("BEGIN"));
  CAF_REQUIRE(other.exec(R"(SELECT 1 FROM "TaskExecutions" WHERE "id" = $1 FOR UPDATE)",
                         store::params::of(a.task.str())));
  caf::anon_send(d, complete_atom_v, result(a, R"({"y": 2})"));
  CAF_REQUIRE(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock')")
           == 1;
  }));
  // The WAIT falls due meanwhile: its timer fires and commits the wake-up.
  CAF_REQUIRE(test::wait_until([&] {
    auto fired = store::fire_due_timers(conn, store::fire_options{});
    return fired && !fired->empty();
  }));
  CAF_REQUIRE(other.exec("COMMIT"));
  CAF_CHECK(wait_status(waiting->workflow_id, "COMPLETED"));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 0);
}

CAF_TEST(a definition registered after a decision is the one the next start uses) {
  auto d = decider();
  NF_REQUIRE_OK(start(d));
  CAF_REQUIRE_EQUAL(lease("work").size(), 1u);
  // The same name and version, edited in place: its first task now runs on "next".
  workflow_def(R"({"name": "two", "version": 1, "tasks": [
    {"name": "next", "taskReferenceName": "b", "type": "SIMPLE"}]})");
  auto again = start(d);
  NF_REQUIRE_OK(again);
  CAF_CHECK_EQUAL(tasks_of(again->workflow_id, "b"), 1);
  CAF_CHECK_EQUAL(tasks_of(again->workflow_id, "a"), 0);
}

CAF_TEST(a malformed completion is rejected alone and a new id lands in its shard) {
  auto d = decider();
  msg::task_result bad;
  bad.task_id = "nope";
  auto r = ask<std::string>(d, complete_atom_v, bad);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::message_of(r.error()), R"(task_id: expected a UUID, got "nope")");
  for (int p : {1, 3, 16, 1024})
    for (int s = 0; s < p; s += std::max(1, p / 7)) {
      auto id = engine::new_workflow_id_in(static_cast<int16_t>(s), p);
      CAF_CHECK(flow::is_uuid(id.str()));
      CAF_CHECK_EQUAL(shard_of(id.str(), p), s);
    }
}

CAF_TEST_FIXTURE_SCOPE_END()
