#define CAF_SUITE http.sinks

// Webhook sinks managed through /api/webhooks/sinks and `nodeflow sinks`: a sink made
// through the API receives a workflow's events (the relay reads it like any other), one
// disabled receives none, one removed is gone; bad sinks are refused naming the field; the
// signing secret is never answered; every change is audited.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([{"name": "step", "responseTimeoutSeconds": 60},
  {"name": "hooked", "version": 1, "tasks": [
    {"name": "step", "taskReferenceName": "only", "inputParameters": {}}]}])";

constexpr const char* secret = "a-receiver-key-0123456789";

struct fixture {
  test::http_test_server receiver; // before the node: it outlives the deliveries
  test::e2e_fixture f{"http_sinks"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    receiver.on_request([](const test::seen_request&, size_t) { return test::canned_reply{}; });
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(definitions);
  }

  // The deliveries of `workflow_id`'s events, by type.
  std::vector<std::string> delivered_types(const std::string& workflow_id) {
    std::vector<std::string> out;
    for (const auto& r : receiver.requests()) {
      boost::json::error_code ec;
      auto v = boost::json::parse(r.body, ec);
      if (!ec && v.is_object() && v.at("workflowId").is_string()
          && v.at("workflowId").as_string() == workflow_id)
        out.emplace_back(v.at("type").as_string());
    }
    return out;
  }

  std::string run_workflow() {
    test::worker_pool workers{f.client_opts(), {"step"}, 1, test::echo_handler()};
    auto id = f.start("hooked");
    CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
    workers.stop();
    return id;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_sinks, fixture)

CAF_TEST(a sink made through the API receives events until disabled and is gone once removed) {
  boost::json::object body{{"url", receiver.url("/hook")},
                           {"eventTypes", boost::json::array{"workflow.completed"}},
                           {"maxAttempts", 3},
                           {"timeoutMs", 2000},
                           {"signingSecret", secret}};
  auto made = http->post("/api/webhooks/sinks", boost::json::serialize(body));
  CAF_REQUIRE_EQUAL(made.status, 201u);
  CAF_CHECK(made.body.find(secret) == std::string::npos);
  auto sink = made.json().as_object();
  std::string id{sink.at("id").as_string()};
  CAF_CHECK_EQUAL(std::string{sink.at("url").as_string()}, receiver.url("/hook"));
  CAF_CHECK_EQUAL(sink.at("maxAttempts").as_int64(), 3);
  CAF_CHECK_EQUAL(sink.at("timeoutMs").as_int64(), 2000);
  CAF_CHECK(sink.at("enabled").as_bool());
  CAF_CHECK(sink.at("signingSecretSet").as_bool());
  CAF_CHECK(!sink.contains("signingSecret"));

  // Enabled: the workflow's completion reaches the receiver, signed, and only that type.
  auto first = run_workflow();
  bool delivered = f.await([&] { return !delivered_types(first).empty(); }, 30s);
  if (!delivered) {
    auto rows = f.sql(R"(SELECT "eventType" || ' published=' || ("publishedAt" IS NOT NULL)::text
                                || ' attempts=' || "attempts" || ' ' || coalesce("lastError", '')
                           FROM "OutboxEvents" ORDER BY "id")");
    for (int i = 0; i < rows.rows(); ++i)
      CAF_MESSAGE("outbox: " << rows.str(i, 0));
    CAF_MESSAGE("received " << receiver.requests().size() << "; node log:\n"
                            << f.node_log_tail());
  }
  CAF_REQUIRE(delivered);
  for (const auto& t : delivered_types(first))
    CAF_CHECK_EQUAL(t, "workflow.completed");
  for (const auto& r : receiver.requests())
    CAF_CHECK(r.header("X-Nodeflow-Signature").rfind("sha256=", 0) == 0);

  // Disabled: a later workflow's events go nowhere.
  auto off = http->put("/api/webhooks/sinks/" + id, R"({"enabled": false})");
  CAF_REQUIRE_EQUAL(off.status, 200u);
  CAF_CHECK(!off.json().at("enabled").as_bool());
  CAF_CHECK(off.json().at("signingSecretSet").as_bool()); // kept: not in the change
  CAF_CHECK_EQUAL(std::string{off.json().at("url").as_string()}, receiver.url("/hook"));
  auto second = run_workflow();
  std::this_thread::sleep_for(3s); // deliveries come within a relay poll (fast defaults)
  CAF_CHECK(delivered_types(second).empty());
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1)",
                          store::params::of(second)),
                  0);

  auto listed = http->get("/api/webhooks/sinks");
  CAF_REQUIRE_EQUAL(listed.status, 200u);
  CAF_REQUIRE_EQUAL(listed.json().at("sinks").as_array().size(), 1u);
  CAF_CHECK(listed.body.find(secret) == std::string::npos);

  auto removed = http->del("/api/webhooks/sinks/" + id);
  CAF_REQUIRE_EQUAL(removed.status, 200u);
  CAF_CHECK_EQUAL(std::string{removed.json().at("removed").as_string()}, id);
  check_error(http->get("/api/webhooks/sinks/" + id), 404);
  check_error(http->del("/api/webhooks/sinks/" + id), 404);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WebhookSinks")"), 0);

  // One audit record per change, naming the sink, never the secret.
  for (const char* action : {"sinks.create", "sinks.update", "sinks.remove"})
    CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents"
                                WHERE "action" = $1 AND "target" = $2)",
                            store::params::of(std::string{action}, "sink:" + id)),
                    1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents" WHERE "details"::text LIKE $1)",
                          store::params::of("%" + std::string{secret} + "%")),
                  0);
}

CAF_TEST(a bad sink is refused naming the field and writes nothing) {
  auto url = receiver.url("/hook");
  auto post = [&](boost::json::object o) {
    return http->post("/api/webhooks/sinks", boost::json::serialize(o));
  };
  check_error(post({{"eventTypes", nullptr}}), 400, "url");
  check_error(post({{"url", "ftp://example.com/x"}}), 400, "url");
  check_error(post({{"url", "http://user:pw@example.com/x"}}), 400, "url");
  check_error(post({{"url", "https://"}}), 400, "url");
  // The relay would refuse to deliver there (relay.allow_plain_http is off).
  check_error(post({{"url", "http://example.com/hook"}}), 400, "url");
  check_error(post({{"url", url}, {"eventTypes", boost::json::array{"task.completed", "nope"}}}),
              400, "eventTypes[1]");
  check_error(post({{"url", url}, {"eventTypes", boost::json::array{}}}), 400, "eventTypes");
  check_error(post({{"url", url}, {"maxAttempts", 0}}), 400, "maxAttempts");
  check_error(post({{"url", url}, {"timeoutMs", 600001}}), 400, "timeoutMs");
  check_error(post({{"url", url}, {"enabled", "yes"}}), 400, "enabled");
  check_error(post({{"url", url}, {"signingSecret", "short"}}), 400, "signingSecret");
  check_error(post({{"url", url}, {"secret", "x"}}), 400, "secret");
  check_error(http->get("/api/webhooks/sinks/not-a-uuid"), 400, "id");
  check_error(http->put("/api/webhooks/sinks/018f0000-0000-7000-8000-000000000000",
                        R"({"enabled": false})"),
              404);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WebhookSinks")"), 0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents" WHERE "action" LIKE 'sinks.%')"),
                  0);
}

CAF_TEST(nodeflow sinks adds lists disables and removes the sinks the API sees) {
  auto url = receiver.url("/cli");
  auto bad = f.run_cli({"sinks", "add", "ftp://example.com", "--dsn", f.db.dsn()});
  CAF_CHECK_EQUAL(bad.exit_code, 1);
  // Plain http:// beyond loopback only where the nodes deliver there.
  auto plain = f.run_cli({"sinks", "add", "http://example.com/h", "--dsn", f.db.dsn()});
  CAF_CHECK_EQUAL(plain.exit_code, 1);
  auto allowed = f.run_cli({"sinks", "add", "http://example.com/h", "--allow-plain-http",
                            "--disabled", "--dsn", f.db.dsn()});
  CAF_REQUIRE_EQUAL(allowed.exit_code, 0);
  auto made = boost::json::parse(allowed.lines.at(0)).as_object();
  CAF_REQUIRE_EQUAL(f.run_cli({"sinks", "remove", std::string{made.at("id").as_string()},
                               "--dsn", f.db.dsn()})
                      .exit_code,
                    0);
  auto added = f.run_cli({"sinks", "add", url, "--event-types",
                          "workflow.completed,task.completed", "--max-attempts", "4", "--dsn",
                          f.db.dsn()});
  CAF_REQUIRE_EQUAL(added.exit_code, 0);
  CAF_REQUIRE_EQUAL(added.lines.size(), 1u);
  auto sink = boost::json::parse(added.lines[0]).as_object();
  std::string id{sink.at("id").as_string()};
  CAF_CHECK_EQUAL(sink.at("maxAttempts").as_int64(), 4);
  CAF_CHECK_EQUAL(sink.at("eventTypes").as_array().size(), 2u);

  auto seen = http->get("/api/webhooks/sinks/" + id);
  CAF_REQUIRE_EQUAL(seen.status, 200u);
  CAF_CHECK_EQUAL(std::string{seen.json().at("url").as_string()}, url);

  auto listed = f.run_cli({"sinks", "list", "--dsn", f.db.dsn()});
  CAF_REQUIRE_EQUAL(listed.exit_code, 0);
  CAF_REQUIRE_EQUAL(listed.lines.size(), 2u);
  CAF_CHECK(listed.lines[0].rfind(id + "  " + url + "  enabled", 0) == 0);
  CAF_CHECK_EQUAL(listed.lines[1], "1 sink(s)");

  CAF_REQUIRE_EQUAL(f.run_cli({"sinks", "disable", id, "--dsn", f.db.dsn()}).exit_code, 0);
  CAF_CHECK(!http->get("/api/webhooks/sinks/" + id).json().at("enabled").as_bool());
  CAF_REQUIRE_EQUAL(f.run_cli({"sinks", "enable", id, "--dsn", f.db.dsn()}).exit_code, 0);
  CAF_CHECK(http->get("/api/webhooks/sinks/" + id).json().at("enabled").as_bool());

  auto removed = f.run_cli({"sinks", "remove", id, "--dsn", f.db.dsn()});
  CAF_REQUIRE_EQUAL(removed.exit_code, 0);
  check_error(http->get("/api/webhooks/sinks/" + id), 404);
  CAF_CHECK_EQUAL(f.run_cli({"sinks", "remove", id, "--dsn", f.db.dsn()}).exit_code, 1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents"
                              WHERE "action" LIKE 'sinks.%' AND "actor" LIKE 'cli:%')"),
                  6);  // four for the sink above, two for the plain http:// one
}

CAF_TEST(a sink of another namespace is not found and left as it was) {
  CAF_REQUIRE_EQUAL(http->post("/api/namespaces", R"({"name": "other"})").status, 201u);
  auto added = f.run_cli({"sinks", "add", receiver.url("/other"), "--namespace", "other",
                          "--dsn", f.db.dsn()});
  CAF_REQUIRE_EQUAL(added.exit_code, 0);
  std::string id{boost::json::parse(added.lines.at(0)).at("id").as_string()};
  auto before = f.scalar(R"(SELECT row_to_json(s)::text FROM "WebhookSinks" s)");
  // The HTTP door acts in its principal's namespace, "default" here.
  CAF_CHECK_EQUAL(http->get("/api/webhooks/sinks").json().at("sinks").as_array().size(), 0u);
  check_error(http->get("/api/webhooks/sinks/" + id), 404);
  check_error(http->put("/api/webhooks/sinks/" + id, R"({"enabled": false})"), 404);
  check_error(http->del("/api/webhooks/sinks/" + id), 404);
  CAF_CHECK_EQUAL(f.run_cli({"sinks", "disable", id, "--dsn", f.db.dsn()}).exit_code, 1);
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT row_to_json(s)::text FROM "WebhookSinks" s)"), before);
  auto listed = f.run_cli({"sinks", "list", "--namespace", "other", "--dsn", f.db.dsn()});
  CAF_CHECK_EQUAL(listed.lines.back(), "1 sink(s)");
}

CAF_TEST_FIXTURE_SCOPE_END()
