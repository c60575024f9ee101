#define CAF_SUITE http.scheduler

// Conductor's scheduler REST: a schedule saved, read, listed, paused and resumed (GET as Orkes
// has it, PUT as OSS Conductor and the JS SDK's first try), its next times, deleted, and the
// refusals naming the field. The firing itself is tested in actors.schedules and
// e2e.schedules.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

struct fixture {
  test::e2e_fixture f{"http_scheduler"};
  std::unique_ptr<test::http_client> http;

  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(R"({"name":"report","tasks":[{"name":"w","taskReferenceName":"w","type":"WAIT",
                 "inputParameters":{"duration":"1h"}}]})");
  }
};

const char* nightly = R"({"name":"nightly","cronExpression":"0 30 2 * * *",
  "zoneId":"Europe/Berlin","description":"the nightly report",
  "startWorkflowRequest":{"name":"report","input":{"kind":"daily"},"correlationId":"c-1"},
  "runCatchupScheduleInstances":false,"paused":false,
  "scheduleStartTime":0,"scheduleEndTime":0})";

} // namespace

CAF_TEST_FIXTURE_SCOPE(scheduler_tests, fixture)

CAF_TEST(a schedule is saved read listed paused resumed and deleted) {
  auto saved = http->post("/api/scheduler/schedules", nightly);
  CAF_REQUIRE_EQUAL(saved.status, 200u);
  auto one = http->get("/api/scheduler/schedules/nightly");
  CAF_REQUIRE_EQUAL(one.status, 200u);
  auto s = one.json().as_object();
  CAF_CHECK_EQUAL(s.at("cronExpression").as_string(), "0 30 2 * * *");
  CAF_CHECK_EQUAL(s.at("zoneId").as_string(), "Europe/Berlin");
  CAF_CHECK_EQUAL(s.at("description").as_string(), "the nightly report");
  CAF_CHECK_EQUAL(s.at("startWorkflowRequest").at("correlationId").as_string(), "c-1");
  CAF_CHECK_EQUAL(s.at("paused").as_bool(), false);
  CAF_CHECK(s.at("nextRunTime").is_int64());
  CAF_CHECK(s.at("scheduleStartTime").is_null());

  auto all = http->get("/api/scheduler/schedules");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  CAF_CHECK_EQUAL(all.json().as_array().size(), 1u);
  CAF_CHECK_EQUAL(http->get("/api/scheduler/schedules?workflowName=other").json().as_array().size(),
                  0u);
  CAF_CHECK_EQUAL(http->get("/api/scheduler/schedules?workflowName=report").json().as_array().size(),
                  1u);

  CAF_CHECK_EQUAL(http->put("/api/scheduler/schedules/nightly/pause?reason=holiday", "").status,
                  200u);
  s = http->get("/api/scheduler/schedules/nightly").json().as_object();
  CAF_CHECK_EQUAL(s.at("paused").as_bool(), true);
  CAF_CHECK_EQUAL(s.at("pausedReason").as_string(), "holiday");
  CAF_CHECK_EQUAL(http->get("/api/scheduler/schedules/nightly/resume").status, 200u);
  s = http->get("/api/scheduler/schedules/nightly").json().as_object();
  CAF_CHECK_EQUAL(s.at("paused").as_bool(), false);
  CAF_CHECK(!s.contains("pausedReason"));
  CAF_CHECK_EQUAL(http->get("/api/scheduler/schedules/nightly/pause").status, 200u);
  CAF_CHECK_EQUAL(http->put("/api/scheduler/schedules/nightly/resume", "").status, 200u);

  // Every change is in the audit record.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents"
                              WHERE "target" = 'schedule:nightly' AND "action" LIKE 'schedules.%')"),
                  5);

  CAF_CHECK_EQUAL(http->del("/api/scheduler/schedules/nightly").status, 200u);
  test::check_error(http->get("/api/scheduler/schedules/nightly"), 404);
  test::check_error(http->del("/api/scheduler/schedules/nightly"), 404);
  test::check_error(http->get("/api/scheduler/schedules/nightly/pause"), 404);
}

CAF_TEST(the next few times of a cron expression) {
  // From 2025-03-29T00:00:00Z: 02:30 CET, then 03:30 CEST (02:30 does not exist that night).
  auto r = http->get("/api/scheduler/nextFewSchedules?cronExpression=0%2030%202%20*%20*%20*"
                     "&zoneId=Europe/Berlin&scheduleStartTime=1743206400000&limit=2");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK_EQUAL(r.body, "[1743211800000,1743298200000]");
  auto utc = http->get("/api/scheduler/nextFewSchedules?cronExpression=0%200%2012%20*%20*%20?"
                       "&scheduleStartTime=1743206400000&scheduleEndTime=1743300000000");
  CAF_REQUIRE_EQUAL(utc.status, 200u);
  CAF_CHECK_EQUAL(utc.body, "[1743249600000]");
  test::check_error(http->get("/api/scheduler/nextFewSchedules"), 400, "cronExpression");
  test::check_error(http->get("/api/scheduler/nextFewSchedules?cronExpression=0%200%200%20L%20*%20?"),
                    400, "cronExpression");
  test::check_error(http->get("/api/scheduler/nextFewSchedules?cronExpression=*%20*%20*%20*%20*"
                              "&limit=1000"),
                    400, "limit");
}

CAF_TEST(bad schedules are refused naming the field) {
  auto with = [](const std::string& field_json) {
    return R"({"name":"x","cronExpression":"0 * * * * *",
               "startWorkflowRequest":{"name":"report"},)" + field_json + "}";
  };
  test::check_error(http->post("/api/scheduler/schedules", with(R"("zoneId":"Mars/Olympus")")),
                    400, "zoneId");
  test::check_error(http->post("/api/scheduler/schedules", with(R"("tags":[])")), 400, "tags");
  test::check_error(http->post("/api/scheduler/schedules", with(R"("paused":"yes")")), 400,
                    "paused");
  test::check_error(
    http->post("/api/scheduler/schedules",
               R"({"name":"x","cronExpression":"0 0 0 ? * 6#3","startWorkflowRequest":{"name":"report"}})"),
    400, "cronExpression");
  test::check_error(
    http->post("/api/scheduler/schedules",
               R"({"name":"x","cronExpression":"0 * * * * *","startWorkflowRequest":{"name":"nope"}})"),
    404);
  test::check_error(http->post("/api/scheduler/schedules",
                               R"({"name":"bad name","cronExpression":"0 * * * * *",
                                   "startWorkflowRequest":{"name":"report"}})"),
                    400, "name");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "Schedules")"), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
