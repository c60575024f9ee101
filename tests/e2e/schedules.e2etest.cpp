#define CAF_SUITE e2e.schedules
#include "caf/test/unit_test.hpp"

// Schedules across a cluster: three `nodeflow serve` processes share one Postgres, each with
// a scheduler that wakes for the same ticks and races for them. Every tick must start
// exactly one workflow (engine/schedules/fire.hpp): the claim's row locks and the tick's
// idempotency key.

#include <csignal>
#include <fstream>
#include <iterator>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

} // namespace

CAF_TEST(a schedule ticking every second on three nodes for a minute starts 60 workflows) {
  test::e2e_fixture f{"e2e_schedules"};
  f.start_node();
  std::vector<std::unique_ptr<test::child_process>> others;
  for (int i = 2; i <= 3; ++i) {
    auto port = test::free_port();
    others.push_back(std::make_unique<test::child_process>(
      std::vector<std::string>{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                               f.config_path, "--port", std::to_string(port), "--http-port", "0"},
      f.dir + "/node" + std::to_string(i) + ".log", true));
    CAF_REQUIRE(others.back()->wait_for_line("listening ", 60s));
  }
  f.define(R"({"name":"ticked","tasks":[{"name":"t","taskReferenceName":"t","type":"WAIT",
               "inputParameters":{"duration":"1h"}}]})");
  // Exactly 60 ticks: whole seconds from `first` to `first + 59 s`, both included.
  int64_t first = (now_ms() / 1000 + 5) * 1000;
  boost::json::object save{
    {"name", "every_second"},
    {"cronExpression", "* * * ? * *"},
    {"zoneId", "Europe/Berlin"},
    {"startWorkflowRequest", {{"name", "ticked"}, {"input", {{"from", "schedule"}}}}},
    {"runCatchupScheduleInstances", true},
    {"scheduleStartTime", first},
    {"scheduleEndTime", first + 59'000}};
  msg::schedule_request r;
  r.op = "save";
  r.body = boost::json::serialize(save);
  auto saved = f.api->schedules(r);
  CAF_REQUIRE(saved);
  auto saved_json = boost::json::parse(*saved).as_object();
  CAF_CHECK_EQUAL(saved_json.at("nextRunTime").as_int64(), first);

  const std::string started = R"(SELECT count(*) FROM "WorkflowExecutions"
                                  WHERE "workflowName" = 'ticked')";
  // Until the last tick is started: the schedule then has no next run.
  CAF_CHECK(f.await_count(R"(SELECT count(*) FROM "Schedules" WHERE "nextRunAt" IS NULL)", 1,
                          200s));
  std::this_thread::sleep_for(2s); // a racing node's late start would show now
  CAF_CHECK_EQUAL(f.count(started), 60);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(DISTINCT "key") FROM "IdempotencyKeys"
                              WHERE "key" LIKE 'schedule:every\_second@%')"),
                  60);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "Schedules"
                              WHERE "name" = 'every_second'
                                AND "lastRunAt" = to_timestamp($1::int8 / 1000.0))",
                          store::params::of(first + 59'000)),
                  1);
  // The nodes did race: more than one of them started ticks (which one wins each tick is the
  // database's choice, so the share is not checked).
  int firing_nodes = 0;
  for (const auto& log : {f.node_log, f.dir + "/node2.log", f.dir + "/node3.log"}) {
    std::ifstream in{log};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    firing_nodes += text.find("schedules_fired started=") != std::string::npos ? 1 : 0;
  }
  CAF_CHECK_GREATER_OR_EQUAL(firing_nodes, 2);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions"
                              WHERE "workflowName" = 'ticked' AND "input"->>'from' = 'schedule')"),
                  60);
  for (auto& n : others) {
    auto st = n->stop(SIGTERM);
    CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  CAF_CHECK(f.stop_node());
}
