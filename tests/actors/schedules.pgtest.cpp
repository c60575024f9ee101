#define CAF_SUITE actors.schedules
#include "caf/test/unit_test.hpp"

// Schedules against Postgres: what a firing claims, starts and skips (engine/schedules/
// fire.hpp), the catch-up policy (ticks.hpp), the operations behind the REST and the CLI
// (schedules.hpp) and the node's scheduler actor.

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

#include "actors/scheduler/scheduler.hpp"
#include "engine/schedules/fire.hpp"
#include "engine/schedules/schedules.hpp"
#include "engine/schedules/tz_database.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"
#include "store/pg/transaction.hpp"
#include "store/schedules.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("schedules") {
    sql(R"(DELETE FROM "Schedules")");
    define_workflow("nightly");
  }

  caf::expected<std::string> op(msg::schedule_request r) {
    r.actor = "user:test";
    r.origin = "local";
    return engine::schedules::handle(conn, r);
  }

  std::string save(const std::string& name, const std::string& cron, bool catch_up = false,
                   const std::string& extra = {}) {
    msg::schedule_request r;
    r.op = "save";
    r.body = R"({"name":")" + name + R"(","cronExpression":")" + cron
             + R"(","startWorkflowRequest":{"name":"nightly","input":{"a":1}},)"
             + R"("runCatchupScheduleInstances":)" + (catch_up ? "true" : "false") + extra + "}";
    auto s = op(r);
    if (!s)
      CAF_FAIL("save: " << nf::message_of(s.error()));
    return *s;
  }

  std::string refusal(const std::string& body) {
    msg::schedule_request r;
    r.op = "save";
    r.body = body;
    auto s = op(r);
    CAF_CHECK(!s);
    return s ? std::string{} : nf::message_of(s.error());
  }

  void due_since(const std::string& name, const std::string& interval) {
    sql(R"(UPDATE "Schedules" SET "nextRunAt" = date_trunc('second', now()) - $2::interval
            WHERE "name" = $1)",
        store::params::of(name, interval));
  }

  engine::schedules::fire_outcome fire(store::connection& c) {
    auto r = engine::schedules::fire_due(c, partitions);
    if (!r)
      CAF_FAIL("fire: " << nf::message_of(r.error()));
    return *r;
  }

  int64_t workflows() {
    return count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "workflowName" = 'nightly')");
  }
};

// An answer as a value (its error's message otherwise), for checks that compare it.
std::string text(const caf::expected<std::string>& r) {
  return r ? *r : "error: " + nf::message_of(r.error());
}

bool mentions(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(schedules_tests, fixture)

// The claim's FOR UPDATE SKIP LOCKED: while one transaction holds a due schedule, another
// firing neither waits for it nor starts its ticks.
CAF_TEST(a schedule one firing holds is skipped by another) {
  save("every_second", "* * * ? * *");
  due_since("every_second", "3 seconds");
  auto other = db->connect();
  CAF_REQUIRE(other.exec("SET statement_timeout = 3000"));
  store::transaction holder{conn};
  CAF_REQUIRE(holder.begin());
  int64_t now = 0;
  auto held = store::claim_due_schedules(holder, 10, now);
  CAF_REQUIRE(held);
  CAF_REQUIRE_EQUAL(held->size(), 1u);
  auto meanwhile = engine::schedules::fire_due(other, partitions);
  CAF_REQUIRE(meanwhile);
  CAF_CHECK_EQUAL(meanwhile->started, 0);
  holder.rollback();
  auto after = fire(other);
  CAF_CHECK_GREATER_OR_EQUAL(after.started, 3);
  CAF_CHECK_EQUAL(workflows(), after.started);
}

// The tick's idempotency key: a firing that claims ticks started already (a node whose
// claim read the row before another's commit, in a looser claim) starts nothing again.
CAF_TEST(a tick started once is never started again) {
  save("every_second", "* * * ? * *");
  due_since("every_second", "5 seconds");
  auto first_due = scalar(R"(SELECT "nextRunAt"::text FROM "Schedules")");
  auto first = fire(conn);
  CAF_REQUIRE_GREATER_OR_EQUAL(first.started, 5);
  CAF_CHECK_EQUAL(first.already, 0);
  sql(R"(UPDATE "Schedules" SET "nextRunAt" = $1::timestamptz)", store::params::of(first_due));
  auto again = fire(conn);
  CAF_CHECK_GREATER_OR_EQUAL(again.already, first.started);
  CAF_CHECK_EQUAL(workflows(), first.started + again.started);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "IdempotencyKeys" WHERE "key" LIKE 'schedule:%')"),
                  workflows());
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Schedules" s
                            JOIN "WorkflowExecutions" w ON w."id" = s."lastWorkflowId")"),
                  1);
}

CAF_TEST(without catch up the ticks missed while down are skipped) {
  save("minutely", "0 * * ? * *");
  sql(R"(UPDATE "Schedules" SET "nextRunAt" = date_trunc('minute', now()) - interval '10 minutes')");
  auto f = fire(conn);
  // Only the ticks of the last minute start (one, or two right at a minute's turn).
  CAF_CHECK(f.started >= 1 && f.started <= 2);
  CAF_CHECK_EQUAL(f.started + f.skipped, 11);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Schedules" WHERE "nextRunAt" > now())"), 1);
}

CAF_TEST(with catch up every missed tick starts once) {
  save("minutely", "0 * * ? * *", true);
  sql(R"(UPDATE "Schedules" SET "nextRunAt" = date_trunc('minute', now()) - interval '10 minutes')");
  auto f = fire(conn);
  CAF_CHECK_EQUAL(f.started, 11);
  CAF_CHECK_EQUAL(f.skipped, 0);
  CAF_CHECK_EQUAL(workflows(), 11);
  CAF_CHECK_EQUAL(fire(conn).started, 0);
}

CAF_TEST(a paused schedule starts nothing and resumes from its next tick) {
  const std::string audited = R"(SELECT count(*) FROM "AuditEvents"
    WHERE "target" = 'schedule:pausable' AND "actor" = 'user:test'
      AND "action" IN ('schedules.save', 'schedules.pause', 'schedules.resume'))";
  auto audited_before = count(audited);
  save("pausable", "* * * ? * *");
  msg::schedule_request p;
  p.op = "pause";
  p.name = "pausable";
  p.reason = "maintenance";
  auto paused = op(p);
  CAF_REQUIRE(paused);
  CAF_CHECK(mentions(*paused, R"("pausedReason":"maintenance")"));
  due_since("pausable", "3 seconds");
  CAF_CHECK_EQUAL(fire(conn).started, 0);
  p.op = "resume";
  CAF_REQUIRE(op(p));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Schedules"
                            WHERE NOT "paused" AND "pausedReason" IS NULL AND "nextRunAt" > now())"),
                  1);
  CAF_CHECK_EQUAL(workflows(), 0);
  CAF_CHECK_EQUAL(count(audited), audited_before + 3);
}

CAF_TEST(save get list next and delete) {
  auto saved = boost::json::parse(save("daily", "0 30 2 * * *", false,
                                       R"(,"zoneId":"Europe/Berlin","description":"d")"))
                 .as_object();
  CAF_CHECK_EQUAL(saved.at("zoneId").as_string(), "Europe/Berlin");
  CAF_CHECK_EQUAL(saved.at("createdBy").as_string(), "user:test");
  CAF_CHECK(saved.at("nextRunTime").is_int64());
  msg::schedule_request r;
  r.op = "list";
  r.workflow_name = "nightly";
  CAF_CHECK(mentions(*op(r), R"("name":"daily")"));
  r.workflow_name = "other";
  CAF_CHECK_EQUAL(text(op(r)), "[]");
  r = {};
  r.op = "next";
  r.cron_expression = "0 30 2 * * *";
  r.zone_id = "Europe/Berlin";
  r.start_ms = 1743206400000; // 2025-03-29T00:00:00Z
  r.limit = 2;
  // 02:30 CET on the 29th, then 03:30 CEST on the 30th (02:30 does not exist that night).
  CAF_CHECK_EQUAL(text(op(r)), "[1743211800000,1743298200000]");
  r = {};
  r.op = "delete";
  r.name = "daily";
  CAF_CHECK(op(r));
  auto again = op(r);
  CAF_REQUIRE(!again);
  CAF_CHECK_EQUAL(nf::code_of(again.error()), nf::errc::not_found);
}

CAF_TEST(bad schedules are refused naming the field) {
  auto base = [](const std::string& tail) {
    return R"({"name":"x","startWorkflowRequest":{"name":"nightly"},)" + tail + "}";
  };
  CAF_CHECK(mentions(refusal(base(R"("cronExpression":"0 0 0 L * ?")")), "cronExpression"));
  CAF_CHECK(mentions(refusal(base(R"("cronExpression":"* * * * * *","zoneId":"Mars/Olympus")")),
                     "zoneId"));
  CAF_CHECK(mentions(refusal(base(R"("cronExpression":"* * * * * *","zoneId":"../../etc/passwd")")),
                     "zoneId"));
  CAF_CHECK(mentions(refusal(base(R"("cronExpression":"* * * * * *","tags":[])")), "tags"));
  CAF_CHECK(mentions(refusal(R"({"name":"x","cronExpression":"* * * * * *",
                                 "startWorkflowRequest":{"name":"missing"}})"),
                     "startWorkflowRequest.name"));
  CAF_CHECK(mentions(refusal(R"({"name":"x","cronExpression":"* * * * * *",
                                 "startWorkflowRequest":{"name":"nightly","idempotencyKey":"k"}})"),
                     "idempotencyKey"));
  CAF_CHECK(mentions(refusal(base(R"("cronExpression":"* * * * * *","scheduleStartTime":5,
                                      "scheduleEndTime":4)")),
                     "scheduleEndTime"));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Schedules")"), 0);
}

CAF_TEST(zones come from the system tz database) {
  auto berlin = engine::schedules::load_zone("Europe/Berlin");
  CAF_REQUIRE(berlin);
  CAF_CHECK_EQUAL(flow::offset_at(**berlin, 1751371200), 7200); // 2025-07-01T12:00Z
  CAF_CHECK_EQUAL(flow::offset_at(**berlin, 1736942400), 3600); // 2025-01-15T12:00Z
  // Past the file's last transition the footer's rule applies.
  CAF_CHECK_EQUAL(flow::offset_at(**berlin, 4123000000), 7200); // 2100-08-26
  auto kolkata = engine::schedules::load_zone("Asia/Kolkata");
  CAF_REQUIRE(kolkata);
  CAF_CHECK_EQUAL(flow::offset_at(**kolkata, 1751371200), 19800);
  CAF_CHECK(!engine::schedules::load_zone("Nowhere/Atlantis"));
}

// The node's scheduler: with no hint at all, its own wake-ups fire what falls due.
CAF_TEST(the scheduler actor fires due ticks on its own) {
  save("every_second", "* * * ? * *");
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  actors::scheduler_context ctx;
  ctx.dsn = db->dsn();
  auto s = actors::spawn_scheduler(sys, ctx);
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (workflows() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  CAF_CHECK_GREATER_OR_EQUAL(workflows(), 3);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
}

CAF_TEST_FIXTURE_SCOPE_END()
