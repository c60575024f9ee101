#define CAF_SUITE http.task_history

// GET /api/metadata/taskdefs/{name}/executions: a task definition's executions, newest
// scheduled first, a page at a time, every execution once across the pages even when many
// share one instant; and the statement behind it reads "TaskExecutions_recent_by_def_idx"
// (a Merge Append of each partition's scan of it), so dropping that index fails here.

#include <caf/test/dsl.hpp>

#include <set>

#include <boost/json.hpp>

#include "store/task_history.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_node.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([{"name": "step", "responseTimeoutSeconds": 60},
  {"name": "other", "responseTimeoutSeconds": 60},
  {"name": "twice", "version": 1, "tasks": [
    {"name": "step", "taskReferenceName": "a", "inputParameters": {}},
    {"name": "other", "taskReferenceName": "b", "inputParameters": {}},
    {"name": "step", "taskReferenceName": "c", "inputParameters": {}}]}])";

struct fixture : test::http_node {
  fixture() : http_node{"http_task_history", definitions} {}

  // Every page of `name`'s executions, `limit` at a time: the task ids in answer order.
  std::vector<std::string> all_pages(const std::string& name, int limit) {
    std::vector<std::string> ids;
    std::string before;
    for (int page = 0; page < 100; ++page) {
      auto r = http->get("/api/metadata/taskdefs/" + name + "/executions?limit="
                         + std::to_string(limit) + (before.empty() ? "" : "&before=" + before));
      CAF_REQUIRE_EQUAL(r.status, 200u);
      auto v = r.json();
      const auto& o = v.as_object();
      CAF_CHECK_EQUAL(std::string{o.at("taskDefName").as_string()}, name);
      int64_t last = INT64_MAX;
      for (const auto& e : o.at("executions").as_array()) {
        auto t = e.at("scheduledTime").as_int64();
        CAF_CHECK_LESS_OR_EQUAL(t, last);
        last = t;
        ids.emplace_back(e.at("taskId").as_string());
      }
      if (o.at("next").is_null())
        return ids;
      before = std::string{o.at("next").as_string()};
    }
    CAF_FAIL("more than 100 pages");
    return ids;
  }

  // The scans of "TaskExecutions" partitions in `node`: relation → index (or node type).
  static void scans(const boost::json::object& node, std::map<std::string, std::string>& out) {
    if (auto* rel = node.if_contains("Relation Name")) {
      auto* idx = node.if_contains("Index Name");
      out[std::string{rel->as_string()}] =
        idx ? std::string{idx->as_string()} : std::string{node.at("Node Type").as_string()};
    }
    if (auto* plans = node.if_contains("Plans"))
      for (const auto& c : plans->as_array())
        scans(c.as_object(), out);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_task_history, fixture)

CAF_TEST(the executions of a task definition come newest first and page through every one) {
  test::worker_pool workers{f.client_opts(), {"step", "other"}, 2, test::echo_handler()};
  std::vector<std::string> wfs;
  for (int i = 0; i < 3; ++i)
    wfs.push_back(f.start("twice"));
  for (const auto& id : wfs)
    CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  workers.stop();

  auto first = http->get("/api/metadata/taskdefs/step/executions?limit=2");
  CAF_REQUIRE_EQUAL(first.status, 200u);
  auto first_v = first.json();
  const auto& page = first_v.as_object();
  CAF_REQUIRE_EQUAL(page.at("executions").as_array().size(), 2u);
  const auto& newest = page.at("executions").as_array()[0].as_object();
  CAF_CHECK_EQUAL(std::string{newest.at("status").as_string()}, "COMPLETED");
  CAF_CHECK_EQUAL(std::string{newest.at("taskType").as_string()}, "SIMPLE");
  CAF_CHECK(newest.at("referenceTaskName").as_string() == "a"
            || newest.at("referenceTaskName").as_string() == "c");
  CAF_CHECK(!page.at("next").is_null());
  // The newest is the last "step" scheduled.
  CAF_CHECK_EQUAL(std::string{newest.at("taskId").as_string()},
                  f.scalar(R"(SELECT "id"::text FROM "TaskExecutions" WHERE "taskDefName" = 'step'
                              ORDER BY "scheduledAt" DESC, "id" DESC LIMIT 1)"));

  auto ids = all_pages("step", 2);
  CAF_CHECK_EQUAL(ids.size(), 6u);
  CAF_CHECK_EQUAL(std::set<std::string>(ids.begin(), ids.end()).size(), 6u);
  CAF_CHECK_EQUAL(all_pages("other", 100).size(), 3u);
  CAF_CHECK_EQUAL(all_pages("nothing_ran", 10).size(), 0u);

  // The same through the client protocol: `nodeflow task-executions`.
  auto cli = f.run_cli({"task-executions", "step", "--limit", "4", "--node",
                        "127.0.0.1:" + std::to_string(f.port)});
  CAF_REQUIRE_EQUAL(cli.exit_code, 0);
  CAF_REQUIRE(!cli.lines.empty());
  CAF_CHECK(cli.lines.back().rfind("4 execution(s); next page: --before ", 0) == 0);
  CAF_CHECK(cli.lines[1].rfind(ids[0], 0) == 0);

  // Many executions at one instant (a decision schedules its tasks at one now()): the id
  // breaks the tie, and paging still returns each once.
  f.sql(R"(UPDATE "TaskExecutions" SET "scheduledAt" = '2026-01-01T00:00:00Z'
            WHERE "taskDefName" = 'step')");
  auto tied = all_pages("step", 4);
  CAF_CHECK_EQUAL(std::set<std::string>(tied.begin(), tied.end()).size(), 6u);
  CAF_CHECK_EQUAL(tied.size(), 6u);

  check_error(http->get("/api/metadata/taskdefs/step/executions?limit=0"), 400, "limit");
  check_error(http->get("/api/metadata/taskdefs/step/executions?before=yesterday"), 400,
              "before");
}

CAF_TEST(the executions of a task definition are read through recent_by_def_idx) {
  // Enough rows, of enough definitions, that a plan has a choice to make, then analysed.
  f.sql(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType",
                                          "taskDefName", "status", "scheduledAt", "endedAt")
           SELECT uuidv7(), '00000000-0000-0000-0000-000000000001', 'r', 'SIMPLE',
                  'def_' || (g % 50), 'COMPLETED', now() - g * interval '1 second', now()
             FROM generate_series(1, 20000) g)");
  f.sql(R"(ANALYZE "TaskExecutions")");
  // Prepared as the engine prepares it, on a connection with the engine's session settings.
  auto page = store::recent_task_executions(f.conn, default_namespace, "def_7", std::nullopt, 50);
  CAF_REQUIRE(page);
  CAF_CHECK_EQUAL(page->size(), 50u);
  auto text = f.scalar(R"(EXPLAIN (FORMAT JSON) EXECUTE "tasks.recent_by_def"(
      '00000000-0000-0000-0000-000000000001', 'def_7', 253402300799999999,
      'ffffffff-ffff-ffff-ffff-ffffffffffff', 50))");
  CAF_MESSAGE("plan: " << text);
  auto plan = boost::json::parse(text).as_array().at(0).as_object().at("Plan").as_object();
  std::map<std::string, std::string> read;
  scans(plan, read);
  CAF_CHECK_EQUAL(read.size(), 16u); // every hash partition, none pruned by a namespace
  for (const auto& [rel, how] : read) {
    CAF_CHECK(rel.rfind("TaskExecutions_p", 0) == 0);
    if (how.find("recent_by_def") == std::string::npos)
      CAF_MESSAGE(rel << " is read by " << how);
    CAF_CHECK(how.find("recent_by_def") != std::string::npos);
  }
  CAF_CHECK(text.find("Merge Append") != std::string::npos);
  CAF_CHECK(text.find("\"Seq Scan\"") == std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
