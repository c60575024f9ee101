#define CAF_SUITE http.output_cache

// The task output cache ("TaskOutputCache"), as a user sees it: a SIMPLE task whose key has a
// live entry of the same namespace and task definition completes from it without any worker
// (no queue row, nothing to poll; its TASK_COMPLETED event says `"cached": true`), and only a
// COMPLETED output a worker reported is written to it. Another task definition, another
// namespace or an expired entry is a miss; so is a key with no entry.

#include <caf/test/dsl.hpp>

#include <string>
#include <thread>

#include <boost/json.hpp>

#include "store/output_cache.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_node.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

namespace json = boost::json;

// oc_sq and oc_cube key their outputs alike (the workflow input's n) but are two task
// definitions; oc_plain has no cache of its own and is cached by a workflow task's cacheConfig.
constexpr const char* defs = R"([
  {"name": "oc_sq", "retryCount": 0, "responseTimeoutSeconds": 30,
   "cacheTtlSeconds": 600, "cacheKey": "${workflow.input.n}"},
  {"name": "oc_cube", "retryCount": 0, "responseTimeoutSeconds": 30,
   "cacheTtlSeconds": 600, "cacheKey": "${workflow.input.n}"},
  {"name": "oc_plain", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "oc_one", "tasks": [{"name": "oc_sq", "taskReferenceName": "sq"}],
   "outputParameters": {"v": "${sq.output.v}"}},
  {"name": "oc_two", "tasks": [{"name": "oc_sq", "taskReferenceName": "sq"},
     {"name": "oc_plain", "taskReferenceName": "after"}]},
  {"name": "oc_cube_wf", "tasks": [{"name": "oc_cube", "taskReferenceName": "cube"}]},
  {"name": "oc_cfg", "tasks": [{"name": "oc_plain", "taskReferenceName": "p",
     "inputParameters": {"n": "${workflow.input.n}"},
     "cacheConfig": {"key": "k-${n}", "ttlInSecond": 600}}],
   "outputParameters": {"v": "${p.output.v}"}}
])";

constexpr const char* default_ns = "00000000-0000-0000-0000-000000000001";

struct fixture : test::http_node {
  fixture() : http_node{"http_output_cache", defs} {}

  std::string start(const std::string& name, int n) {
    return start_over_http(R"({"name":")" + name + R"(","input":{"n":)" + std::to_string(n)
                           + "}}");
  }

  // A worker's report of `status` with `output`, which must be taken.
  void report_output(const json::object& task, const std::string& status,
                     const std::string& output) {
    CAF_REQUIRE_EQUAL(report(task, status, {{"outputData", json::parse(output)}}).status, 200u);
  }

  // Runs `name` with input n through a worker that reports `status` with `output`.
  std::string run_through_worker(const std::string& name, const std::string& type, int n,
                                 const std::string& status, const std::string& output) {
    auto wf = start(name, n);
    auto task = poll_one(type);
    CAF_REQUIRE_EQUAL(json::value_to<std::string>(task.at("workflowInstanceId")), wf);
    report_output(task, status, output);
    f.await_end(wf, 20s);
    return wf;
  }

  // The workflow ends without anyone polling: nothing was queued for a worker.
  std::string end_without_worker(const std::string& wf) { return f.await_end(wf, 20s); }

  int64_t cache_rows(const std::string& def, const std::string& key) {
    return f.count(R"(SELECT count(*) FROM "TaskOutputCache" WHERE "taskDefName" = $1
                       AND "key" = $2)", store::params::of(def, key));
  }

  // The TASK_COMPLETED event of `ref`, from the history over HTTP.
  json::object completed_event(const std::string& wf, const std::string& ref) {
    auto r = http->get("/api/workflow/" + wf + "/events?limit=1000");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    auto page = r.json();
    for (const auto& e : page.at("events").as_array())
      if (e.at("type") == json::value("TASK_COMPLETED") && e.at("taskRef") == json::value(ref))
        return e.as_object();
    CAF_FAIL("no TASK_COMPLETED of " << ref << " in " << r.body);
    return {};
  }
};

bool says_cached(const json::object& event) {
  const auto* c = event.at("payload").as_object().if_contains("cached");
  return c != nullptr && c->is_bool() && c->as_bool();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_output_cache, fixture)

CAF_TEST(a second run with the same key completes from the cache without a worker) {
  auto first = run_through_worker("oc_one", "oc_sq", 1, "COMPLETED", R"({"v":1})");
  CAF_REQUIRE_EQUAL(f.await_end(first, 1s), "COMPLETED");
  CAF_CHECK(!says_cached(completed_event(first, "sq")));
  CAF_REQUIRE_EQUAL(cache_rows("oc_sq", "1"), 1);
  // Kept for the definition's TTL from the completion.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskOutputCache" WHERE "key" = '1'
                             AND "expiresAt" BETWEEN now() + interval '590 seconds'
                                                 AND now() + interval '610 seconds')"), 1);

  auto second = start("oc_one", 1);
  CAF_REQUIRE_EQUAL(end_without_worker(second), "COMPLETED");
  CAF_CHECK_EQUAL(json::serialize(http->get("/api/workflow/" + second).json().at("output")),
                  R"({"v":1})");
  // Inserted COMPLETED: never queued, leased or polled.
  auto row = f.sql(R"(SELECT "status"::text AS st, "workerId" IS NULL AS no_worker,
                             "pollCount" AS polls, "cacheKey" IS NULL AS no_key
                        FROM "TaskExecutions" WHERE "workflowId" = $1 AND "refName" = 'sq')",
                   store::params::of(second));
  CAF_REQUIRE_EQUAL(row.rows(), 1);
  CAF_CHECK_EQUAL(row.str(0, row.column_named("st")), "COMPLETED");
  CAF_CHECK(row.boolean(0, row.column_named("no_worker")));
  CAF_CHECK_EQUAL(row.i32(0, row.column_named("polls")), 0);
  CAF_CHECK(row.boolean(0, row.column_named("no_key")));
  auto event = completed_event(second, "sq");
  CAF_CHECK(says_cached(event));
  CAF_CHECK_EQUAL(event.at("payload").at("cacheKey"), json::value("1"));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_SCHEDULED')", store::params::of(second)), 0);
  CAF_CHECK_EQUAL(http->get("/api/tasks/poll/oc_sq?timeout=0").status, 204u);

  // A hit lets the workflow go on: the next task is scheduled in the same decision.
  auto two = start("oc_two", 1);
  auto after = poll_one("oc_plain");
  CAF_CHECK_EQUAL(json::value_to<std::string>(after.at("workflowInstanceId")), two);
  CAF_CHECK(says_cached(completed_event(two, "sq")));
  report_output(after, "COMPLETED", "{}");
  CAF_CHECK_EQUAL(f.await_end(two, 20s), "COMPLETED");

  // Another key is a miss: it goes to a worker.
  run_through_worker("oc_one", "oc_sq", 2, "COMPLETED", R"({"v":4})");
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "2"), 1);
}

CAF_TEST(a workflow task cacheConfig keys the cache by its input) {
  auto first = run_through_worker("oc_cfg", "oc_plain", 4, "COMPLETED", R"({"v":16})");
  CAF_REQUIRE_EQUAL(f.await_end(first, 1s), "COMPLETED");
  CAF_REQUIRE_EQUAL(cache_rows("oc_plain", "k-4"), 1);
  auto second = start("oc_cfg", 4);
  CAF_REQUIRE_EQUAL(end_without_worker(second), "COMPLETED");
  CAF_CHECK_EQUAL(json::serialize(http->get("/api/workflow/" + second).json().at("output")),
                  R"({"v":16})");
  CAF_CHECK(says_cached(completed_event(second, "p")));
}

// Each entry below would answer its run but for one thing, and the run goes to a worker.
CAF_TEST(an entry of another task definition is a miss) {
  f.sql(R"(INSERT INTO "TaskOutputCache" ("namespaceId", "taskDefName", "key", "output",
                                           "expiresAt")
           VALUES ($1::uuid, 'oc_cube', '5', '{"v":"cube"}', now() + interval '1 hour'))",
        store::params::of(std::string{default_ns}));
  auto wf = run_through_worker("oc_one", "oc_sq", 5, "COMPLETED", R"({"v":25})");
  CAF_CHECK_EQUAL(f.await_end(wf, 1s), "COMPLETED");
  CAF_CHECK(!says_cached(completed_event(wf, "sq")));
  // And oc_sq's output for 5, now cached, does not answer oc_cube's other key either way.
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "5"), 1);
  auto cube = start("oc_cube_wf", 5);
  CAF_CHECK_EQUAL(end_without_worker(cube), "COMPLETED");
  CAF_CHECK_EQUAL(json::serialize(http->get("/api/workflow/" + cube).json().at("output")),
                  R"({"v":"cube"})");
}

CAF_TEST(an entry of another namespace is a miss) {
  f.sql(R"(INSERT INTO "TaskOutputCache" ("namespaceId", "taskDefName", "key", "output",
                                           "expiresAt")
           VALUES ('7b0c1a7e-0000-4000-8000-000000000005', 'oc_sq', '5', '{"v":"other ns"}',
                   now() + interval '1 hour'))");
  auto wf = run_through_worker("oc_one", "oc_sq", 5, "COMPLETED", R"({"v":25})");
  CAF_CHECK_EQUAL(f.await_end(wf, 1s), "COMPLETED");
  CAF_CHECK(!says_cached(completed_event(wf, "sq")));
  // Each namespace keeps its own entry.
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "5"), 2);
}

CAF_TEST(an expired entry is a miss) {
  f.sql(R"(INSERT INTO "TaskOutputCache" ("namespaceId", "taskDefName", "key", "output",
                                           "expiresAt")
           VALUES ($1::uuid, 'oc_sq', '6', '{"v":"expired"}', now() - interval '1 second'))",
        store::params::of(std::string{default_ns}));
  auto wf = run_through_worker("oc_one", "oc_sq", 6, "COMPLETED", R"({"v":36})");
  CAF_CHECK_EQUAL(f.await_end(wf, 1s), "COMPLETED");
  CAF_CHECK(!says_cached(completed_event(wf, "sq")));
  // The worker's output replaced the expired entry.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskOutputCache" WHERE "taskDefName" = 'oc_sq'
                             AND "key" = '6' AND "output" = '{"v":36}' AND "expiresAt" > now())"),
                  1);
}

CAF_TEST(a failed output is not cached) {
  auto failed = run_through_worker("oc_one", "oc_sq", 7, "FAILED", R"({"v":"broken"})");
  CAF_CHECK_EQUAL(f.await_end(failed, 1s), "FAILED");
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "7"), 0);
  // So the next run goes to a worker again.
  auto again = run_through_worker("oc_one", "oc_sq", 7, "COMPLETED", R"({"v":49})");
  CAF_CHECK_EQUAL(f.await_end(again, 1s), "COMPLETED");
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "7"), 1);
}

CAF_TEST(an output over the size bound is not cached) {
  auto big = std::string(R"({"v":")") + std::string(store::max_cached_output_bytes, 'x') + "\"}";
  auto large = run_through_worker("oc_one", "oc_sq", 8, "COMPLETED", big);
  CAF_CHECK_EQUAL(f.await_end(large, 1s), "COMPLETED");
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "8"), 0);
  auto small = run_through_worker("oc_one", "oc_sq", 9, "COMPLETED", R"({"v":81})");
  CAF_CHECK_EQUAL(f.await_end(small, 1s), "COMPLETED");
  CAF_CHECK_EQUAL(cache_rows("oc_sq", "9"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
