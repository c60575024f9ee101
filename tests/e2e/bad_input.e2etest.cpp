#define CAF_SUITE e2e.bad_input
#include "caf/test/unit_test.hpp"

#include "store/ids.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/all_rows.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

template <class T>
bool rejected(const caf::expected<T>& r, nf::errc code, const std::string& part) {
  if (r) {
    CAF_MESSAGE("accepted, wanted " << nf::to_string(code) << " mentioning " << part);
    return false;
  }
  auto text = describe(r.error());
  if (nf::code_of(r.error()) == code && text.find(part) != std::string::npos)
    return true;
  CAF_MESSAGE("got `" << text << "`, wanted " << nf::to_string(code) << " mentioning " << part);
  return false;
}

} // namespace

CAF_TEST(bad input on every protocol call gets a clear error and changes nothing) {
  test::e2e_fixture f{"e2e_bad_input"};
  f.start_node();
  f.define(R"([{"name": "charge", "retryCount": 1, "responseTimeoutSeconds": 60},
    {"name": "e2e_order", "version": 1, "tasks": [
      {"name": "charge", "taskReferenceName": "charge"},
      {"name": "approval", "taskReferenceName": "approval", "type": "WAIT",
       "inputParameters": {"signal": "approved"}}]}])");
  auto id = f.start("e2e_order", R"({"amount": 12})");
  auto& c = *f.api;
  // A leased task, so the worker calls have something real to miss.
  msg::poll_request pr{"", "charge", "w1", 1, 5000};
  auto leased = c.poll(pr);
  CAF_REQUIRE(leased && leased->size() == 1);
  auto task = leased->front();
  // Let the node settle (lease events published, nothing else pending), then snapshot.
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "DecideQueues")", 0));
  auto before = f.scalar(test::all_rows_sql);
  using nf::errc;

  // register
  CAF_CHECK(rejected(c.register_definitions("  "), nf::errc::invalid, "$: expected"));
  CAF_CHECK(rejected(c.register_definitions(R"([{"name":"ok2"},
      {"name":"w","version":1,"tasks":[{"name":"x","taskReferenceName":"x","type":"NOPE"}]}])"),
                     nf::errc::invalid, "[1].tasks[0].type"));
  CAF_CHECK(rejected(c.register_definitions(R"({"name":"t","retryCount":1.5})"), nf::errc::invalid,
                     "retryCount"));
  CAF_CHECK(rejected(c.register_definitions(R"({"name":"t","retryCount":-3})"), nf::errc::invalid,
                     "retryCount"));
  // start
  msg::start_request s;
  s.workflow_name = "e2e_order";
  s.input_json = "[]";
  CAF_CHECK(rejected(c.start(s), nf::errc::invalid, "input: expected a JSON object"));
  s.input_json = "{";
  CAF_CHECK(rejected(c.start(s), nf::errc::invalid, "input"));
  s.input_json = "{}";
  s.workflow_name = "no_such_workflow";
  CAF_CHECK(rejected(c.start(s), nf::errc::not_found, "no_such_workflow"));
  s.workflow_name = "";
  CAF_CHECK(rejected(c.start(s), nf::errc::invalid, "workflow_name"));
  s.workflow_name = "e2e_order";
  // A namespace is named (proto/namespaces.hpp): a malformed name is invalid, an unknown
  // one not found.
  s.namespace_id = "Not A Name!";
  CAF_CHECK(rejected(c.start(s), nf::errc::invalid, "namespace"));
  s.namespace_id = "no-such-namespace";
  CAF_CHECK(rejected(c.start(s), nf::errc::not_found, "no-such-namespace"));
  s.namespace_id = "";
  // get / search
  CAF_CHECK(rejected(c.get("x"), nf::errc::invalid, "workflow_id: expected a UUID"));
  CAF_CHECK(rejected(c.get(new_uuidv7()), nf::errc::not_found, "not found"));
  msg::search_request q;
  q.status = "DONE";
  CAF_CHECK(rejected(c.search(q), nf::errc::invalid, "status:"));
  q.status = "";
  q.limit = -1;
  CAF_CHECK(rejected(c.search(q), nf::errc::invalid, "limit"));
  // operator commands
  CAF_CHECK(rejected(c.command(msg::workflow_command{"explode", id, "", "", 0, ""}), nf::errc::invalid,
                     "op"));
  CAF_CHECK(rejected(c.rerun(id, ""), nf::errc::invalid, "task_ref:"));
  CAF_CHECK(rejected(c.restart(id, "[1]"), nf::errc::invalid, "input"));
  CAF_CHECK(rejected(c.pause("x"), nf::errc::invalid, "workflow_id"));
  CAF_CHECK(rejected(c.terminate(new_uuidv7()), nf::errc::not_found, "not found"));
  // signal
  CAF_CHECK(rejected(c.signal(id, "", "null"), nf::errc::invalid, "name:"));
  CAF_CHECK(rejected(c.signal(id, "approved", "{oops"), nf::errc::invalid, "payload"));
  CAF_CHECK(rejected(c.signal(new_uuidv7(), "x", "1"), nf::errc::not_found, "not found"));
  // poll
  CAF_CHECK(rejected(c.poll(msg::poll_request{"", "charge", "w", 0, 0}), nf::errc::invalid,
                     "max_tasks"));
  CAF_CHECK(rejected(c.poll(msg::poll_request{"", "", "w", 1, 0}), nf::errc::invalid, "queue"));
  CAF_CHECK(rejected(c.poll(msg::poll_request{"", "charge", "w", 1, -5}), nf::errc::invalid,
                     "timeout_ms"));
  // complete / fail / heartbeat
  auto result = [&](std::string status, std::string out, std::string token) {
    return msg::task_result{task.task_id, task.workflow_id, std::move(token), std::move(status),
                            std::move(out), ""};
  };
  CAF_CHECK(rejected(c.report(result("DONE", "{}", task.lease_token)), nf::errc::invalid, "status:"));
  CAF_CHECK(rejected(c.report(result("COMPLETED", "[1]", task.lease_token)), nf::errc::invalid,
                     "output:"));
  CAF_CHECK(rejected(c.report(result("COMPLETED", "{}", "tok")), nf::errc::invalid, "lease_token:"));
  CAF_CHECK(rejected(c.report(result("COMPLETED", "{}", new_uuidv7())), nf::errc::lease_lost,
                     "lease lost"));
  CAF_CHECK(rejected(c.report(result("FAILED", "{}", new_uuidv7())), nf::errc::lease_lost,
                     "lease lost"));
  CAF_CHECK(rejected(c.report(msg::task_result{task.task_id, "x", task.lease_token, "COMPLETED",
                                               "{}", ""}),
                     nf::errc::invalid, "workflow_id"));
  CAF_CHECK(rejected(c.heartbeat(msg::leased_task{task.task_id, task.workflow_id, "", 0, 0, "", "",
                                                  "", "tok", 0}),
                     nf::errc::invalid, "lease_token:"));
  CAF_CHECK(rejected(c.heartbeat(msg::leased_task{task.task_id, task.workflow_id, "", 0, 0, "", "",
                                                  "", new_uuidv7(), 0}),
                     nf::errc::lease_lost, "lease lost"));
  // events / dead letters
  CAF_CHECK(rejected(c.events(msg::events_request{id, -1, 10, 0}), nf::errc::invalid, "after_seq:"));
  CAF_CHECK(rejected(c.events(msg::events_request{"nope", 0, 10, 0}), nf::errc::invalid,
                     "workflow_id"));
  CAF_CHECK(rejected(c.deadletters(msg::deadletter_request{"drop", {}, 0, 10}), nf::errc::invalid,
                     "op:"));
  CAF_CHECK(rejected(c.deadletters(msg::deadletter_request{"list", {}, 0, -1}), nf::errc::invalid,
                     "limit"));

  CAF_CHECK_EQUAL(f.scalar(test::all_rows_sql), before);
  // The real lease still works: bad input did not disturb it.
  CAF_CHECK(c.complete(task, R"({"ok": true})"));
  CAF_CHECK(f.await_count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "refName" = 'approval')",
                          1));
  CAF_CHECK(f.stop_node());
}
