#define CAF_SUITE store.payloads
#include "caf/test/unit_test.hpp"

#include <boost/json.hpp>

#include "store/decide_support.hpp"
#include "store/decisions.hpp"
#include "store/events.hpp"
#include "store/json.hpp"
#include "store/lease_hand_back.hpp"
#include "store/payloads.hpp"
#include "store/pg/transaction.hpp"
#include "store/queues.hpp"
#include "store/signals.hpp"
#include "store/task_progress.hpp"
#include "store/tasks.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

/// An object whose JSON text is about `bytes` long.
boost::json::object sized(size_t bytes, const char* tag) {
  return boost::json::object{{"tag", tag}, {"blob", std::string(bytes, 'x')}};
}

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("payloads") {
    sql(R"(DELETE FROM "Payloads")");
    set_inline_max_bytes(default_inline_max_bytes);
  }
  ~fixture() { set_inline_max_bytes(default_inline_max_bytes); }

  /// The whole stored row of a task, as Postgres measures it (its values detoasted).
  int64_t task_row_bytes(const task_id& t) {
    return count(R"(SELECT pg_column_size(t.*) FROM "TaskExecutions" t WHERE "id" = $1)",
                 params::of(t));
  }

  workflow_snapshot snapshot(const workflow_id& wf) {
    auto s = perform(conn, [&](transaction& tx) { return load_snapshots(tx, {wf}); });
    if (!s || s->size() != 1)
      CAF_FAIL("snapshot of " << wf.str());
    return std::move(s->front());
  }

  static const task_row& task_at(const workflow_snapshot& s, const std::string& ref) {
    for (const auto& t : s.tasks)
      if (t.identity.ref == ref)
        return t;
    CAF_FAIL("no task " << ref);
    return s.tasks.front();
  }

  void complete(const leased_task& t, const boost::json::object& output) {
    task_result r;
    r.workflow = t.workflow;
    r.task = t.task;
    r.token = t.token;
    r.outcome = task_outcome::completed;
    r.output = json(output);
    auto done = complete_task(conn, r);
    if (!done)
      CAF_FAIL("complete_task: " << nf::message_of(done.error()));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(payloads_tests, fixture)

CAF_TEST(a reported output over the threshold leaves its task row narrow and reads back whole) {
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name", "secretOutputFields")
         VALUES ('00000000-0000-0000-0000-000000000001', 'qp', '{token}'))");
  auto wf = insert_workflow();
  insert_task(wf, "big", "qp");
  insert_task(wf, "small", "qp");
  auto big = lease_one("qp");
  auto small = lease_one("qp");
  auto big_output = sized(5u << 20, "big");
  big_output["token"] = "s3cr3t";
  complete(big, big_output);
  complete(small, sized(100, "small"));

  // Out of line: the row holds a reference and stays under 1 KB; the payload is redacted as
  // an inline output would be.
  CAF_CHECK_LESS(task_row_bytes(big.task), 1024);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" t JOIN "Payloads" p
                             ON p."workflowId" = t."workflowId" AND p."id" = t."outputPayloadId"
                           WHERE t."id" = $1 AND t."output" IS NULL
                             AND p."body"->>'token' = '***'
                             AND octet_length(p."body"->>'blob') = 5242880)",
                        params::of(big.task)),
                  1);
  // Under it: inline, no reference, no payload.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                             AND "output"->>'tag' = 'small' AND "outputPayloadId" IS NULL)",
                        params::of(small.task)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Payloads" WHERE "workflowId" = $1)",
                        params::of(wf)),
                  1);

  // Every reader sees the whole value.
  auto s = snapshot(wf);
  const auto& b = task_at(s, "big");
  CAF_REQUIRE(b.output);
  CAF_CHECK(b.output_payload_id.has_value());
  auto read = boost::json::parse(*b.output).as_object();
  CAF_CHECK_EQUAL(read.at("blob").as_string().size(), 5u << 20);
  CAF_CHECK_EQUAL(read.at("token").as_string(), "***");
  CAF_CHECK(!task_at(s, "small").output_payload_id.has_value());
  CAF_CHECK(stored_out_of_line(*b.output));
  CAF_CHECK(!stored_out_of_line(*task_at(s, "small").output));
}

CAF_TEST(a decision s inputs and outputs over the threshold go out of line and a lease hands the
         input over whole) {
  set_inline_max_bytes(4096);
  auto wf = insert_workflow();
  decision_write w;
  w.id = wf;
  w.ns = default_namespace;
  w.shard = shard_id{shard_of(wf)};
  w.dequeue = false;
  w.output = json(sized(8000, "workflow"));
  task_insert queued;
  queued.identity = {"queued", 0, 0};
  queued.task_def_name = "qd";
  queued.queue = "qd";
  queued.input = json(sized(8000, "input"));
  task_insert done;
  done.identity = {"done", 0, 0};
  done.task_def_name = "inline";
  done.status = flow::task_status::completed;
  done.input = json(sized(10, "in"));
  done.output = json(sized(8000, "output"));
  w.inserts = {queued, done};
  auto applied = perform(conn, [&](transaction& tx) { return apply_decisions(tx, {w}); });
  if (!applied)
    CAF_FAIL("apply_decisions: " << nf::message_of(applied.error()));

  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                             AND pg_column_size("TaskExecutions".*) < 1024)",
                        params::of(wf)),
                  2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                             AND "refName" = 'queued' AND "input" = '{}'
                             AND "inputPayloadId" IS NOT NULL AND "outputPayloadId" IS NULL)",
                        params::of(wf)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                             AND "refName" = 'done' AND "input"->>'tag' = 'in'
                             AND "inputPayloadId" IS NULL AND "output" IS NULL
                             AND "outputPayloadId" IS NOT NULL)",
                        params::of(wf)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "id" = $1
                             AND "output" IS NULL AND "outputPayloadId" IS NOT NULL)",
                        params::of(wf)),
                  1);

  auto s = snapshot(wf);
  CAF_REQUIRE(s.output);
  CAF_CHECK_EQUAL(boost::json::parse(*s.output).at("tag").as_string(), "workflow");
  CAF_CHECK_EQUAL(boost::json::parse(task_at(s, "queued").input).at("tag").as_string(), "input");
  CAF_CHECK_EQUAL(boost::json::parse(*task_at(s, "done").output).at("tag").as_string(), "output");

  auto leased = lease_one("qd");
  auto input = boost::json::parse(leased.input).as_object();
  CAF_CHECK_EQUAL(input.at("tag").as_string(), "input");
  CAF_CHECK_EQUAL(input.at("blob").as_string().size(), 8000u);

  // The threshold is the setting's: the same values at the default stay inline.
  set_inline_max_bytes(default_inline_max_bytes);
  auto wf2 = insert_workflow();
  w.id = wf2;
  w.shard = shard_id{shard_of(wf2)};
  w.inserts = {done};
  applied = perform(conn, [&](transaction& tx) { return apply_decisions(tx, {w}); });
  CAF_REQUIRE(applied);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Payloads" WHERE "workflowId" = $1)",
                        params::of(wf2)),
                  0);
}

CAF_TEST(the output a running task reports so far is its output and its next lease reads it) {
  set_inline_max_bytes(4096);
  sql(R"(INSERT INTO "TaskDefinitions" ("namespaceId", "name", "secretOutputFields")
         VALUES ('00000000-0000-0000-0000-000000000001', 'qr', '{token}'))");
  auto wf = insert_workflow();
  insert_task(wf, "r", "qr");
  auto first = lease_one("qr");
  CAF_CHECK_EQUAL(first.output, "");
  auto so_far = sized(8000, "progress");
  so_far["token"] = "s3cr3t";
  CAF_REQUIRE(record_task_progress(
    conn, wf, first.task, boost::json::object{{"taskId", first.task.str()}, {"outputData", so_far}}));
  // Over the threshold: out of line, redacted, as a finished task's output would be.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" t JOIN "Payloads" p
                             ON p."workflowId" = t."workflowId" AND p."id" = t."outputPayloadId"
                           WHERE t."id" = $1 AND t."output" IS NULL
                             AND p."body"->>'token' = '***' AND p."body"->>'tag' = 'progress')",
                        params::of(first.task)),
                  1);
  // Given back (as a callback or an undelivered poll does): the next lease reads it whole.
  auto back = hand_back_leases(conn, {{wf, first.task, first.token}});
  CAF_REQUIRE(back);
  auto again = lease_one("qr");
  CAF_REQUIRE_EQUAL(again.task, first.task);
  auto out = boost::json::parse(again.output).as_object();
  CAF_CHECK_EQUAL(out.at("tag").as_string(), "progress");
  CAF_CHECK_EQUAL(out.at("token").as_string(), "***");
  CAF_CHECK_EQUAL(out.at("blob").as_string().size(), 8000u);
  // A task no longer running keeps what its end wrote: a late progress report changes nothing.
  complete(again, sized(10, "done"));
  CAF_REQUIRE(record_task_progress(
    conn, wf, first.task, boost::json::object{{"taskId", first.task.str()}, {"outputData", sized(10, "late")}}));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                             AND "output"->>'tag' = 'done')",
                        params::of(first.task)),
                  1);
}

CAF_TEST(an event carrying a client s value over the threshold keeps a reference in the history) {
  set_inline_max_bytes(4096);
  test::enable_webhook_sink(conn); // the outbox row still carries the whole value
  auto wf = insert_workflow();
  auto task = insert_task(wf, "a", "qe");
  CAF_REQUIRE(record_task_progress(
    conn, wf, task, boost::json::object{{"taskId", task.str()}, {"outputData", sized(8000, "progress")}}));
  CAF_REQUIRE(deliver_signal(conn, wf, "go", sized(8000, "signal")));
  CAF_REQUIRE(deliver_signal(conn, wf, "small", sized(10, "inline")));

  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "payload" = '{}' AND "payloadId" IS NOT NULL
                             AND pg_column_size("WorkflowEvents".*) < 1024)",
                        params::of(wf)),
                  2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "payloadId" IS NULL AND "payload"->'payload'->>'tag' = 'inline')",
                        params::of(wf)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1
                             AND "payload"->'data'->'payload'->>'tag' = 'signal')",
                        params::of(wf)),
                  1);

  // The history read and the decider's facts see the whole values.
  auto events = read_events(conn, wf, 0, 10);
  CAF_REQUIRE(events);
  CAF_REQUIRE_EQUAL(events->size(), 3u);
  CAF_CHECK_EQUAL(boost::json::parse((*events)[0].payload).at("outputData").at("tag").as_string(),
                  "progress");
  CAF_CHECK_EQUAL(boost::json::parse((*events)[1].payload).at("payload").at("tag").as_string(),
                  "signal");
  auto facts = perform(conn, [&](transaction& tx) { return load_history_facts(tx, {wf}); });
  CAF_REQUIRE(facts);
  const auto& signals = facts->at(wf.str()).signals;
  CAF_REQUIRE_EQUAL(signals.size(), 2u);
  CAF_CHECK_EQUAL(signals[0].name, "go");
  CAF_CHECK_EQUAL(boost::json::parse(signals[0].payload).at("blob").as_string().size(), 8000u);
  CAF_CHECK_EQUAL(boost::json::parse(signals[1].payload).at("tag").as_string(), "inline");
}

CAF_TEST_FIXTURE_SCOPE_END()
