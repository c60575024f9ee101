#define CAF_SUITE e2e.relay
#include "caf/test/unit_test.hpp"

#include <functional>
#include <map>
#include <random>
#include <set>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([{"name": "step", "responseTimeoutSeconds": 60},
  {"name": "e2e_events", "version": 1, "tasks": [
    {"name": "step", "taskReferenceName": "fine", "inputParameters": {"n": "${workflow.input.n}"}}]},
  {"name": "e2e_poisoned", "version": 1, "tasks": [
    {"name": "step", "taskReferenceName": "poison_pill", "inputParameters": {"n": 0}}]}])";

void add_sink(test::e2e_fixture& f, const std::string& url, int max_attempts) {
  f.sql(R"(INSERT INTO "WebhookSinks" ("namespaceId", "url", "maxAttempts", "timeoutMs")
           VALUES ('00000000-0000-0000-0000-000000000001', $1, $2, 2000))",
        store::params::of(url, max_attempts));
}

std::string event_id_of(const test::seen_request& r) {
  boost::json::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("eventId"))
    return {};
  return std::string{v.at("eventId").as_string()};
}

// A webhook sink that answers `status` to the requests `fails` picks and notes their
// numbers (the handler runs under the server's lock; read `failed` once the run is over).
struct failing_sink {
  std::set<size_t> failed;
  test::http_test_server server; // after what its handler uses: destroyed first

  failing_sink(int status, std::function<bool(const test::seen_request&)> fails) {
    server.on_request([this, status, fails = std::move(fails)](const test::seen_request& r,
                                                               size_t n) {
      test::canned_reply c;
      if (fails(r)) {
        c.status = status;
        failed.insert(n);
      }
      return c;
    });
  }
};

// Event ids the sink accepted (answered 2xx), given which request numbers it failed.
std::set<std::string> accepted_ids(const std::vector<test::seen_request>& seen,
                                   const std::set<size_t>& failed) {
  std::set<std::string> out;
  for (size_t i = 0; i < seen.size(); ++i)
    if (failed.count(i) == 0)
      out.insert(event_id_of(seen[i]));
  return out;
}

std::set<std::string> outbox_ids(test::e2e_fixture& f, const std::string& where = "true") {
  auto r = f.sql(R"(SELECT "eventId" FROM "OutboxEvents" WHERE )" + where);
  std::set<std::string> out;
  for (int i = 0; i < r.rows(); ++i)
    out.insert(r.str(i, 0));
  return out;
}

} // namespace

CAF_TEST(a sink failing 30 percent of the time still receives every event) {
  test::e2e_fixture f{"e2e_relay_flaky", {{"relay.max_attempts", "40"}}};
  auto seed = std::random_device{}();
  CAF_MESSAGE("sink failure seed " << seed);
  std::mt19937 rng{seed};
  failing_sink sink{503, [&](const test::seen_request&) { return rng() % 10 < 3; }};
  add_sink(f, sink.server.url("/events"), 40);
  f.start_node();
  f.define(definitions);
  test::worker_pool workers{f.client_opts(), {"step"}, 2, test::echo_handler(), 4};
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i)
    ids.push_back(f.start("e2e_events", R"({"n": )" + std::to_string(i) + "}"));
  for (const auto& id : ids)
    CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "publishedAt" IS NULL)",
                            0, 90s));
  workers.stop();
  auto seen = sink.server.requests();
  auto all = outbox_ids(f);
  CAF_MESSAGE(all.size() << " events, " << seen.size() << " deliveries, " << sink.failed.size()
                         << " failed");
  CAF_CHECK_GREATER(all.size(), 20u * 3);
  CAF_CHECK_GREATER(sink.failed.size(), 0u);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL)"),
                  0);
  // Deduped by event id, the sink got exactly the outbox.
  CAF_CHECK(accepted_ids(seen, sink.failed) == all);
  // Every delivery names its event in the Idempotency-Key header.
  for (const auto& r : seen) {
    CAF_CHECK_EQUAL(r.method, "POST");
    CAF_CHECK_EQUAL(r.header("Idempotency-Key"), event_id_of(r));
  }
  CAF_CHECK(f.stop_node());
}

CAF_TEST(poison events dead letter and can be replayed) {
  test::e2e_fixture f{"e2e_relay_poison"};
  std::atomic<bool> healed{false};
  failing_sink sink{500, [&](const test::seen_request& r) {
    return !healed && r.body.find("poison_pill") != std::string::npos;
  }};
  add_sink(f, sink.server.url("/events"), 3);
  f.start_node();
  f.define(definitions);
  test::worker_pool workers{f.client_opts(), {"step"}, 2, test::echo_handler()};
  std::vector<std::string> ids{f.start("e2e_events", R"({"n": 1})"), f.start("e2e_poisoned"),
                               f.start("e2e_events", R"({"n": 2})")};
  for (const auto& id : ids)
    CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  // What the sink refuses: every event whose body names the poisoned task.
  const std::string poisoned = R"("payload"::text LIKE '%poison_pill%')";
  // Nothing deliverable left: the poison events dead-lettered after 3 attempts.
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "OutboxEvents"
                               WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL)",
                            0, 90s));
  auto dead = outbox_ids(f, R"("deadLetteredAt" IS NOT NULL)");
  CAF_CHECK(!dead.empty());
  CAF_CHECK(dead == outbox_ids(f, poisoned));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL
                             AND "attempts" <> 3)"),
                  0);
  // The dead letters are listed through the protocol, with their last error.
  auto listed = f.api->deadletters(msg::deadletter_request{"list", {}, 0, 100});
  CAF_REQUIRE(listed);
  std::set<std::string> listed_ids;
  auto listing = boost::json::parse(*listed);
  for (const auto& e : listing.at("deadLetters").as_array()) {
    listed_ids.insert(std::string{e.at("eventId").as_string()});
    CAF_CHECK(e.at("lastError").is_string()
              && std::string{e.at("lastError").as_string()}.find("HTTP 500") != std::string::npos);
  }
  CAF_CHECK(listed_ids == dead);
  // Healed sink, replay: every dead letter is delivered and the dead-letter list empties.
  healed = true;
  auto replayed = f.api->deadletters(msg::deadletter_request{"replay", {}, 0, 100});
  CAF_REQUIRE(replayed);
  CAF_CHECK(boost::json::parse(*replayed).at("replayed") == static_cast<int64_t>(dead.size()));
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "publishedAt" IS NULL)",
                            0, 60s));
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL)"),
                  0);
  auto seen = sink.server.requests();
  CAF_CHECK(accepted_ids(seen, sink.failed) == outbox_ids(f));
  listed = f.api->deadletters(msg::deadletter_request{"list", {}, 0, 100});
  CAF_REQUIRE(listed);
  CAF_CHECK(boost::json::parse(*listed).at("deadLetters").as_array().empty());
  workers.stop();
  CAF_CHECK(f.stop_node());
}
