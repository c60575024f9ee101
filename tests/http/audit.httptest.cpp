#define CAF_SUITE http.audit

// Every administrative action over HTTP leaves exactly one "AuditEvents" row, written in the
// action's transaction, naming who (the exchange's principal), from where ("http <address>"),
// what and on what; a refused action leaves none. The CAF door records "anonymous" from
// "caf <node>" whatever the client put in the fields. GET /api/audit reads them back.

#include <caf/test/dsl.hpp>

#include <cstdlib>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr const char* unknown_id = "0190a0b0-0000-7000-8000-000000000000";

struct fixture {
  test::e2e_fixture f{"http_audit"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(R"([
      {"name": "gate", "version": 1, "tasks": [
        {"name": "hold", "taskReferenceName": "hold", "type": "WAIT",
         "inputParameters": {"signal": "go"}}]}])");
  }

  int64_t rows() { return f.count(R"(SELECT count(*) FROM "AuditEvents")"); }

  // The one row of `action` on `target`: checks there is exactly one and that it names the
  // HTTP door and the anonymous principal; its details as JSON.
  boost::json::value one(const std::string& action, const std::string& target) {
    auto r = f.sql(R"(SELECT "actor", "origin", coalesce("namespace", '') AS ns,
                             "details"::text AS details
                        FROM "AuditEvents" WHERE "action" = $1 AND "target" = $2)",
                   store::params::of(action, target));
    CAF_CHECK_EQUAL(r.rows(), 1);
    if (r.rows() != 1)
      return nullptr;
    CAF_CHECK_EQUAL(r.str(0, r.column_named("actor")), "anonymous");
    auto origin = r.str(0, r.column_named("origin"));
    CAF_CHECK(origin.rfind("http 127.0.0.1:", 0) == 0);
    CAF_CHECK(origin.size() > std::string{"http 127.0.0.1:"}.size());
    CAF_CHECK_EQUAL(r.str(0, r.column_named("ns")), "default");
    return boost::json::parse(r.str(0, r.column_named("details")));
  }

  std::string status(const std::string& id) {
    auto r = http->get("/api/workflow/" + id);
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return std::string{r.json().at("status").as_string()};
  }

  std::string start_gate() {
    auto r = http->post("/api/workflow/gate", "{}");
    CAF_REQUIRE_EQUAL(r.status, 200u);
    CAF_REQUIRE(f.await([&] { return status(r.body) == "RUNNING"; }, 20s));
    return r.body;
  }

  // `action` answers `want` and writes no audit row.
  void refused(const test::http_reply& r, unsigned want) {
    CAF_CHECK_EQUAL(r.status, want);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_audit, fixture)

CAF_TEST(definitions registered and deleted are audited and refusals are not) {
  auto before = rows();
  auto r = http->post("/api/metadata/taskdefs", R"([{"name": "charge"}, {"name": "refund"}])");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto d = one("definitions.register", "task:charge,task:refund");
  CAF_CHECK_EQUAL(boost::json::serialize(d.at("taskDefs")), R"(["charge","refund"])");
  r = http->post("/api/metadata/workflow", R"({"name": "pay", "version": 3, "tasks": [
      {"name": "charge", "taskReferenceName": "c", "type": "SIMPLE"}]})");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  one("definitions.register", "workflow:pay@3");
  CAF_CHECK_EQUAL(rows(), before + 2);
  // Invalid definitions (the engine's validation refuses them): nothing recorded.
  refused(http->post("/api/metadata/taskdefs", R"([{"name": "x", "retryCount": -1}])"), 400);
  refused(http->request("PUT", "/api/metadata/workflow", R"([{"name": "bad", "version": 1,
      "tasks": [{"name": "x", "taskReferenceName": "x", "type": "NO_SUCH_TYPE"}]}])"), 400);
  // A task definition a workflow uses stays, and so does the record of it.
  refused(http->del("/api/metadata/taskdefs/charge"), 409);
  refused(http->del("/api/metadata/taskdefs/nothing_here"), 404);
  CAF_CHECK_EQUAL(rows(), before + 2);
  CAF_REQUIRE_EQUAL(http->del("/api/metadata/workflow/pay/3").status, 200u);
  one("definitions.delete", "workflow:pay@3");
  CAF_REQUIRE_EQUAL(http->del("/api/metadata/taskdefs/refund").status, 200u);
  one("definitions.delete", "task:refund");
  CAF_CHECK_EQUAL(rows(), before + 4);
}

CAF_TEST(every workflow command is audited once and a refused one not at all) {
  auto id = start_gate();
  auto before = rows();
  refused(http->request("PUT", std::string{"/api/workflow/"} + unknown_id + "/pause"), 404);
  refused(http->request("POST", "/api/workflow/" + id + "/retry"), 409);
  CAF_CHECK_EQUAL(rows(), before);
  CAF_REQUIRE_EQUAL(http->request("PUT", "/api/workflow/" + id + "/pause").status, 200u);
  one("workflow.pause", id);
  CAF_REQUIRE_EQUAL(http->request("PUT", "/api/workflow/" + id + "/resume").status, 200u);
  one("workflow.resume", id);
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + id + "?reason=stop%20it").status, 200u);
  CAF_CHECK_EQUAL(one("workflow.terminate", id).at("reason").as_string(), "stop it");
  refused(http->request("PUT", "/api/workflow/" + id + "/pause"), 409);
  CAF_CHECK_EQUAL(rows(), before + 3);
  CAF_REQUIRE_EQUAL(http->request("POST", "/api/workflow/" + id + "/retry").status, 204u);
  one("workflow.retry", id);
  CAF_REQUIRE(f.await([&] { return status(id) == "RUNNING"; }, 20s));
  CAF_REQUIRE_EQUAL(http->post("/api/workflow/" + id + "/signal/go", R"({"secret":"s3"})").status,
                    200u);
  auto sig = one("workflow.signal", id);
  CAF_CHECK_EQUAL(sig.at("signal").as_string(), "go");
  CAF_CHECK(!sig.as_object().contains("payload")); // payloads are never recorded
  CAF_REQUIRE(f.await([&] { return status(id) == "COMPLETED"; }, 20s));
  auto wf = http->get("/api/workflow/" + id).json();
  auto task_id = std::string{wf.at("tasks").as_array()[0].at("taskId").as_string()};
  auto rerun = http->post("/api/workflow/" + id + "/rerun",
                          R"({"reRunFromTaskId":")" + task_id + R"(","taskInput":{"k":"v"}})");
  CAF_REQUIRE_EQUAL(rerun.status, 200u);
  auto rd = one("workflow.rerun", id);
  CAF_CHECK_EQUAL(rd.at("taskRef").as_string(), "hold");
  CAF_CHECK(rd.at("inputReplaced").as_bool());
  // The WAIT completed by its reference name.
  CAF_REQUIRE(f.await([&] { return status(id) == "RUNNING"; }, 20s));
  refused(http->post("/api/tasks/" + id + "/nope/COMPLETED", "{}"), 404);
  auto upd = http->post("/api/tasks/" + id + "/hold/COMPLETED?workerid=host-7",
                        R"({"approved":"yes"})");
  CAF_REQUIRE_EQUAL(upd.status, 200u);
  auto ud = one("workflow.task_update", id);
  CAF_CHECK_EQUAL(ud.at("taskRef").as_string(), "hold");
  CAF_CHECK_EQUAL(ud.at("status").as_string(), "COMPLETED");
  // Who reported it (Conductor's workerid) is named here and in the history.
  CAF_CHECK_EQUAL(ud.at("workerId").as_string(), "host-7");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = ')" + id
                          + R"(' AND "eventType" = 'SIGNAL_RECEIVED'
                               AND "payload"->>'workerId' = 'host-7')"),
                  1);
  CAF_REQUIRE(f.await([&] { return status(id) == "COMPLETED"; }, 20s));
  CAF_REQUIRE_EQUAL(http->request("POST", "/api/workflow/" + id + "/restart").status, 204u);
  one("workflow.restart", id);
  refused(http->post(std::string{"/api/workflow/"} + unknown_id + "/signal/go", "{}"), 404);
  CAF_CHECK_EQUAL(rows(), before + 8);
}

CAF_TEST(a dead letter replay is audited with what it replayed) {
  auto before = rows();
  CAF_REQUIRE_EQUAL(http->post("/api/deadletters/replay", "{}").status, 200u);
  auto all = f.sql(R"(SELECT "details"->>'replayed' AS n, "namespace"
                        FROM "AuditEvents" WHERE "action" = 'deadletters.replay'
                         AND "target" = 'all')");
  CAF_REQUIRE_EQUAL(all.rows(), 1);
  CAF_CHECK_EQUAL(all.str(0, all.column_named("n")), "0");
  // A replay acts in the caller's namespace, and says which.
  CAF_CHECK_EQUAL(all.str(0, all.column_named("namespace")), "default");
  CAF_REQUIRE_EQUAL(http->post("/api/deadletters/replay", R"({"ids":[7,9]})").status, 200u);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents"
                              WHERE "action" = 'deadletters.replay' AND "target" = '7,9')"),
                  1);
  refused(http->post("/api/deadletters/replay", R"({"ids":["x"]})"), 400);
  CAF_CHECK_EQUAL(rows(), before + 2);
}

CAF_TEST(the CAF door records anonymous from its node whatever the client claims) {
  // The fixture registered its definitions through the client library.
  auto defs = f.sql(R"(SELECT "actor", "origin" FROM "AuditEvents"
                        WHERE "action" = 'definitions.register' AND "target" = 'workflow:gate@1')");
  CAF_REQUIRE_EQUAL(defs.rows(), 1);
  CAF_CHECK_EQUAL(defs.str(0, defs.column_named("actor")), "anonymous");
  CAF_CHECK(defs.str(0, defs.column_named("origin")).rfind("caf ", 0) == 0);
  auto id = start_gate();
  msg::workflow_command c;
  c.op = "pause";
  c.workflow_id = id;
  c.actor = "user:mallory";
  c.origin = "http 10.0.0.1:1";
  CAF_REQUIRE(f.api->command(c));
  auto r = f.sql(R"(SELECT "actor", "origin" FROM "AuditEvents"
                     WHERE "action" = 'workflow.pause' AND "target" = $1)",
                 store::params::of(id));
  CAF_REQUIRE_EQUAL(r.rows(), 1);
  CAF_CHECK_EQUAL(r.str(0, r.column_named("actor")), "anonymous");
  CAF_CHECK_EQUAL(r.str(0, r.column_named("origin")), defs.str(0, defs.column_named("origin")));
}

CAF_TEST(GET api audit pages oldest first and filters by action and time) {
  auto id = start_gate();
  for (const char* op : {"pause", "resume", "pause", "resume"})
    CAF_REQUIRE_EQUAL(http->request("PUT", "/api/workflow/" + id + "/" + op).status, 200u);
  auto page = http->get("/api/audit?action=workflow.pause&limit=1");
  CAF_REQUIRE_EQUAL(page.status, 200u);
  auto v = page.json();
  CAF_REQUIRE_EQUAL(v.at("events").as_array().size(), 1u);
  const auto& e = v.at("events").as_array()[0].as_object();
  CAF_CHECK_EQUAL(e.at("action").as_string(), "workflow.pause");
  CAF_CHECK_EQUAL(e.at("target").as_string(), id);
  CAF_CHECK_EQUAL(e.at("actor").as_string(), "anonymous");
  CAF_CHECK_EQUAL(e.at("namespace").as_string(), "default");
  CAF_CHECK(e.at("at").to_number<int64_t>() > 0);
  CAF_REQUIRE(v.at("nextCursor").is_string());
  auto next = http->get("/api/audit?action=workflow.pause&limit=1&cursor="
                        + std::string{v.at("nextCursor").as_string()});
  CAF_REQUIRE_EQUAL(next.status, 200u);
  auto n = next.json();
  CAF_REQUIRE_EQUAL(n.at("events").as_array().size(), 1u);
  CAF_CHECK(n.at("events").as_array()[0].at("id") != e.at("id"));
  auto last = http->get("/api/audit?action=workflow.pause&limit=1&cursor="
                        + std::string{n.at("nextCursor").as_string()});
  CAF_CHECK_EQUAL(last.json().at("events").as_array().size(), 0u);
  CAF_CHECK(last.json().at("nextCursor").is_null());
  // Every row so far, then none after the future.
  CAF_CHECK_EQUAL(http->get("/api/audit?limit=1000").json().at("events").as_array().size(),
                  static_cast<size_t>(rows()));
  auto future = http->get("/api/audit?since=" + std::to_string(INT64_C(4102444800000)));
  CAF_CHECK_EQUAL(future.json().at("events").as_array().size(), 0u);
  CAF_CHECK_EQUAL(http->get("/api/audit?limit=0").status, 400u);
  CAF_CHECK_EQUAL(http->get("/api/audit?cursor=nope").status, 400u);
  CAF_CHECK_EQUAL(http->get("/api/audit?since=-1").status, 400u);
}

CAF_TEST(namespaces keys users and secrets leave one record each and none of their secrets) {
  const auto dsn = " --dsn '" + f.db.dsn() + "'";
  CAF_REQUIRE_EQUAL(http->post("/api/namespaces", R"({"name":"gamma"})").status, 201u);
  CAF_REQUIRE_EQUAL(http->request("DELETE", "/api/namespaces/gamma").status, 200u);
  auto [key_id, key_secret] = f.create_key("reader");
  std::string out;
  CAF_REQUIRE_EQUAL(f.run_shell("keys revoke " + key_id + dsn, "", out), 0);
  const std::string password = "correct horse battery staple";
  CAF_REQUIRE_EQUAL(f.run_shell("users create ann --role reader" + dsn, password + "\n", out), 0);
  CAF_REQUIRE_EQUAL(f.run_shell("users passwd ann" + dsn, password + "!\n", out), 0);
  CAF_REQUIRE_EQUAL(f.run_shell("users disable ann" + dsn, "", out), 0);
  auto key_file = f.dir + "/master.key";
  CAF_REQUIRE_EQUAL(std::system((std::string{NF_NODEFLOW_BIN} + " secrets keygen > " + key_file)
                                  .c_str()),
                    0);
  const std::string sealed_value = "s3cr3t-value-for-the-audit";
  auto with_key = " --secrets.master_key_file " + key_file + dsn;
  CAF_REQUIRE_EQUAL(f.run_shell("secrets put API_TOKEN" + with_key, sealed_value + "\n", out), 0);
  CAF_REQUIRE_EQUAL(f.run_shell("secrets remove API_TOKEN" + with_key, "", out), 0);
  struct expected_row {
    const char* action;
    std::string target;
    const char* door; ///< the origin's first word
    bool in_default;  ///< recorded in "default" (else outside any namespace)
  };
  for (const auto& e : std::vector<expected_row>{
         {"namespaces.create", "namespace:gamma", "http", false},
         {"namespaces.remove", "namespace:gamma", "http", false},
         {"keys.create", "key:" + key_id, "cli", false},
         {"keys.revoke", "key:" + key_id, "cli", false},
         {"users.create", "user:ann", "cli", false},
         {"users.passwd", "user:ann", "cli", false},
         {"users.disable", "user:ann", "cli", false},
         {"secrets.put", "secret:API_TOKEN", "cli", true},
         {"secrets.remove", "secret:API_TOKEN", "cli", true}}) {
    auto r = f.sql(R"(SELECT "actor", "origin", coalesce("namespace", '') AS ns
                        FROM "AuditEvents" WHERE "action" = $1 AND "target" = $2)",
                   store::params::of(std::string{e.action}, e.target));
    CAF_CHECK_EQUAL(r.rows(), 1);
    if (r.rows() != 1) {
      CAF_MESSAGE(e.action << " on " << e.target << ": " << r.rows() << " rows");
      continue;
    }
    auto origin = r.str(0, r.column_named("origin"));
    CAF_CHECK(origin.rfind(std::string{e.door} + " ", 0) == 0);
    if (std::string{e.door} == "cli")
      CAF_CHECK(r.str(0, r.column_named("actor")).rfind("cli:", 0) == 0);
    CAF_CHECK_EQUAL(r.str(0, r.column_named("ns")), e.in_default ? "default" : "");
  }
  // Columns by name: no secret, password or hash reaches the record.
  auto all = f.scalar(R"(SELECT string_agg("AuditEvents"::text, '|') FROM "AuditEvents")");
  for (const auto& secret : {key_secret, password, sealed_value})
    CAF_CHECK(all.find(secret) == std::string::npos);
  CAF_CHECK(all.find("$argon2id$") == std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
