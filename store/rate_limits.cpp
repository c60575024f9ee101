#include "store/rate_limits.hpp"

namespace nf::store {

namespace {

// docs/schema.md §2, RateLimitBuckets (0010): PG 18's RETURNING old/new says what this lease
// took.
constexpr statement grant{"rate_limit.grant", R"(
INSERT INTO "RateLimitBuckets" AS r ("namespaceId", "taskDefName", "windowStart", "count")
VALUES ($1, $2, now(), LEAST($5::int, $3::int))
ON CONFLICT ("namespaceId", "taskDefName") DO UPDATE SET
  "windowStart" = CASE WHEN r."windowStart" <= now() - make_interval(secs => $4::int)
                       THEN now() ELSE r."windowStart" END,
  "count"       = CASE WHEN r."windowStart" <= now() - make_interval(secs => $4::int)
                       THEN LEAST($5::int, $3::int)
                       ELSE r."count" + GREATEST(0, LEAST($5::int, $3::int - r."count")) END,
  "updatedAt"   = now()
RETURNING new."count" - CASE WHEN old."windowStart" = new."windowStart" THEN old."count" ELSE 0 END
  AS granted)"};

constexpr statement give_back{"rate_limit.give_back", R"(
UPDATE "RateLimitBuckets" SET "count" = GREATEST(0, "count" - $3), "updatedAt" = now()
 WHERE "namespaceId" = $1 AND "taskDefName" = $2)"};

} // namespace

caf::expected<int> take_rate_grant(connection& conn, const rate_limit& limit, int wanted) {
  if (wanted <= 0)
    return 0;
  auto r = conn.run1(grant, params::of(limit.ns, limit.task_def_name, limit.per_frequency,
                                       limit.frequency_seconds, wanted));
  if (!r)
    return std::move(r.error());
  return r->i32(0, r->column_named("granted"));
}

caf::expected<void> give_back_rate_grant(connection& conn, const rate_limit& limit, int unused) {
  if (unused <= 0)
    return {};
  if (auto r = conn.run(give_back, params::of(limit.ns, limit.task_def_name, unused)); !r)
    return std::move(r.error());
  return {};
}

} // namespace nf::store
