#define CAF_SUITE store.bad_input
#include "caf/test/unit_test.hpp"

#include <boost/json.hpp>

#include "store/decisions.hpp"
#include "store/definitions.hpp"
#include "store/json.hpp"
#include "store/pg/transaction.hpp"
#include "store/workflows.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("bad_input") { define_workflow("order"); }

  /// `op` must fail with `code` and a message containing `needle`, writing nothing.
  template <class Op>
  void rejects(Op op, errc code, const std::string& needle) {
    auto before = table_counts();
    auto r = op();
    if (r) {
      CAF_FAIL("expected an error containing \"" << needle << "\", got success");
      return;
    }
    CAF_CHECK_EQUAL(nf::code_of(r.error()), code);
    auto msg = nf::message_of(r.error());
    if (msg.find(needle) == std::string::npos)
      CAF_FAIL("message \"" << msg << "\" does not contain \"" << needle << "\"");
    CAF_CHECK(table_counts() == before);
  }

  caf::expected<start_result> start_json(const std::string& text) {
    auto req = read_start_request(text);
    if (!req)
      return std::move(req.error());
    return start_workflow(conn, *req, partitions);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(bad_input_tests, fixture)

CAF_TEST(malformed JSON is rejected before any write) {
  rejects([&] { return put_workflow_def_json(conn, default_namespace, R"({"name": "x", )"); },
          nf::errc::invalid, "$: invalid JSON");
  rejects([&] { return put_task_defs_json(conn, default_namespace, "[{]"); }, nf::errc::invalid,
          "$: invalid JSON");
  rejects([&] { return start_json(R"({"name": "order", "input": {)"); }, nf::errc::invalid,
          "$: invalid JSON");
  rejects([&] { return start_json(R"([1, 2])"); }, nf::errc::invalid,
          "$: expected a start request (an object), got an array");
}

CAF_TEST(wrong types name the field and what was expected) {
  rejects([&] { return start_json(R"({"name": "order", "input": [1]})"); }, nf::errc::invalid,
          "input: expected an object, got an array");
  rejects([&] { return start_json(R"({"name": 5})"); }, nf::errc::invalid,
          "name: expected a string, got 5");
  rejects([&] { return start_json(R"({"input": {}})"); }, nf::errc::invalid,
          "name: missing required field");
  rejects([&] { return start_json(R"({"name": "order", "priority": 1.5})"); }, nf::errc::invalid,
          "priority: expected a non-negative integer");
  rejects([&] { return start_json(R"({"name": "order", "priority": 120})"); }, nf::errc::invalid,
          "priority: expected an integer from 0 to 99, got 120");
  rejects([&] { return start_json(R"({"name": "order", "colour": "red"})"); }, nf::errc::invalid,
          "colour: unknown field");
  rejects([&] { return put_task_defs_json(conn, default_namespace, R"({"name": "t", "inputKeys": "a"})"); },
          nf::errc::invalid, "inputKeys: expected an array of strings");
  rejects([&] { return put_workflow_def_json(conn, default_namespace,
                                             R"({"name": "w", "tasks": {"a": 1}})"); },
          nf::errc::invalid, "tasks: expected an array of tasks");
}

CAF_TEST(negative or fractional counts in definitions are rejected) {
  rejects([&] { return put_task_defs_json(conn, default_namespace, R"({"name": "t", "retryCount": -3})"); },
          nf::errc::invalid, "retryCount: expected a non-negative integer");
  rejects([&] { return put_task_defs_json(conn, default_namespace,
                                          R"({"name": "t", "timeoutSeconds": 1.5})"); },
          nf::errc::invalid, "timeoutSeconds: expected a non-negative integer");
  // One bad entry of an array keeps every entry out.
  rejects([&] { return put_task_defs_json(conn, default_namespace,
                                          R"([{"name": "ok"}, {"name": "t", "concurrentExecLimit": -1}])"); },
          nf::errc::invalid, "[1].concurrentExecLimit: expected a non-negative integer");
  rejects([&] { return put_workflow_def_json(conn, default_namespace, R"({"name": "w", "version": 0,
                   "tasks": [{"name": "x", "taskReferenceName": "x"}]})"); },
          nf::errc::invalid, "version: expected an integer from 1 to 2147483647, got 0");
  rejects([&] { return put_task_defs_json(conn, default_namespace,
                                          R"({"name": "t", "rateLimitFrequencyInSeconds": 0})"); },
          nf::errc::invalid, "rateLimitFrequencyInSeconds: expected an integer from 1");
  // Built in C++ rather than parsed: the same column checks apply.
  auto d = flow::task_def::unregistered("t");
  d.concurrent_exec_limit = -1;
  d.backoff_scale_factor = -2;
  rejects([&] { return put_task_defs(conn, default_namespace, {d}); }, nf::errc::invalid,
          "concurrentExecLimit: expected an integer from 0 to 2147483647, got -1");
  rejects([&] { return put_task_defs(conn, default_namespace, {d}); }, nf::errc::invalid,
          "backoffScaleFactor: expected an integer from 1 to 2147483647, got -2");
}

CAF_TEST(unknown definitions are not_found and write nothing) {
  rejects([&] { return start_json(R"({"name": "nope"})"); }, nf::errc::not_found,
          R"(workflow definition "nope" not found)");
  rejects([&] { return start_json(R"({"name": "order", "version": 9})"); }, nf::errc::not_found,
          R"(workflow definition "order" version 9 not found)");
}

CAF_TEST(NUL inside JSON input is stripped and inside a name is rejected) {
  auto r = start_json(R"({"name": "order", "input": {"k\u0000ey": "a\u0000b", "n": [null, "\u0000"]}})");
  NF_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(scalar(R"(SELECT "input"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                         params::of(r->id)),
                  R"({"n": [null, ""], "key": "ab"})");
  rejects([&] { return put_task_defs_json(conn, default_namespace, R"({"name": "a\u0000b"})"); },
          nf::errc::invalid, "name: must not contain the NUL character");
  auto d = flow::task_def::unregistered("t");
  d.secret_output_fields = {std::string{"a\0b", 3}};
  rejects([&] { return put_task_defs(conn, default_namespace, {d}); }, nf::errc::invalid,
          "secretOutputFields[0]: must not contain the NUL character");
}

CAF_TEST(a decision write that fails part way leaves nothing behind) {
  auto started = start("order");
  auto before = table_counts();
  transaction tx{conn};
  CAF_REQUIRE(tx.begin());
  decision_write w;
  w.id = started.id;
  w.ns = default_namespace;
  w.shard = started.shard;
  task_insert t;
  t.identity = {"a", 0, 0};
  t.task_def_name = "work";
  t.queue = "work";
  w.inserts.push_back(t);
  w.events.push_back({"NOT_AN_EVENT_TYPE", std::nullopt, std::nullopt, std::nullopt});
  auto r = apply_decisions(tx, {w});
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::invalid);
  CAF_CHECK(nf::message_of(r.error()).find("NOT_AN_EVENT_TYPE") != std::string::npos);
  tx.rollback();
  CAF_CHECK(table_counts() == before);
  CAF_CHECK_EQUAL(count(R"(SELECT "version" FROM "WorkflowExecutions")"), 0);
  // A decision that does not say whose rows it writes is refused before any SQL.
  CAF_REQUIRE(tx.begin());
  decision_write nameless;
  nameless.id = started.id;
  auto n = apply_decisions(tx, {nameless});
  CAF_REQUIRE(!n);
  CAF_CHECK_EQUAL(nf::code_of(n.error()), nf::errc::invalid);
  CAF_CHECK_EQUAL(nf::message_of(n.error()), "decision for workflow " + started.id.str()
                                           + ": no namespace (the snapshot's)");
  tx.rollback();
  CAF_CHECK(table_counts() == before);
}

CAF_TEST_FIXTURE_SCOPE_END()
