#define CAF_SUITE store.outbox
#include "caf/test/unit_test.hpp"

#include <set>

#include "store/outbox.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("outbox") {}

  /// `n` deliverable events on `shard` (as written while a sink is enabled); returns
  /// their ids in insert order.
  std::vector<int64_t> insert_events(int n, int shard = 0) {
    std::vector<int64_t> ids;
    for (int i = 0; i < n; ++i)
      ids.push_back(count(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType", "payload",
                                                        "publishedAt")
                             VALUES ($1, '00000000-0000-0000-0000-000000000001', 'TASK_COMPLETED',
                                     jsonb_build_object('n', $2::int), NULL)
                             RETURNING "id")",
                          params::of(shard, i)));
    return ids;
  }

  /// An event written with "publishedAt" left to its default, migration 0013's rule (the
  /// engine's own inserts write a row only when it says deliverable). True when it was
  /// stored deliverable.
  bool written_deliverable() {
    auto id = count(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType")
                       VALUES (5, '00000000-0000-0000-0000-000000000001', 'TASK_COMPLETED')
                       RETURNING "id")");
    return count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "id" = $1 AND "publishedAt" IS NULL)",
                 params::of(id))
           == 1;
  }

  std::vector<outbox_event> claim(std::vector<shard_id> shards = {}, int limit = 100) {
    auto r = claim_outbox(conn, outbox_claim{std::move(shards), limit, 30});
    CAF_REQUIRE(r);
    return std::move(*r);
  }

  std::string event_id_of(int64_t id) {
    return scalar(R"(SELECT "eventId"::text FROM "OutboxEvents" WHERE "id" = $1)", params::of(id));
  }

  /// An event created `created_h` hours ago, published `published_h` hours ago (or not,
  /// when negative); returns its id.
  int64_t aged_event(int created_h, int published_h) {
    return count(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType", "createdAt",
                                                "publishedAt")
                    VALUES (0, '00000000-0000-0000-0000-000000000001', 'TASK_COMPLETED',
                            now() - make_interval(hours => $1::int),
                            CASE WHEN $2::int >= 0 THEN now() - make_interval(hours => $2::int) END)
                    RETURNING "id")",
                 params::of(created_h, published_h));
  }

  std::set<int64_t> remaining() {
    std::set<int64_t> ids;
    auto r = sql(R"(SELECT "id" FROM "OutboxEvents")");
    for (int i = 0; i < r.rows(); ++i)
      ids.insert(std::stoll(r.str(i, 0)));
    return ids;
  }

  /// Fails `id` until it is dead-lettered (policy: dead letter on the 3rd failure).
  void kill(int64_t id) {
    for (int i = 0; i < 3; ++i)
      CAF_REQUIRE(record_failures(conn, {delivery_failure{id, "down"}}, backoff_policy{10, 1000, 0, 3}));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(outbox_tests, fixture)

CAF_TEST(claims hand out deliverable events once until published or visible again) {
  auto ids = insert_events(3, 1);
  auto other = insert_events(1, 2);
  auto mine = claim({shard_id{1}});
  CAF_REQUIRE_EQUAL(mine.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    CAF_CHECK_EQUAL(mine[i].id, ids[i]);
    CAF_CHECK_EQUAL(mine[i].event.str(), event_id_of(ids[i]));
    CAF_CHECK_EQUAL(mine[i].event_type, "TASK_COMPLETED");
    CAF_CHECK_EQUAL(mine[i].payload, "{\"n\": " + std::to_string(i) + "}");
    CAF_CHECK_EQUAL(mine[i].attempts, 0);
  }
  CAF_CHECK(claim({shard_id{1}}).empty()); // hidden while claimed
  auto theirs = claim({});
  CAF_REQUIRE_EQUAL(theirs.size(), 1u);
  CAF_CHECK_EQUAL(theirs[0].id, other[0]);
  auto published = mark_published(conn, {ids[0], ids[1]});
  CAF_REQUIRE(published);
  CAF_CHECK_EQUAL(*published, 2);
  // The claim of ids[2] lapsed (its relay died): it is deliverable again, same eventId.
  sql(R"(UPDATE "OutboxEvents" SET "nextAttemptAt" = now() WHERE "publishedAt" IS NULL)");
  auto again = claim({shard_id{1}});
  CAF_REQUIRE_EQUAL(again.size(), 1u);
  CAF_CHECK_EQUAL(again[0].id, ids[2]);
  CAF_CHECK_EQUAL(again[0].event.str(), mine[2].event.str());
  auto twice = mark_published(conn, {ids[0]});
  CAF_REQUIRE(twice);
  CAF_CHECK_EQUAL(*twice, 0);
}

CAF_TEST(without sinks the shard s deliverable events are published without a claim) {
  auto ids = insert_events(3, 1);
  auto other = insert_events(1, 2);
  kill(ids[2]); // dead letters stay out of the hot path
  auto n = publish_undeliverable(conn, outbox_claim{{shard_id{1}}, 100, 30});
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(*n, 2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents"
                           WHERE "publishedAt" IS NOT NULL AND "attempts" = 0)"), 2);
  CAF_CHECK(claim({shard_id{1}}).empty());
  CAF_CHECK_EQUAL(claim({shard_id{2}}).size(), 1u); // another shard's event is untouched
  auto again = publish_undeliverable(conn, outbox_claim{{shard_id{1}}, 100, 30});
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(*again, 0);
  CAF_CHECK(!publish_undeliverable(conn, outbox_claim{{}, 0, 30})); // limit out of range
}

// Migration 0013: with no enabled sink an event has nowhere to go and is stored
// published, so the relay has nothing to do for it; with one it is deliverable.
CAF_TEST(an event written while no sink is enabled is stored published) {
  CAF_CHECK(!written_deliverable());
  test::enable_webhook_sink(conn);
  CAF_CHECK(written_deliverable());
  CAF_CHECK_EQUAL(claim({shard_id{5}}).size(), 1u);
  sql(R"(UPDATE "WebhookSinks" SET "enabled" = false)");
  CAF_CHECK(!written_deliverable());
  CAF_CHECK(claim({shard_id{5}}).empty());
}

CAF_TEST(failed deliveries back off exponentially then dead letter) {
  auto id = insert_events(1)[0];
  backoff_policy p{1000, 3600000, 0.5, 5};
  int64_t previous = 0;
  for (int n = 1; n <= 4; ++n) {
    auto r = record_failures(conn, {delivery_failure{id, "HTTP 503 #" + std::to_string(n)}}, p);
    CAF_REQUIRE(r);
    CAF_REQUIRE_EQUAL(r->size(), 1u);
    const auto& f = (*r)[0];
    CAF_CHECK_EQUAL(f.attempts, n);
    CAF_CHECK(!f.dead_lettered);
    int64_t base = 1000LL << (n - 1);
    // base·2^(n-1) … ×1.5 (jitter), measured from the server's now(); a little slack below.
    CAF_CHECK_GREATER_OR_EQUAL(f.retry_in_ms, base - 50);
    CAF_CHECK_LESS_OR_EQUAL(f.retry_in_ms, base * 3 / 2);
    CAF_CHECK_GREATER(f.retry_in_ms, previous);
    previous = f.retry_in_ms;
    CAF_CHECK(claim().empty()); // not due yet
    CAF_CHECK_EQUAL(scalar(R"(SELECT "lastError" FROM "OutboxEvents" WHERE "id" = $1)", params::of(id)),
                    "HTTP 503 #" + std::to_string(n));
  }
  auto last = record_failures(conn, {delivery_failure{id, "gone"}}, p);
  CAF_REQUIRE(last);
  CAF_REQUIRE_EQUAL(last->size(), 1u);
  CAF_CHECK((*last)[0].dead_lettered);
  CAF_CHECK_EQUAL((*last)[0].attempts, 5);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "id" = $1 AND "deadLetteredAt" IS NOT NULL)",
                        params::of(id)),
                  1);
  sql(R"(UPDATE "OutboxEvents" SET "nextAttemptAt" = now() - interval '1 hour')");
  CAF_CHECK(claim().empty()); // a dead letter is never claimed
  auto after = record_failures(conn, {delivery_failure{id, "again"}}, p);
  CAF_REQUIRE(after);
  CAF_CHECK(after->empty()); // nor failed again
  auto bad = record_failures(conn, {}, backoff_policy{1000, 10, 0, 3});
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(nf::message_of(bad.error()), "backoff_policy.max_ms: expected an integer >= base_ms, got 10");
}

CAF_TEST(dead letters page by keyset and replay with the same event id) {
  auto ids = insert_events(5);
  for (auto id : ids)
    kill(id);
  std::vector<int64_t> listed;
  std::optional<dead_letter_cursor> at;
  int pages = 0;
  do {
    auto page = list_dead_letters(conn, at, 2);
    CAF_REQUIRE(page);
    ++pages;
    for (const auto& e : page->events) {
      listed.push_back(e.id);
      CAF_CHECK_EQUAL(e.attempts, 3);
      CAF_CHECK_EQUAL(e.last_error.value_or(""), "down");
    }
    at = page->next;
  } while (at && pages < 10);
  CAF_CHECK_EQUAL(pages, 3);
  CAF_CHECK(listed == ids);
  auto replayed = replay_dead_letters(conn, {ids[1], ids[3]});
  CAF_REQUIRE(replayed);
  CAF_CHECK_EQUAL(*replayed, 2);
  auto back = claim();
  CAF_REQUIRE_EQUAL(back.size(), 2u);
  CAF_CHECK_EQUAL(back[0].id, ids[1]);
  CAF_CHECK_EQUAL(back[0].event.str(), event_id_of(ids[1]));
  CAF_CHECK_EQUAL(back[0].attempts, 0);
  CAF_CHECK_EQUAL(back[1].id, ids[3]);
  auto rest = replay_all_dead_letters(conn, 2);
  CAF_REQUIRE(rest);
  CAF_CHECK_EQUAL(*rest, 3);
  auto page = list_dead_letters(conn, std::nullopt, 10);
  CAF_REQUIRE(page);
  CAF_CHECK(page->events.empty());
  CAF_CHECK(!page->next);
  std::set<int64_t> deliverable;
  for (const auto& e : claim())
    deliverable.insert(e.id);
  CAF_CHECK((deliverable == std::set<int64_t>{ids[0], ids[2], ids[4]}));
}

CAF_TEST(events written by the worker path reach the outbox with their history seq) {
  // No sink yet: the lease's TASK_STARTED has nowhere to go and gets no outbox row; its
  // history row is written all the same.
  auto before = insert_workflow();
  insert_task(before, "a", "qo");
  lease_one("qo");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "workflowId" = $1)",
                        params::of(before)),
                  0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                        params::of(before)),
                  1);
  test::enable_webhook_sink(conn);
  auto wf = insert_workflow();
  insert_task(wf, "a", "qo");
  auto t = lease_one("qo");
  auto got = claim({shard_id{shard_of(wf)}});
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].workflow->str(), wf.str());
  CAF_CHECK_EQUAL(got[0].event_type, "TASK_STARTED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT ("payload"->>'seq') || '/' || ("payload"->>'taskId') || '/' ||
                                   ("payload"->'data'->>'workerId')
                              FROM "OutboxEvents" WHERE "id" = $1)",
                         params::of(got[0].id)),
                  "1/" + t.task.str() + "/w1");
}

CAF_TEST(retention deletes the events published before its horizon and keeps the rest) {
  constexpr int64_t day = 86400;
  auto old_published = aged_event(72, 72);
  auto recently_published = aged_event(72, 1);
  auto deliverable = aged_event(72, -1);
  auto dead = aged_event(72, -1);
  kill(dead);
  auto old_behind_kept = aged_event(72, 48);
  auto young = aged_event(0, 0);
  // Two rows per statement: the walk goes past the rows it keeps, over three statements.
  auto n = prune_published_outbox(conn, day, 2);
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(*n, 2);
  CAF_CHECK(remaining() == (std::set<int64_t>{recently_published, deliverable, dead, young}));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "id" IN ($1, $2))",
                        params::of(old_published, old_behind_kept)),
                  0);
  // Nothing left to delete: a second walk deletes nothing.
  auto again = prune_published_outbox(conn, day, 2);
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(*again, 0);
}

CAF_TEST(the retention walk stops at the first event created within its horizon) {
  auto before = aged_event(72, 72);
  auto young = aged_event(0, 0);
  // Not something the engine writes (ids grow with time): it shows the walk ends at `young`.
  auto after = aged_event(72, 72);
  auto n = prune_published_outbox(conn, 86400, 1);
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(*n, 1);
  CAF_CHECK(remaining() == (std::set<int64_t>{young, after}));
  CAF_CHECK(before < young);
}

CAF_TEST(retention refuses a negative horizon or batch size out of range) {
  aged_event(72, 72);
  auto negative = prune_published_outbox(conn, -1);
  CAF_REQUIRE(!negative);
  CAF_CHECK_NOT_EQUAL(nf::message_of(negative.error()).find("retention_s"), std::string::npos);
  auto batch = prune_published_outbox(conn, 0, 0);
  CAF_REQUIRE(!batch);
  CAF_CHECK_NOT_EQUAL(nf::message_of(batch.error()).find("batch"), std::string::npos);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents")"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
