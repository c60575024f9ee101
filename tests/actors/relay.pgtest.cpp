#define CAF_SUITE actors.relay
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <set>
#include <thread>

#include <boost/json/parse.hpp>

#include "actors/relay/outbox_relay.hpp"
#include "actors/relay/relay.hpp"
#include "store/outbox.hpp"
#include "tests/actors/partition_actors_fixture.hpp"
#include "tests/support/http_test_server.hpp"
#include "net/http/client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int16_t shard = 5;

struct fixture : test::partition_actors_fixture {
  test::http_test_server sink;

  fixture() : partition_actors_fixture("actors_relay") {
    sql(R"(DELETE FROM "WebhookSinks")");
  }

  caf::actor relay(std::vector<std::pair<std::string, std::string>> overrides = {}) {
    overrides.emplace_back("relay.base_backoff_ms", "10");
    overrides.emplace_back("relay.max_backoff_ms", "40");
    // As a node does: the partition's relay joins an outbox relay that delivers.
    auto ctx = context(shard, std::move(overrides));
    actors::outbox_relay_context o;
    o.http = std::make_shared<nf::http::beast_client>();
    o.dsn = ctx.dsn;
    o.settings = ctx.settings;
    ctx.outbox_relay = keep(actors::spawn_outbox_relay(sys, o));
    return keep(actors::spawn_relay(sys, ctx));
  }

  void add_sink(const std::string& url, int max_attempts = 10, const std::string& types = "NULL") {
    sql(R"(INSERT INTO "WebhookSinks" ("namespaceId", "url", "maxAttempts", "timeoutMs", "eventTypes")
           VALUES ('00000000-0000-0000-0000-000000000001', $1, $2, 2000, )" + types + ")",
        store::params::of(url, max_attempts));
  }

  /// `n` deliverable events of `type` on the relay's partition (as written while a sink
  /// was enabled, migration 0013); returns their eventIds.
  std::vector<std::string> insert_events(int n, const std::string& type = "TASK_COMPLETED") {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i)
      ids.push_back(scalar(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType", "payload",
                                                         "publishedAt")
                              VALUES ($1, '00000000-0000-0000-0000-000000000001', $2,
                                      jsonb_build_object('n', $3::int), NULL)
                              RETURNING "eventId")",
                           store::params::of(shard, type, i)));
    return ids;
  }

  /// Waits (up to 30 s) until `sql_count` returns `want`.
  bool await_count(const std::string& sql_count, int64_t want) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (count(sql_count) != want) {
      if (std::chrono::steady_clock::now() >= deadline)
        return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
};

const std::string published = R"(SELECT count(*) FROM "OutboxEvents" WHERE "publishedAt" IS NOT NULL)";
const std::string dead = R"(SELECT count(*) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL)";

} // namespace

CAF_TEST_FIXTURE_SCOPE(relay_tests, fixture)

CAF_TEST(a sink failing 30 percent of requests still receives every event) {
  sink.on_request([](const test::seen_request&, size_t n) {
    return n % 10 < 3 ? test::canned_reply{500, "down"} : test::canned_reply{};
  });
  add_sink(sink.url());
  auto ids = insert_events(20);
  relay({{"relay.poll_interval_ms", "50"}});
  CAF_REQUIRE(await_count(published, 20));
  CAF_CHECK_EQUAL(count(dead), 0);
  // Dedupe by Idempotency-Key: every event arrived with a 2xx at least once, under its
  // stable eventId, whatever the retries sent twice.
  std::set<std::string> delivered;
  auto seen = sink.requests();
  for (size_t n = 0; n < seen.size(); ++n) {
    const auto& r = seen[n];
    CAF_CHECK_EQUAL(r.method, "POST");
    CAF_CHECK_EQUAL(r.target, "/hook");
    CAF_CHECK_EQUAL(r.header("Content-Type"), "application/json");
    auto body = boost::json::parse(r.body).as_object();
    CAF_CHECK_EQUAL(std::string{body.at("eventId").as_string()}, r.header("Idempotency-Key"));
    CAF_CHECK_EQUAL(std::string{body.at("type").as_string()}, "TASK_COMPLETED");
    CAF_CHECK(body.at("workflowId").is_null());
    CAF_CHECK(body.at("payload").as_object().contains("n"));
    if (n % 10 >= 3)
      delivered.insert(r.header("Idempotency-Key"));
  }
  CAF_CHECK_EQUAL(delivered, std::set<std::string>(ids.begin(), ids.end()));
  CAF_CHECK_GREATER(seen.size(), 20u); // the failures were retried
}

CAF_TEST(a poison event dead-letters after max attempts and replays after the sink recovers) {
  std::atomic<bool> broken{true};
  sink.on_request([&](const test::seen_request&, size_t) {
    return broken ? test::canned_reply{500, "poison"} : test::canned_reply{};
  });
  add_sink(sink.url(), 3);
  auto ids = insert_events(1);
  relay({{"relay.poll_interval_ms", "50"}});
  CAF_REQUIRE(await_count(dead, 1));
  CAF_CHECK_EQUAL(sink.requests().size(), 3u); // exactly the sink's maxAttempts
  CAF_CHECK_EQUAL(scalar(R"(SELECT "lastError" FROM "OutboxEvents")"),
                  "sink " + sink.url() + ": HTTP 500 Internal Server Error");
  auto page = store::list_dead_letters(conn, std::nullopt, 10);
  CAF_REQUIRE(page);
  CAF_REQUIRE_EQUAL(page->events.size(), 1u);
  broken = false;
  CAF_REQUIRE(store::replay_dead_letters(conn, {page->events[0].id}));
  CAF_REQUIRE(await_count(published, 1));
  auto seen = sink.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 4u);
  for (const auto& r : seen)
    CAF_CHECK_EQUAL(r.header("Idempotency-Key"), ids[0]); // a replay keeps the eventId
}

CAF_TEST(an outbox hint delivers at once long before the next poll) {
  add_sink(sink.url());
  auto before = backends();
  auto r = relay({{"relay.poll_interval_ms", "60000"}});
  await_round(before, R"("nextAttemptAt" <= now())");
  insert_events(2);
  self->send(r, outbox_atom_v);
  CAF_CHECK(await_count(published, 2));
  CAF_CHECK_EQUAL(sink.requests().size(), 2u);
}

CAF_TEST(without a sink a hint starts no round and the poll publishes) {
  // One event waits already: the relay's first round publishing it is what says that round
  // is over (a backend idle with the round's statement as its last query may only have
  // prepared it).
  insert_events(1);
  auto r = relay({{"relay.poll_interval_ms", "60000"}});
  CAF_REQUIRE(await_count(published, 1)); // the first poll: no sink
  insert_events(2); // written while a sink existed, since disabled
  for (int i = 0; i < 3; ++i)
    self->send(r, outbox_atom_v);
  std::this_thread::sleep_for(300ms); // a round per hint would publish within milliseconds
  CAF_CHECK_EQUAL(count(published), 1);
  relay({{"relay.poll_interval_ms", "50"}});
  CAF_CHECK(await_count(published, 3));
}

CAF_TEST(only matching sinks of the event s namespace get it) {
  test::http_test_server other;
  add_sink(sink.url(), 10, "ARRAY['TASK_COMPLETED']");
  add_sink(other.url(), 10, "ARRAY['WORKFLOW_COMPLETED']");
  insert_events(1, "TASK_COMPLETED");
  insert_events(1, "TASK_STARTED"); // no sink wants it: published without a request
  relay({{"relay.poll_interval_ms", "50"}});
  CAF_REQUIRE(await_count(published, 2));
  CAF_CHECK_EQUAL(sink.requests().size(), 1u);
  CAF_CHECK(other.requests().empty());
}

CAF_TEST(an unreachable sink is a failed attempt with the reason recorded) {
  std::string url;
  {
    test::http_test_server gone;
    url = gone.url();
  } // closed: nothing listens there any more
  add_sink(url, 2);
  insert_events(1);
  relay({{"relay.poll_interval_ms", "50"}});
  CAF_REQUIRE(await_count(dead, 1));
  auto error = scalar(R"(SELECT "lastError" FROM "OutboxEvents")");
  CAF_CHECK(error.find("connect 127.0.0.1:") != std::string::npos);
  CAF_CHECK_EQUAL(count(R"(SELECT "attempts" FROM "OutboxEvents")"), 2);
}

CAF_TEST(a sink the egress policy refuses dead-letters its events at once with the reason) {
  add_sink("http://169.254.169.254/hook", 5);
  insert_events(1);
  // Plain http, so that the egress policy is what refuses it (relay.allow_plain_http).
  relay({{"relay.poll_interval_ms", "50"}, {"relay.allow_plain_http", "true"}});
  CAF_REQUIRE(await_count(dead, 1));
  CAF_CHECK_EQUAL(scalar(R"(SELECT "lastError" FROM "OutboxEvents")"),
                  "sink http://169.254.169.254/hook: refused by egress.deny: 169.254.169.254 is in "
                  "169.254.0.0/16");
  CAF_CHECK_EQUAL(count(R"(SELECT "attempts" FROM "OutboxEvents")"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
