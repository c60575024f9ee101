#define CAF_SUITE store.start
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "store/decisions.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"
#include "store/sharding.hpp"
#include "store/workflows.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("start") {}
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(start_tests, fixture)

CAF_TEST(a start writes every table of DESIGN step 1 in one transaction) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  define_workflow("order", 600);
  start_request req;
  req.name = "order";
  req.input = boost::json::object{{"orderId", 42}};
  req.correlation_id = "corr-1";
  req.priority = 7;
  auto r = start_workflow(conn, req, partitions);
  NF_REQUIRE_OK(r);
  CAF_CHECK(r->created);
  CAF_CHECK_EQUAL(r->shard, shard_of(r->id, partitions));
  auto p = params::of(r->id);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions"
      WHERE "id" = $1 AND "startedAt" = uuid_extract_timestamp($1::uuid) AND "version" = 0
        AND "lastSeq" = 1 AND "status" = 'RUNNING' AND "workflowName" = 'order'
        AND "workflowVersion" = 1 AND "input" = '{"orderId": 42}' AND "variables" = '{"v": 1}'
        AND "correlationId" = 'corr-1' AND "priority" = 7 AND "endedAt" IS NULL)",
                        p),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT "shard" FROM "WorkflowExecutions" WHERE "id" = $1)", p),
                  r->shard.value());
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents"
      WHERE "workflowId" = $1 AND "seq" = 1 AND "eventType" = 'WORKFLOW_STARTED'
        AND "payload"->>'workflowName' = 'order')",
                        p),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1
                             AND "shard" = $2 AND "workflowStartedAt" = uuid_extract_timestamp($1::uuid))",
                        params::of(r->id, r->shard.value())),
                  1);
  // The timeout deadline comes from the server's clock, 600 s out.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "workflowId" = $1
      AND "kind" = 'workflowTimeout' AND "taskId" IS NULL AND "claimedAt" IS NULL
      AND "fireAt" BETWEEN now() + interval '590 seconds' AND now() + interval '600 seconds')",
                        p),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1
      AND "eventType" = 'workflow.started' AND "payload"->>'workflowId' = $1::text)",
                        p),
                  1);
}

CAF_TEST(no timer without a workflow timeout and the latest version by default) {
  define_workflow("plain");
  auto v2 = put_workflow_def_json(conn, default_namespace, R"({"name": "plain", "version": 2,
      "tasks": [{"name": "w", "taskReferenceName": "a"}]})");
  NF_REQUIRE_OK(v2);
  auto r = start("plain");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers")"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT "workflowVersion" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        params::of(r.id)),
                  2);
  start_request v1;
  v1.name = "plain";
  v1.version = 1;
  auto r1 = start_workflow(conn, v1, partitions);
  NF_REQUIRE_OK(r1);
  CAF_CHECK_EQUAL(count(R"(SELECT "workflowVersion" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        params::of(r1->id)),
                  1);
  // The history says which version each one runs.
  auto started_version = [&](const workflow_id& id) {
    return scalar(R"(SELECT "payload"->>'workflowVersion' FROM "WorkflowEvents"
                      WHERE "workflowId" = $1 AND "eventType" = 'WORKFLOW_STARTED')",
                  params::of(id));
  };
  CAF_CHECK_EQUAL(started_version(r.id), "2");
  CAF_CHECK_EQUAL(started_version(r1->id), "1");
  // A version that does not exist is not found, and its key stays free.
  start_request v3;
  v3.name = "plain";
  v3.version = 3;
  v3.idempotency_key = "plain-3";
  auto r3 = start_workflow(conn, v3, partitions);
  CAF_REQUIRE(!r3);
  CAF_CHECK_EQUAL(nf::message_of(r3.error()), R"(workflow definition "plain" version 3 not found)");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "IdempotencyKeys" WHERE "key" = 'plain-3')"), 0);
}

// I7 has nothing to deliver while no webhook sink is enabled: the history is written, the
// outbox is not (a row stored published would never be read). A sink enabled later receives
// the events written after it.
CAF_TEST(a start writes no outbox row while no webhook sink is enabled) {
  define_workflow("order");
  auto quiet = start("order");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                        params::of(quiet.id)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents")"), 0);
  test::enable_webhook_sink(conn);
  auto heard = start("order");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1
                             AND "publishedAt" IS NULL)",
                        params::of(heard.id)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents")"), 1);
}

CAF_TEST(the same idempotency key returns the same workflow per namespace) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  define_workflow("order");
  auto first = start("order", "k-1");
  auto again = start("order", "k-1");
  CAF_CHECK(first.created);
  CAF_CHECK(!again.created);
  CAF_CHECK_EQUAL(again.id, first.id);
  CAF_CHECK_EQUAL(again.shard, first.shard);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents")"), 1);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "idempotencyKey" FROM "WorkflowExecutions")"), "k-1");
  // Another namespace with the same key is another workflow.
  auto other = scalar(R"(INSERT INTO "Namespaces" ("name") VALUES ('start-other') RETURNING "id")");
  CAF_REQUIRE(put_workflow_def_json(conn, namespace_id{other}, R"({"name": "order",
      "tasks": [{"name": "w", "taskReferenceName": "a"}]})"));
  start_request req;
  req.ns = namespace_id{other};
  req.name = "order";
  req.idempotency_key = "k-1";
  auto there = start_workflow(conn, req, partitions);
  NF_REQUIRE_OK(there);
  CAF_CHECK(there->created);
  CAF_CHECK_NOT_EQUAL(there->id, first.id);
  sql(R"(DELETE FROM "WorkflowDefinitions" WHERE "namespaceId" = $1)", params::of(other));
  sql(R"(DELETE FROM "Namespaces" WHERE "id" = $1)", params::of(other));
}

CAF_TEST(a batch of 100 starts is one transaction with a result per request) {
  test::enable_webhook_sink(conn); // the outbox rows are checked below
  define_workflow("order", 60);
  std::vector<start_request> reqs;
  for (int i = 0; i < 100; ++i) {
    start_request r;
    r.name = "order";
    r.input = boost::json::object{{"i", i}};
    if (i % 10 == 0)
      r.idempotency_key = "batch-" + std::to_string(i % 20); // batch-0 and batch-10 repeat
    reqs.push_back(std::move(r));
  }
  reqs[5].name = "no_such_workflow";
  reqs[6].priority = 100;
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto rs = start_workflows(tx, reqs, partitions);
  NF_REQUIRE_OK(rs);
  CAF_REQUIRE(tx.commit());
  CAF_REQUIRE_EQUAL(rs->size(), 100u);
  CAF_CHECK_EQUAL(nf::code_of((*rs)[5].error()), nf::errc::not_found);
  CAF_CHECK_EQUAL(nf::message_of((*rs)[5].error()),
                  R"(workflow definition "no_such_workflow" not found)");
  CAF_CHECK_EQUAL(nf::code_of((*rs)[6].error()), nf::errc::invalid);
  CAF_CHECK_EQUAL(nf::message_of((*rs)[6].error()), "priority: expected an integer from 0 to 99, got 100");
  std::set<std::string> ids;
  int created = 0;
  for (size_t i = 0; i < rs->size(); ++i) {
    if (i == 5 || i == 6)
      continue;
    CAF_REQUIRE((*rs)[i]);
    ids.insert((*rs)[i]->id.str());
    created += (*rs)[i]->created ? 1 : 0;
  }
  // 98 valid requests; keys batch-0 and batch-10 each repeat 5 times (one created each).
  CAF_CHECK_EQUAL(ids.size(), 98u - 8u);
  CAF_CHECK_EQUAL(created, 90);
  CAF_CHECK_EQUAL((*rs)[20]->id, (*rs)[0]->id);
  CAF_CHECK_EQUAL((*rs)[30]->id, (*rs)[10]->id);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 90);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 90);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers")"), 90);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents")"), 90);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "seq" = 1)"), 90);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "IdempotencyKeys")"), 2);
  // Every shard computed by SQL matches nf::shard_of.
  auto rows = sql(R"(SELECT "id", "shard" FROM "WorkflowExecutions")");
  for (int i = 0; i < rows.rows(); ++i)
    CAF_CHECK_EQUAL(shard_of(rows.text(i, 0), partitions), rows.i64(i, 1));
}

CAF_TEST(a start in a shard its caller decides writes no DecideQueues row) {
  define_workflow("order");
  std::vector<start_request> reqs(200);
  for (auto& r : reqs)
    r.name = "order";
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto rs = start_workflows(tx, reqs, partitions, {shard_id{0}, shard_id{2}});
  NF_REQUIRE_OK(rs);
  CAF_REQUIRE(tx.commit());
  int decided_here = 0;
  for (const auto& r : *rs) {
    CAF_REQUIRE(r);
    auto queued = count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        params::of(r->id.str()));
    bool here = r->shard.value() == 0 || r->shard.value() == 2;
    decided_here += here ? 1 : 0;
    CAF_CHECK_EQUAL(queued, here ? 0 : 1);
  }
  CAF_CHECK(decided_here > 0 && decided_here < 200); // both kinds were made
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 200);
}

CAF_TEST(the executions a start returns are what a read of them in its transaction finds) {
  define_workflow("order", 600);
  std::vector<start_request> reqs(3);
  for (auto& r : reqs)
    r.name = "order";
  // Keys out of order and a nested object: the returned input is Postgres's text of it.
  reqs[0].input = boost::json::object{{"zeta", 1}, {"alpha", boost::json::object{{"b", 2}}}};
  reqs[0].correlation_id = "corr-7";
  reqs[0].priority = 9;
  reqs[1].idempotency_key = "k-1";
  reqs[2].idempotency_key = "k-1"; // loses to reqs[1]: created, but not returned
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  auto plan = plan_starts(reqs, partitions);
  pipeline p{conn};
  CAF_REQUIRE(add_starts(p, plan));
  auto written = p.run();
  NF_REQUIRE_OK(written);
  std::vector<workflow_snapshot> returned;
  auto rs = starts_of(tx, reqs, std::move(plan), written->front(), &returned);
  NF_REQUIRE_OK(rs);
  CAF_REQUIRE_EQUAL(returned.size(), 2u);
  std::vector<workflow_id> ids;
  for (const auto& r : returned)
    ids.push_back(r.id);
  auto read = load_snapshots(tx, ids);
  NF_REQUIRE_OK(read);
  CAF_REQUIRE_EQUAL(read->size(), 2u);
  for (const auto& got : returned) {
    auto it = std::find_if(read->begin(), read->end(),
                           [&](const workflow_snapshot& s) { return s.id == got.id; });
    CAF_REQUIRE(it != read->end());
    const auto& want = *it;
    CAF_CHECK_EQUAL(got.started_at_ms, want.started_at_ms);
    CAF_CHECK_EQUAL(got.ns, want.ns);
    CAF_CHECK_EQUAL(got.workflow_name, want.workflow_name);
    CAF_CHECK_EQUAL(got.workflow_version, want.workflow_version);
    CAF_CHECK(got.status == want.status);
    CAF_CHECK_EQUAL(got.input, want.input);
    CAF_CHECK_EQUAL(got.variables, want.variables);
    CAF_CHECK(got.output == want.output);
    CAF_CHECK(got.correlation_id == want.correlation_id);
    CAF_CHECK(got.idempotency_key == want.idempotency_key);
    CAF_CHECK_EQUAL(got.priority, want.priority);
    CAF_CHECK(!got.parent_workflow_id && !want.parent_workflow_id);
    CAF_CHECK_EQUAL(got.shard, want.shard);
    CAF_CHECK_EQUAL(got.last_seq, want.last_seq);
    CAF_CHECK(got.ended_at_ms == want.ended_at_ms);
    CAF_CHECK_EQUAL(got.version, want.version);
    CAF_CHECK(got.tasks.empty() && want.tasks.empty());
  }
  CAF_CHECK_EQUAL(returned[0].input, R"({"zeta": 1, "alpha": {"b": 2}})");
  CAF_CHECK_EQUAL(returned[0].priority, 9);
  CAF_CHECK(returned[1].idempotency_key == std::optional<std::string>{"k-1"});
  CAF_CHECK_EQUAL((*rs)[2]->id, (*rs)[1]->id);
  CAF_CHECK(!(*rs)[2]->created);
}

CAF_TEST(I10 fifty concurrent starts with one key make one workflow) {
  define_workflow("order");
  constexpr int n = 50;
  std::vector<std::string> got(n);
  std::vector<int> created(n, -1);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      auto c = db->connect();
      ++ready;
      while (ready.load() < n) // all connected before anyone starts: a real race
        std::this_thread::yield();
      start_request req;
      req.name = "order";
      req.idempotency_key = "same";
      auto r = start_workflow(c, req, partitions);
      if (r) {
        got[static_cast<size_t>(i)] = r->id.str();
        created[static_cast<size_t>(i)] = r->created ? 1 : 0;
      }
    });
  for (auto& t : threads)
    t.join();
  std::set<std::string> ids(got.begin(), got.end());
  CAF_CHECK_EQUAL(ids.size(), 1u);
  CAF_CHECK(!ids.begin()->empty()); // every start succeeded
  CAF_CHECK_EQUAL(std::count(created.begin(), created.end(), 1), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues")"), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents")"), 1);
}

CAF_TEST(a caller made id fixes the shard before any SQL) {
  define_workflow("order");
  start_request req;
  req.name = "order";
  req.id = workflow_id{new_uuidv7()};
  auto r = start_workflow(conn, req, partitions);
  NF_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(r->id, *req.id);
  CAF_CHECK_EQUAL(r->shard, shard_of(*req.id, partitions));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "id" = $1
                             AND "startedAt" = uuid_extract_timestamp($1::uuid) AND "shard" = $2)",
                        params::of(*req.id, r->shard.value())),
                  1);
  // Not a uuidv7: "startedAt" could not derive from it.
  req.id = workflow_id{"6ba7b810-9dad-11d1-80b4-00c04fd430c8"};
  auto bad = start_workflow(conn, req, partitions);
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::message_of(bad.error()),
                  R"(id: expected a uuidv7, got "6ba7b810-9dad-11d1-80b4-00c04fd430c8")");
}

CAF_TEST(a start request is read from JSON with every field checked) {
  auto r = read_start_request(R"({"name": "order", "version": 3, "input": {"a": [1, null]},
      "correlationId": "c", "idempotencyKey": "k", "priority": 5})");
  NF_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(r->name, "order");
  CAF_CHECK_EQUAL(r->version, 3);
  CAF_CHECK_EQUAL(r->priority, 5);
  CAF_CHECK_EQUAL(r->correlation_id, std::string{"c"});
  CAF_CHECK_EQUAL(r->idempotency_key, std::string{"k"});
  CAF_CHECK(r->input.at("a").as_array().at(1).is_null());
}

CAF_TEST_FIXTURE_SCOPE_END()
