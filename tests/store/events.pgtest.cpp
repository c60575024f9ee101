#define CAF_SUITE store.events
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <boost/json.hpp>

#include "store/events.hpp"
#include "store/json.hpp"
#include "store/pg/transaction.hpp"
#include "tests/store/decide_fixture.hpp"
#include "tests/support/notifications.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("events") { define_workflow("order"); }
};

workflow_events three(const workflow_id& id, const std::string& who) {
  workflow_events w{id, {}};
  for (int i = 0; i < 3; ++i)
    w.events.push_back({"SIGNAL_RECEIVED", std::nullopt, std::nullopt,
                        json(boost::json::object{{"who", who}, {"i", i}})});
  return w;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(events_tests, fixture)

CAF_TEST(I8 interleaved writers get gap free seqs in commit order not clock order) {
  auto wf = start("order").id; // seq 1 is WORKFLOW_STARTED
  auto b = db->connect();
  auto c = db->connect();
  auto observer = db->connect();
  // B and C start their transactions first: their clocks (now()) precede A's.
  auto started_at = [](connection& x) {
    auto r = x.exec("SELECT now()::text");
    CAF_REQUIRE(r);
    return r->str(0, 0);
  };
  transaction tb{b}, tc{c};
  CAF_REQUIRE(tb.begin());
  auto b_start = started_at(b);
  CAF_REQUIRE(tc.begin());
  auto c_start = started_at(c);
  // A appends and holds the execution row until it commits.
  transaction ta{conn};
  CAF_REQUIRE(ta.begin());
  auto a_start = started_at(conn);
  auto a_last = append_events(ta, {three(wf, "a")});
  NF_REQUIRE_OK(a_last);
  CAF_CHECK_EQUAL(a_last->front(), 4);
  // B and C append concurrently: both wait for A's row lock.
  std::atomic<bool> b_done{false}, c_done{false};
  caf::expected<std::vector<int64_t>> b_last{std::vector<int64_t>{}};
  caf::expected<std::vector<int64_t>> c_last{std::vector<int64_t>{}};
  std::thread wb{[&] {
    b_last = append_events(tb, {three(wf, "b")});
    b_done = true;
  }};
  CAF_CHECK(wait_until_blocked(observer, b.backend_pid()));
  std::thread wc{[&] {
    c_last = append_events(tc, {three(wf, "c")});
    c_done = true;
  }};
  CAF_CHECK(wait_until_blocked(observer, c.backend_pid()));
  CAF_REQUIRE(ta.commit());
  // Exactly one of them gets the row next; the other keeps waiting behind it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (!b_done && !c_done && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  CAF_REQUIRE(b_done || c_done);
  bool b_first = b_done;
  auto& first_tx = b_first ? tb : tc;
  auto& second_tx = b_first ? tc : tb;
  auto& first_last = b_first ? b_last : c_last;
  auto& second_last = b_first ? c_last : b_last;
  auto& second_thread = b_first ? wc : wb;
  auto& first_thread = b_first ? wb : wc;
  first_thread.join();
  NF_REQUIRE_OK(first_last);
  CAF_CHECK_EQUAL(first_last->front(), 7);
  CAF_CHECK(wait_until_blocked(observer, (b_first ? c : b).backend_pid()));
  // The first rolls back: its seqs go with its row lock, and the second reuses them.
  first_tx.rollback();
  second_thread.join();
  NF_REQUIRE_OK(second_last);
  CAF_CHECK_EQUAL(second_last->front(), 7);
  CAF_REQUIRE(second_tx.commit());
  // A late writer continues right after the last committed seq.
  transaction te{observer};
  CAF_REQUIRE(te.begin());
  auto e_last = append_events(te, {three(wf, "e")});
  NF_REQUIRE_OK(e_last);
  CAF_REQUIRE(te.commit());
  CAF_CHECK_EQUAL(e_last->front(), 10);
  auto rows = sql(R"(SELECT "seq", "payload"->>'who' FROM "WorkflowEvents"
                      WHERE "workflowId" = $1 ORDER BY "seq")",
                  params::of(wf));
  CAF_REQUIRE_EQUAL(rows.rows(), 10);
  for (int i = 0; i < rows.rows(); ++i)
    CAF_CHECK_EQUAL(rows.i64(i, 0), i + 1); // 1..n, no gap, no duplicate
  const std::string second = b_first ? "c" : "b";
  CAF_CHECK_EQUAL(rows.str(3, 1), "a");
  CAF_CHECK_EQUAL(rows.str(6, 1), second);
  CAF_CHECK_EQUAL(rows.str(9, 1), "e");
  CAF_CHECK_EQUAL(count(R"(SELECT "lastSeq" FROM "WorkflowExecutions" WHERE "id" = $1)",
                        params::of(wf)),
                  10);
  // The second writer's transaction began before A's, yet its events have later seqs:
  // seq comes from the row lock, not from a clock.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM (VALUES ($1::timestamptz)) v(t)
                            WHERE v.t < $2::timestamptz)",
                        params::of(b_first ? c_start : b_start, a_start)),
                  1);
  // "at" is read when the row is made, under the lock (store/events.cpp), so it grows with
  // seq; with now(), the transaction's start, the second writer's events were earlier.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" x JOIN "WorkflowEvents" y
                             ON y."workflowId" = x."workflowId" AND y."seq" = x."seq" + 1
                            WHERE x."workflowId" = $1 AND y."at" < x."at")",
                        params::of(wf)),
                  0);
}

CAF_TEST(many threads appending to one workflow produce one to n) {
  auto wf = start("order").id;
  constexpr int writers = 8, rounds = 10;
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int i = 0; i < writers; ++i)
    ts.emplace_back([&, i] {
      auto c = db->connect();
      for (int r = 0; r < rounds; ++r) {
        auto ok = perform(c, [&](transaction& tx) {
          return append_events(tx, {three(wf, std::to_string(i))});
        });
        if (!ok)
          ++failures;
      }
    });
  for (auto& t : ts)
    t.join();
  CAF_CHECK_EQUAL(failures.load(), 0);
  constexpr int n = 1 + writers * rounds * 3;
  CAF_CHECK_EQUAL(count(R"(SELECT count(DISTINCT "seq") FROM "WorkflowEvents")"), n);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents")"), n);
  CAF_CHECK_EQUAL(count(R"(SELECT max("seq") FROM "WorkflowEvents")"), n);
  // Each transaction's three events are contiguous: the row lock covers the whole batch.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM (
      SELECT "payload"->>'who' AS who, ("seq" - 2) / 3 AS grp FROM "WorkflowEvents" WHERE "seq" > 1
      GROUP BY 1, 2) g)"),
                  writers * rounds);
}

CAF_TEST(every event row is announced once as workflow and seq when its transaction commits) {
  auto wf = start("order").id; // seq 1, announced before the listener listens
  auto listener = db->connect();
  CAF_REQUIRE(listener.exec("LISTEN node_flow_workflow_events"));
  auto last = wf.str() + ":4";
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  NF_REQUIRE_OK(append_events(tx, {three(wf, "a")}));
  // Nothing before the commit: a listener that reads the rows it is told of finds them.
  CAF_CHECK(test::notifications_until(listener, last, std::chrono::milliseconds{300}).empty());
  CAF_REQUIRE(tx.commit());
  // One per row, in seq order, never an empty payload (a statement-level trigger's, seed 000).
  CAF_CHECK_EQUAL(test::notifications_until(listener, last),
                  (std::vector<std::string>{wf.str() + ":2", wf.str() + ":3", last}));
}

CAF_TEST(history reads after a seq in order and bounded) {
  auto wf = start("order").id;
  sql(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType",
                                       "taskDefName") VALUES ($1, $2, 'a', 'SIMPLE', 'work'))",
      params::of(wf, default_namespace));
  workflow_events w{wf, {}};
  for (int i = 0; i < 5; ++i)
    w.events.push_back({"TASK_IN_PROGRESS", std::nullopt, flow::task_identity{"a", 0, 0},
                        json(boost::json::object{{"i", i}})});
  NF_REQUIRE_OK(perform(conn, [&](transaction& tx) { return append_events(tx, {w}); }));
  auto page = read_events(conn, wf, 2, 2);
  NF_REQUIRE_OK(page);
  CAF_REQUIRE_EQUAL(page->size(), 2u);
  CAF_CHECK_EQUAL(page->at(0).seq, 3);
  CAF_CHECK_EQUAL(page->at(1).seq, 4);
  CAF_CHECK_EQUAL(page->at(0).type, "TASK_IN_PROGRESS");
  CAF_CHECK_EQUAL(page->at(0).ref_name, std::string{"a"});
  CAF_CHECK(page->at(0).task.has_value()); // resolved from the identity
  CAF_CHECK_EQUAL(page->at(0).payload, R"({"i": 1})");
  auto all = read_events(conn, wf, 0, 100000);
  NF_REQUIRE_OK(all);
  CAF_REQUIRE_EQUAL(all->size(), 6u);
  CAF_CHECK_EQUAL(all->front().type, "WORKFLOW_STARTED");
  CAF_CHECK(all->front().at_ms > 0);
  auto none = read_events(conn, wf, 6, 10);
  NF_REQUIRE_OK(none);
  CAF_CHECK(none->empty());
  auto missing = perform(conn, [&](transaction& tx) {
    return append_events(tx, {three(workflow_id{"00000000-0000-7000-8000-000000000001"}, "x")});
  });
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(nf::code_of(missing.error()), nf::errc::not_found);
}

CAF_TEST_FIXTURE_SCOPE_END()
