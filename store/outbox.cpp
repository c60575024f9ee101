#include "store/outbox.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// The columns read_event() reads (event_columns finds them by name).
#define NF_OUTBOX_COLUMNS \
  R"(o."id", o."eventId", o."shard", o."namespaceId", o."workflowId", o."eventType", o."payload"::text, o."attempts", o."lastError")"

// Up to $2 deliverable events, oldest first, of one shard ($1, the relay's: a range scan of
// the deliverable index that stops after the batch, migration 0011) or of the shards $1 (all
// when NULL: the whole deliverable index, sorted; tools and tests only). §4.6: both IS NULL
// terms keep the claim on the partial deliverable index.
#define NF_OUTBOX_DELIVERABLE(shard_test)                                                    \
  R"(WITH c AS (SELECT "id" FROM "OutboxEvents")"                                           \
  R"( WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL AND "nextAttemptAt" <= now())" \
  R"( AND )" shard_test                                                                      \
  R"( ORDER BY "nextAttemptAt", "id" LIMIT $2 FOR UPDATE SKIP LOCKED))"
#define NF_ONE_SHARD R"("shard" = $1::smallint)"
#define NF_SOME_SHARDS R"(($1::smallint[] IS NULL OR "shard" = ANY($1::smallint[])))"

// Up to $2 deliverable events of the shards $1, taken shard by shard in the array's order:
// per shard the same bounded range scan as above, and the outer LIMIT stops at the first
// shards that fill the batch, so a backlog costs a batch, never a sort of all of it. A
// node's outbox relay serves all its shards this way and rotates the order each round.
#define NF_OUTBOX_DELIVERABLE_EACH                                                             \
  R"(WITH c AS (SELECT e."id" FROM unnest($1::smallint[]) AS s(shard) CROSS JOIN LATERAL ()"  \
  R"(SELECT "id" FROM "OutboxEvents")"                                                        \
  R"( WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL AND "nextAttemptAt" <= now())" \
  R"( AND "shard" = s.shard)"                                                                 \
  R"( ORDER BY "nextAttemptAt", "id" LIMIT $2 FOR UPDATE SKIP LOCKED) e LIMIT $2))"

#define NF_OUTBOX_CLAIM                                                                      \
  R"( UPDATE "OutboxEvents" o SET "nextAttemptAt" = now() + make_interval(secs => $3::int))" \
  R"( FROM c WHERE o."id" = c."id" RETURNING )" NF_OUTBOX_COLUMNS
constexpr statement claim_one{"outbox.claim_one", NF_OUTBOX_DELIVERABLE(NF_ONE_SHARD) NF_OUTBOX_CLAIM};
constexpr statement claim_some{"outbox.claim", NF_OUTBOX_DELIVERABLE(NF_SOME_SHARDS) NF_OUTBOX_CLAIM};
constexpr statement claim_each{"outbox.claim_each", NF_OUTBOX_DELIVERABLE_EACH NF_OUTBOX_CLAIM};

// Only while no sink is enabled, in the statement's own snapshot: an event is written
// deliverable only while a sink is enabled, so a sink made since the relay last read its
// sinks is visible here whenever its events are, and they stay to be delivered to it.
#define NF_OUTBOX_PUBLISH                                                                  \
  R"( UPDATE "OutboxEvents" o SET "publishedAt" = now() FROM c WHERE o."id" = c."id")"     \
  R"( AND NOT EXISTS (SELECT 1 FROM "WebhookSinks" WHERE "enabled"))"
constexpr statement publish_unrouted_one{"outbox.publish_unrouted_one",
                                         NF_OUTBOX_DELIVERABLE(NF_ONE_SHARD) NF_OUTBOX_PUBLISH};
constexpr statement publish_unrouted_some{"outbox.publish_unrouted",
                                          NF_OUTBOX_DELIVERABLE(NF_SOME_SHARDS) NF_OUTBOX_PUBLISH};
constexpr statement publish_unrouted_each{"outbox.publish_unrouted_each",
                                          NF_OUTBOX_DELIVERABLE_EACH NF_OUTBOX_PUBLISH};

constexpr statement publish{"outbox.publish", R"(
UPDATE "OutboxEvents" SET "publishedAt" = now()
 WHERE "id" = ANY($1::bigint[]) AND "publishedAt" IS NULL)"};

// $3 base ms, $4 max ms, $5 jitter, $6 max attempts. The wait doubles per failure; the
// exponent is capped so power() stays finite.
constexpr statement fail{"outbox.record_failure", R"(
UPDATE "OutboxEvents" o
   SET "attempts" = o."attempts" + 1, "lastError" = u.err,
       "nextAttemptAt" = CASE WHEN o."attempts" + 1 >= $6::int THEN o."nextAttemptAt"
         ELSE now() + make_interval(secs => LEAST($4::float8,
                $3::float8 * power(2, LEAST(o."attempts", 62)) * (1 + $5::float8 * random())) / 1000)
         END,
       "deadLetteredAt" = CASE WHEN o."attempts" + 1 >= $6::int THEN now() END
  FROM unnest($1::bigint[], $2::text[]) AS u(id, err)
 WHERE o."id" = u.id AND o."publishedAt" IS NULL AND o."deadLetteredAt" IS NULL
RETURNING o."id", o."attempts", o."deadLetteredAt" IS NOT NULL AS dead_lettered,
          CASE WHEN o."deadLetteredAt" IS NULL
               THEN GREATEST(0, extract(epoch FROM o."nextAttemptAt" - now()) * 1000)::bigint
               ELSE 0 END AS retry_in_ms)"};

constexpr statement dead_letters{"outbox.dead_letters", R"(
SELECT )" NF_OUTBOX_COLUMNS R"(, o."deadLetteredAt" FROM "OutboxEvents" o
 WHERE o."deadLetteredAt" IS NOT NULL AND o."namespaceId" = $4
   AND ($1::timestamptz IS NULL OR (o."deadLetteredAt", o."id") > ($1::timestamptz, $2::bigint))
 ORDER BY o."deadLetteredAt", o."id" LIMIT $3)"};

// Same "eventId": a replay is a redelivery, and consumers dedupe on it.
constexpr statement replay{"outbox.replay", R"(
UPDATE "OutboxEvents" SET "deadLetteredAt" = NULL, "attempts" = 0, "nextAttemptAt" = now()
 WHERE "id" = ANY($1::bigint[]) AND "deadLetteredAt" IS NOT NULL AND "namespaceId" = $2)"};

constexpr statement replay_before{"outbox.replay_before", R"(
WITH c AS (
  SELECT "id" FROM "OutboxEvents"
   WHERE "deadLetteredAt" IS NOT NULL AND "deadLetteredAt" <= $1::timestamptz
     AND "namespaceId" = $3
   ORDER BY "deadLetteredAt", "id" LIMIT $2 FOR UPDATE SKIP LOCKED)
UPDATE "OutboxEvents" o SET "deadLetteredAt" = NULL, "attempts" = 0, "nextAttemptAt" = now()
  FROM c WHERE o."id" = c."id")"};

// "eventTypes" as JSON: a text[] in text format would need a parser of its own.
constexpr statement sinks{"outbox.sinks", R"(
SELECT "id", "namespaceId", "url", array_to_json("eventTypes")::text AS event_types, "maxAttempts",
       "timeoutMs", "signingSecret"
  FROM "WebhookSinks" WHERE "enabled" ORDER BY "namespaceId", "id")"};

constexpr statement server_now{"outbox.now", "SELECT now() AS server_now"};

// One step of the retention walk: the next $3 rows after the id $1 in key order, of which
// those published more than $2 seconds ago are deleted. The walk follows the primary key
// because there is no "publishedAt" index (the seed's two indexes are partial, and a third
// would cost every insert and publish). A published row is never written again, so the
// delete's re-check of "publishedAt" only guards against a hand edit. The step also says
// whether it met a row created within the horizon: a row is published after it is created
// and ids grow with time, so from there on nothing is old enough and the walk stops,
// rather than reading the horizon's rows on every pass. Rows it keeps (deliverable,
// dead-lettered, recent) are only read. The ids go to the delete as an array, which it
// probes in the primary key: joined to the CTE, the delete was planned as a hash join over
// a scan of the whole table (88 ms for 10,000 rows of 400,000; 22 ms this way).
constexpr statement prune_step{"outbox.prune_published", R"(
WITH w AS (
  SELECT "id", "publishedAt", "createdAt" FROM "OutboxEvents"
   WHERE "id" > $1 ORDER BY "id" LIMIT $3),
d AS (
  DELETE FROM "OutboxEvents" o
   WHERE o."id" = ANY (ARRAY(SELECT w."id" FROM w
                              WHERE w."publishedAt" < now() - make_interval(secs => $2::bigint)))
     AND o."publishedAt" < now() - make_interval(secs => $2::bigint)
  RETURNING 1)
SELECT (SELECT count(*) FROM d) AS deleted, (SELECT count(*) FROM w) AS scanned,
       COALESCE((SELECT max("id") FROM w), $1) AS last_id,
       EXISTS (SELECT 1 FROM w WHERE "createdAt" >= now() - make_interval(secs => $2::bigint))
         AS reached_recent)"};

/// Where a result holds NF_OUTBOX_COLUMNS.
struct event_columns {
  explicit event_columns(const result& r)
    : id(r.column_named("id")), event(r.column_named("eventId")), shard(r.column_named("shard")),
      ns(r.column_named("namespaceId")), workflow(r.column_named("workflowId")),
      event_type(r.column_named("eventType")), payload(r.column_named("payload")),
      attempts(r.column_named("attempts")), last_error(r.column_named("lastError")) {}
  int id, event, shard, ns, workflow, event_type, payload, attempts, last_error;
};

outbox_event read_event(const result& r, const event_columns& c, int i) {
  outbox_event e;
  e.id = r.i64(i, c.id);
  e.event = event_id{r.str(i, c.event)};
  e.shard = static_cast<int16_t>(r.i64(i, c.shard));
  e.ns = namespace_id{r.str(i, c.ns)};
  if (!r.is_null(i, c.workflow))
    e.workflow = workflow_id{r.str(i, c.workflow)};
  e.event_type = r.str(i, c.event_type);
  e.payload = r.str(i, c.payload);
  e.attempts = r.i32(i, c.attempts);
  e.last_error = r.opt_str(i, c.last_error);
  return e;
}

/// Runs an UPDATE over `"id" = ANY($1)`; returns the rows it changed.
caf::expected<int64_t> update_by_ids(connection& conn, const statement& st,
                                     const std::vector<int64_t>& ids) {
  if (ids.empty())
    return 0;
  auto r = conn.run(st, params::of(int_array(ids)));
  if (!r)
    return std::move(r.error());
  return r->affected();
}

/// The forms of one claim: one shard, several shards in order, every shard.
struct claim_forms {
  const statement& one;
  const statement& each;
  const statement& all;
};

/// Runs the form of a claim that fits the shards named ($1 the shard or shards, $2 the
/// limit, then `more`).
caf::expected<result> run_for_shards(connection& conn, const claim_forms& forms,
                                     const std::vector<shard_id>& shards, int limit,
                                     std::optional<int> more,
                                     const partition_fence& fence = {}) {
  std::vector<int64_t> values;
  for (auto s : shards)
    values.push_back(s.value());
  auto p = shards.size() == 1 ? params::of(values.front(), limit)
           : shards.empty()   ? params::of(shard_filter(shards), limit)
                              : params::of(int_array(values), limit);
  if (more)
    p.add(*more);
  const auto& st = shards.size() == 1 ? forms.one : shards.empty() ? forms.all : forms.each;
  if (fence.empty())
    return conn.run(st, p);
  // The fence first, in the same round trip: its error stops the claim from running.
  pipeline both{conn};
  add_fence_check(both, fence);
  both.add(st, std::move(p));
  auto rs = both.run();
  if (!rs)
    return std::move(rs.error());
  return std::move(rs->back());
}

caf::error out_of_range(const std::string& field, const std::string& expected, int64_t got) {
  return make_error(errc::invalid, field + ": expected " + expected + ", got " + std::to_string(got));
}

} // namespace

caf::expected<std::vector<outbox_event>> claim_outbox(connection& conn, const outbox_claim& c) {
  if (c.limit < 1 || c.limit > 10000)
    return out_of_range("outbox_claim.limit", "an integer 1 … 10000", c.limit);
  if (c.visibility_seconds < 1)
    return out_of_range("outbox_claim.visibility_seconds", "an integer >= 1", c.visibility_seconds);
  auto r = run_for_shards(conn, {claim_one, claim_each, claim_some}, c.shards, c.limit,
                          c.visibility_seconds, c.fence);
  if (!r)
    return std::move(r.error());
  std::vector<outbox_event> out;
  const event_columns ec{*r};
  for (int i = 0; i < r->rows(); ++i)
    out.push_back(read_event(*r, ec, i));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

caf::expected<int64_t> mark_published(connection& conn, const std::vector<int64_t>& ids) {
  return update_by_ids(conn, publish, ids);
}

caf::expected<int64_t> publish_undeliverable(connection& conn, const outbox_claim& c) {
  if (c.limit < 1 || c.limit > 10000)
    return out_of_range("outbox_claim.limit", "an integer 1 … 10000", c.limit);
  auto r = run_for_shards(conn, {publish_unrouted_one, publish_unrouted_each,
                                 publish_unrouted_some},
                          c.shards, c.limit, std::nullopt, c.fence);
  if (!r)
    return std::move(r.error());
  return r->affected();
}

caf::expected<std::vector<failure_outcome>>
record_failures(connection& conn, const std::vector<delivery_failure>& failures,
                const backoff_policy& p) {
  if (p.base_ms < 1)
    return out_of_range("backoff_policy.base_ms", "an integer >= 1", p.base_ms);
  if (p.max_ms < p.base_ms)
    return out_of_range("backoff_policy.max_ms", "an integer >= base_ms", p.max_ms);
  if (!(p.jitter >= 0 && p.jitter < 1))
    return make_error(errc::invalid, "backoff_policy.jitter: expected a number in [0, 1), got "
                                       + std::to_string(p.jitter));
  if (p.max_attempts < 1)
    return out_of_range("backoff_policy.max_attempts", "an integer >= 1", p.max_attempts);
  std::vector<failure_outcome> out;
  if (failures.empty())
    return out;
  std::vector<int64_t> ids;
  std::vector<std::string> errors;
  for (const auto& f : failures) {
    ids.push_back(f.id);
    errors.push_back(f.error);
  }
  auto r = conn.run(fail, params::of(int_array(ids), text_array(errors), p.base_ms, p.max_ms,
                                     p.jitter, p.max_attempts));
  if (!r)
    return std::move(r.error());
  const int id = r->column_named("id"), attempts = r->column_named("attempts"),
            dead = r->column_named("dead_lettered"), retry_in = r->column_named("retry_in_ms");
  for (int i = 0; i < r->rows(); ++i)
    out.push_back(failure_outcome{r->i64(i, id), r->i32(i, attempts), r->boolean(i, dead),
                                  r->i64(i, retry_in)});
  return out;
}

caf::expected<dead_letter_page>
list_dead_letters(connection& conn, const std::optional<dead_letter_cursor>& after, int limit,
                  const namespace_id& ns) {
  if (limit < 1 || limit > 1000)
    return out_of_range("limit", "an integer 1 … 1000", limit);
  std::optional<std::string> at;
  std::optional<int64_t> id;
  if (after) {
    at = after->dead_lettered_at;
    id = after->id;
  }
  auto r = conn.run(dead_letters, params::of(at, id, limit, ns));
  if (!r)
    return std::move(r.error());
  dead_letter_page page;
  const event_columns ec{*r};
  for (int i = 0; i < r->rows(); ++i)
    page.events.push_back(read_event(*r, ec, i));
  if (r->rows() == limit)
    page.next = dead_letter_cursor{r->str(limit - 1, r->column_named("deadLetteredAt")),
                                   r->i64(limit - 1, ec.id)};
  return page;
}

caf::expected<int64_t> replay_dead_letters(connection& conn, const std::vector<int64_t>& ids,
                                           const namespace_id& ns) {
  if (ids.empty())
    return 0;
  auto r = conn.run(replay, params::of(int_array(ids), ns));
  if (!r)
    return std::move(r.error());
  return r->affected();
}

caf::expected<int64_t> replay_all_dead_letters(connection& conn, int batch,
                                               const namespace_id& ns) {
  if (batch < 1 || batch > 10000)
    return out_of_range("batch", "an integer 1 … 10000", batch);
  auto cutoff = conn.run1(server_now);
  if (!cutoff)
    return std::move(cutoff.error());
  auto before = cutoff->str(0, cutoff->column_named("server_now"));
  int64_t total = 0;
  for (;;) {
    auto r = conn.run(replay_before, params::of(before, batch, ns));
    if (!r)
      return std::move(r.error());
    total += r->affected();
    if (r->affected() < batch)
      return total;
  }
}

caf::expected<int64_t> replay_dead_letters_audited(connection& conn,
                                                   const std::vector<int64_t>& ids,
                                                   const namespace_id& ns, audit_event audit) {
  return perform(conn, [&](transaction& tx) -> caf::expected<int64_t> {
    auto n = ids.empty() ? replay_all_dead_letters(tx.conn(), 1000, ns)
                         : replay_dead_letters(tx.conn(), ids, ns);
    if (!n)
      return n;
    auto e = audit;
    e.details["replayed"] = *n;
    if (auto a = append_audit(tx.conn(), e); !a)
      return std::move(a.error());
    return n;
  });
}

caf::expected<int64_t> prune_published_outbox(connection& conn, int64_t retention_s, int batch,
                                              int64_t max_rows) {
  if (retention_s < 0)
    return out_of_range("retention_s", "an integer >= 0", retention_s);
  if (batch < 1 || batch > 10000)
    return out_of_range("batch", "an integer 1 … 10000", batch);
  if (max_rows < 1)
    return out_of_range("max_rows", "an integer >= 1", max_rows);
  int64_t after = 0, read = 0, deleted = 0;
  while (read < max_rows) {
    auto r = conn.run(prune_step, params::of(after, retention_s, int64_t{batch}));
    if (!r)
      return std::move(r.error());
    deleted += r->i64(0, r->column_named("deleted"));
    auto scanned = r->i64(0, r->column_named("scanned"));
    read += scanned;
    after = r->i64(0, r->column_named("last_id"));
    if (scanned < batch || r->boolean(0, r->column_named("reached_recent")))
      break;
  }
  return deleted;
}

bool webhook_sink::wants(const std::string& event_type) const {
  return !event_types
         || std::find(event_types->begin(), event_types->end(), event_type) != event_types->end();
}

caf::expected<std::vector<webhook_sink>> load_webhook_sinks(connection& conn) {
  auto r = conn.run(sinks);
  if (!r)
    return std::move(r.error());
  std::vector<webhook_sink> out;
  const int id = r->column_named("id"), ns = r->column_named("namespaceId"),
            url = r->column_named("url"), event_types = r->column_named("event_types"),
            max_attempts = r->column_named("maxAttempts"),
            timeout_ms = r->column_named("timeoutMs"),
            signing_secret = r->column_named("signingSecret");
  for (int i = 0; i < r->rows(); ++i) {
    webhook_sink s;
    s.id = r->str(i, id);
    s.ns = namespace_id{r->str(i, ns)};
    s.url = r->str(i, url);
    if (!r->is_null(i, event_types)) {
      boost::json::error_code ec;
      auto types = boost::json::parse(r->text(i, event_types), ec);
      if (ec || !types.is_array())
        return make_error(errc::internal, "outbox.sinks: eventTypes of sink " + s.id
                                            + " is not a JSON array");
      s.event_types.emplace();
      for (const auto& t : types.as_array())
        if (t.is_string())
          s.event_types->emplace_back(t.as_string().data(), t.as_string().size());
    }
    s.max_attempts = r->i32(i, max_attempts);
    s.timeout_ms = r->i32(i, timeout_ms);
    if (!r->is_null(i, signing_secret))
      s.signing_secret = r->str(i, signing_secret);
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace nf::store
