#define CAF_SUITE engine.delivery
#include "caf/test/unit_test.hpp"

#include <boost/json/parse.hpp>

#include "engine/relay/delivery.hpp"
#include "engine/relay/signature.hpp"

using namespace nf;

namespace {

const namespace_id ns_a{"00000000-0000-0000-0000-00000000000a"};
const namespace_id ns_b{"00000000-0000-0000-0000-00000000000b"};

store::outbox_event event(int64_t id, const namespace_id& ns, const std::string& type) {
  store::outbox_event e;
  e.id = id;
  e.event = event_id{"0190b3c0-0000-7000-8000-00000000000" + std::to_string(id)};
  e.ns = ns;
  e.event_type = type;
  e.payload = R"({"x": [1, 2]})";
  return e;
}

store::webhook_sink sink(const std::string& url, const namespace_id& ns, int max_attempts,
                         int timeout_ms, std::optional<std::vector<std::string>> types = {}) {
  store::webhook_sink s;
  s.url = url;
  s.ns = ns;
  s.max_attempts = max_attempts;
  s.timeout_ms = timeout_ms;
  s.event_types = std::move(types);
  return s;
}

http::outcome status(int code) {
  http::outcome o;
  o.resp = http::response{};
  o.resp->status = code;
  o.resp->reason = code == 200 ? "OK" : "Bad Gateway";
  return o;
}

} // namespace

CAF_TEST(each event goes to the matching sinks of its namespace with its eventId) {
  std::vector<store::outbox_event> events{event(1, ns_a, "TASK_COMPLETED"),
                                          event(2, ns_a, "TASK_STARTED"),
                                          event(3, ns_b, "TASK_COMPLETED")};
  events[0].workflow = workflow_id{"0190b3c0-0000-7000-8000-0000000000ff"};
  std::vector<store::webhook_sink> sinks{
    sink("http://a/all", ns_a, 10, 9000),
    sink("http://a/done", ns_a, 10, 100, std::vector<std::string>{"TASK_COMPLETED"})};
  auto plan = engine::plan_deliveries(events, sinks, {5000, 10});
  CAF_REQUIRE_EQUAL(plan.requests.size(), 3u);
  CAF_CHECK_EQUAL(plan.requests_of[0].size(), 2u);
  CAF_CHECK_EQUAL(plan.requests_of[1].size(), 1u); // filtered out of /done
  CAF_CHECK(plan.requests_of[2].empty());          // namespace b has no sink
  const auto& first = plan.requests[plan.requests_of[0][0]];
  CAF_CHECK_EQUAL(first.url, "http://a/all");
  CAF_CHECK_EQUAL(first.connect_timeout.count(), 5000); // relay.request_timeout_ms caps 9000
  CAF_CHECK_EQUAL(plan.requests[plan.requests_of[0][1]].read_timeout.count(), 100);
  CAF_CHECK(first.headers
            == http::header_list({{"Content-Type", "application/json"},
                                  {"Idempotency-Key", events[0].event.str()}}));
  auto body = boost::json::parse(first.body);
  CAF_CHECK(body == boost::json::parse(R"({"eventId": ")" + events[0].event.str()
                                       + R"(", "type": "TASK_COMPLETED", "workflowId": ")"
                                       + events[0].workflow->str()
                                       + R"(", "payload": {"x": [1, 2]}})"));
}

CAF_TEST(an event is published only when every sink took it) {
  std::vector<store::outbox_event> events{event(1, ns_a, "T"), event(2, ns_a, "T"),
                                          event(3, ns_b, "T")};
  std::vector<store::webhook_sink> sinks{sink("http://a/1", ns_a, 7, 1000),
                                         sink("http://a/2", ns_a, 3, 1000)};
  auto plan = engine::plan_deliveries(events, sinks, {5000, 10});
  std::vector<http::outcome> outcomes(plan.requests.size());
  outcomes[plan.requests_of[0][0]] = status(200);
  outcomes[plan.requests_of[0][1]] = status(200);
  outcomes[plan.requests_of[1][0]] = status(200);
  outcomes[plan.requests_of[1][1]] = status(502);
  auto v = engine::judge_deliveries(events, plan, outcomes, {5000, 10});
  CAF_CHECK_EQUAL(v.published, std::vector<int64_t>({1, 3})); // 3: nothing to deliver
  CAF_REQUIRE_EQUAL(v.failed.size(), 1u);
  // The failing sink allows 3 attempts: fewer than relay.max_attempts.
  CAF_REQUIRE_EQUAL(v.failed.count(3), 1u);
  CAF_CHECK_EQUAL(v.failed[3].front().id, 2);
  CAF_CHECK_EQUAL(v.failed[3].front().error, "sink http://a/2: HTTP 502 Bad Gateway");
  // relay.max_attempts caps a sink that allows more.
  outcomes[plan.requests_of[1][1]] = status(200);
  outcomes[plan.requests_of[1][0]].resp.reset();
  outcomes[plan.requests_of[1][0]].error = "connect a:80: timed out";
  auto capped = engine::judge_deliveries(events, plan, outcomes, {5000, 5});
  CAF_REQUIRE_EQUAL(capped.failed.count(5), 1u);
  CAF_CHECK_EQUAL(capped.failed[5].front().error, "sink http://a/1: connect a:80: timed out");
}

CAF_TEST(a sink the egress policy refuses dead-letters its event at the first failure) {
  std::vector<store::outbox_event> events{event(1, ns_a, "T"), event(2, ns_a, "T")};
  std::vector<store::webhook_sink> sinks{sink("http://169.254.169.254/", ns_a, 7, 1000)};
  auto plan = engine::plan_deliveries(events, sinks, {5000, 10});
  std::vector<http::outcome> outcomes(plan.requests.size());
  outcomes[plan.requests_of[0][0]].error = "refused by egress.deny: 169.254.169.254 is in "
                                          "169.254.0.0/16";
  outcomes[plan.requests_of[0][0]].refused = true;
  outcomes[plan.requests_of[1][0]].error = "connect 169.254.169.254:80: timed out";
  auto v = engine::judge_deliveries(events, plan, outcomes, {5000, 10});
  CAF_REQUIRE_EQUAL(v.failed.count(1), 1u);
  CAF_CHECK_EQUAL(v.failed[1].front().id, 1);
  CAF_CHECK_EQUAL(v.failed[1].front().error, "sink http://169.254.169.254/: refused by "
                                             "egress.deny: 169.254.169.254 is in 169.254.0.0/16");
  // An ordinary failure keeps its retries.
  CAF_REQUIRE_EQUAL(v.failed.count(7), 1u);
  CAF_CHECK_EQUAL(v.failed[7].front().id, 2);
}

CAF_TEST(a sink with a signing secret gets a timestamped HMAC-SHA256 of its exact body) {
  // Checked against `printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac sink-key`.
  CAF_CHECK_EQUAL(engine::sign_delivery("sink-key", 1700000000, R"({"a":1})"),
                  "sha256=5440584049c17b659c14bfcd326f6a1ffbc72f0781d0cc33a4c738ce2c148854");
  std::vector<store::outbox_event> events{event(1, ns_a, "T")};
  std::vector<store::webhook_sink> sinks{sink("http://127.0.0.1:9/signed", ns_a, 10, 1000),
                                         sink("http://localhost:9/plain", ns_a, 10, 1000)};
  sinks[0].signing_secret = "sink-key";
  engine::delivery_limits limits;
  limits.now_s = 1700000000;
  auto plan = engine::plan_deliveries(events, sinks, limits);
  CAF_REQUIRE_EQUAL(plan.requests.size(), 2u);
  const auto& signed_req = plan.requests[0];
  CAF_REQUIRE_EQUAL(signed_req.headers.size(), 4u);
  CAF_CHECK_EQUAL(signed_req.headers[2].first, "X-Nodeflow-Timestamp");
  CAF_CHECK_EQUAL(signed_req.headers[2].second, "1700000000");
  CAF_CHECK_EQUAL(signed_req.headers[3].first, "X-Nodeflow-Signature");
  CAF_CHECK_EQUAL(signed_req.headers[3].second,
                  engine::sign_delivery("sink-key", 1700000000, signed_req.body));
  CAF_CHECK_EQUAL(plan.requests[1].headers.size(), 2u); // no secret: unsigned
  CAF_CHECK(plan.refusals[0].empty() && plan.refusals[1].empty()); // loopback
}

CAF_TEST(plain http to a host other than loopback is refused unless allowed) {
  CAF_CHECK(engine::sink_url_refusal("https://hooks.example.com/x", false).empty());
  CAF_CHECK(engine::sink_url_refusal("http://127.0.0.1:8080/x", false).empty());
  CAF_CHECK(engine::sink_url_refusal("http://[::1]:8080/x", false).empty());
  auto why = engine::sink_url_refusal("http://hooks.example.com/x", false);
  CAF_CHECK(why.find("relay.allow_plain_http") != std::string::npos);
  CAF_CHECK(engine::sink_url_refusal("http://hooks.example.com/x", true).empty());
  std::vector<store::outbox_event> events{event(1, ns_a, "T")};
  std::vector<store::webhook_sink> sinks{sink("http://hooks.example.com/x", ns_a, 4, 1000)};
  auto plan = engine::plan_deliveries(events, sinks, {5000, 10});
  // Never sent: the unconfigured port would have answered with an error of its own.
  http::unconfigured_port port;
  auto outcomes = engine::perform_deliveries(port, plan, 4);
  CAF_REQUIRE_EQUAL(outcomes.size(), 1u);
  CAF_CHECK_EQUAL(outcomes[0].error, why);
  auto v = engine::judge_deliveries(events, plan, outcomes, {5000, 10});
  CAF_REQUIRE_EQUAL(v.failed.count(4), 1u);
  CAF_CHECK_EQUAL(v.failed[4].front().error, "sink http://hooks.example.com/x: " + why);
}
