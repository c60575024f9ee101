#define CAF_SUITE http.payloads

// Values too large for their rows (migration 0031, store/payloads.hpp) through a real node:
// a worker reports a 5 MB output over HTTP, a sub-workflow hands it to its parent, the next
// worker is leased it as its input, and the API returns it whole, while no "TaskExecutions"
// row grows past 1 KB.

#include <caf/test/dsl.hpp>

#include <chrono>
#include <thread>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_node.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

namespace json = boost::json;

constexpr const char* defs = R"([
  {"name": "pl_make", "retryCount": 0, "responseTimeoutSeconds": 60},
  {"name": "pl_use", "retryCount": 0, "responseTimeoutSeconds": 60},
  {"name": "pl_child", "tasks": [{"name": "pl_make", "taskReferenceName": "make"}],
   "outputParameters": {"data": "${make.output.data}"}},
  {"name": "pl_parent", "tasks": [
     {"name": "child", "taskReferenceName": "child", "type": "SUB_WORKFLOW",
      "subWorkflowParam": {"name": "pl_child", "version": 1}},
     {"name": "pl_use", "taskReferenceName": "use",
      "inputParameters": {"got": "${child.output.data}"}}],
   "outputParameters": {"data": "${child.output.data}"}}
])";

constexpr size_t five_mb = 5u << 20;

/// 5 MB that does not compress (TOAST would shrink a repeated character to a few KB).
std::string noise(size_t n) {
  std::string s(n, ' ');
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = "abcdefghijklmnopqrstuvwxyz0123456789"[x % 36];
  }
  return s;
}

struct fixture : test::http_node {
  fixture() : http_node{"http_payloads", defs} {}

  // Polls that wait longer: a 5 MB value takes a while to be stored and leased.
  json::object poll_one(const std::string& type) { return http_node::poll_one(type, {}, 500); }

  // A COMPLETED report with `output`: the answer's status.
  unsigned report(const json::object& task, json::object output) {
    return http_node::report(task, "COMPLETED", {{"outputData", std::move(output)}}).status;
  }

  /// The widest "TaskExecutions" row of these workflows, by two measures.
  std::pair<int64_t, int64_t> widest_task_rows(const std::vector<std::string>& wfs) {
    int64_t stored = 0, text = 0;
    for (const auto& wf : wfs) {
      stored = std::max(stored, f.count(R"(SELECT max(pg_column_size(t.*)) FROM "TaskExecutions" t
                                            WHERE t."workflowId" = $1)",
                                        store::params::of(wf)));
      text = std::max(text, f.count(R"(SELECT max(octet_length(t::text)) FROM "TaskExecutions" t
                                        WHERE t."workflowId" = $1)",
                                    store::params::of(wf)));
    }
    return {stored, text};
  }
};

const json::object& task_at(const json::value& execution, const std::string& ref) {
  for (const auto& t : execution.at("tasks").as_array())
    if (t.at("referenceTaskName").as_string() == ref)
      return t.as_object();
  CAF_FAIL("no task " << ref << " in " << json::serialize(execution).substr(0, 400));
  static json::object none;
  return none;
}

size_t data_size(const json::value& v, const char* field) {
  if (!v.is_object() || !v.as_object().contains(field) || !v.at(field).is_string())
    return 0;
  return v.at(field).as_string().size();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_payloads, fixture)

CAF_TEST(a 5 MB output round trips through a worker the API and a sub workflow with narrow task
         rows) {
  const auto data = noise(five_mb);
  const auto parent = start_over_http(R"({"name":"pl_parent","input":{}})");

  auto make = poll_one("pl_make");
  const auto child = std::string{make.at("workflowInstanceId").as_string()};
  CAF_CHECK_NOT_EQUAL(child, parent);
  auto t0 = std::chrono::steady_clock::now();
  CAF_REQUIRE_EQUAL(report(make, {{"data", data}}), 200u);
  auto reported_at = std::chrono::steady_clock::now();

  // The next worker is leased the value as its input, whole.
  auto use = poll_one("pl_use");
  auto leased_at = std::chrono::steady_clock::now();
  CAF_CHECK_EQUAL(std::string{use.at("workflowInstanceId").as_string()}, parent);
  CAF_REQUIRE(use.at("inputData").at("got").is_string());
  CAF_CHECK(use.at("inputData").at("got").as_string() == data);
  CAF_REQUIRE_EQUAL(report(use, {{"ok", true}}), 200u);
  CAF_REQUIRE_EQUAL(f.await_end(parent), "COMPLETED");

  // The API returns it whole: the parent's output, its SUB_WORKFLOW task's output, the next
  // task's input, and the child's worker task's output.
  auto asked_at = std::chrono::steady_clock::now();
  auto got_parent = http->get("/api/workflow/" + parent + "?includeTasks=true");
  auto answered_at = std::chrono::steady_clock::now();
  CAF_REQUIRE_EQUAL(got_parent.status, 200u);
  auto p = got_parent.json();
  CAF_CHECK(p.at("output").at("data").as_string() == data);
  CAF_CHECK_EQUAL(data_size(task_at(p, "child").at("outputData"), "data"), five_mb);
  CAF_CHECK_EQUAL(data_size(task_at(p, "use").at("inputData"), "got"), five_mb);
  auto got_child = http->get("/api/workflow/" + child + "?includeTasks=true");
  CAF_REQUIRE_EQUAL(got_child.status, 200u);
  auto c = got_child.json();
  CAF_CHECK_EQUAL(data_size(c.at("output"), "data"), five_mb);
  CAF_CHECK(task_at(c, "make").at("outputData").at("data").as_string() == data);

  // Every task row of both workflows stays under 1 KB; the value lives in "Payloads".
  auto [stored, text] = widest_task_rows({parent, child});
  CAF_MESSAGE("widest task row: " << stored << " bytes stored, " << text << " as text");
  CAF_CHECK_LESS(stored, 1024);
  CAF_CHECK_LESS(text, 1024);
  CAF_CHECK_GREATER_OR_EQUAL(
    f.count(R"(SELECT count(*) FROM "Payloads" WHERE "workflowId" = ANY($1::uuid[]))",
            store::params::of("{" + parent + "," + child + "}")),
    4);
  // The history holds no copy of it.
  CAF_CHECK_LESS(f.count(R"(SELECT coalesce(max(octet_length("payload"::text)), 0)
                             FROM "WorkflowEvents" WHERE "workflowId" = ANY($1::uuid[]))",
                         store::params::of("{" + parent + "," + child + "}")),
                 4096);
  using ms = std::chrono::milliseconds;
  auto took = [](auto d) { return std::chrono::duration_cast<ms>(d).count(); };
  CAF_MESSAGE("5 MB: report " << took(reported_at - t0) << " ms, report to the next task's lease "
                              << took(leased_at - t0) << " ms, GET of the parent ("
                              << got_parent.body.size() << " bytes) "
                              << took(answered_at - asked_at) << " ms");
}

CAF_TEST_FIXTURE_SCOPE_END()
