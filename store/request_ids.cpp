#include "store/request_ids.hpp"

#include "proto/errors.hpp"

namespace nf::store {

namespace {

constexpr statement claim{"request_ids.claim", R"(
INSERT INTO "RequestIds" ("namespaceId", "requestId", "kind", "target", "answer")
VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::jsonb)
ON CONFLICT ("namespaceId", "requestId") DO NOTHING
RETURNING "requestId")"};

// Only after a conflict: the row the conflict waited for has committed, and a statement of
// its own sees it.
constexpr statement earlier{"request_ids.earlier", R"(
SELECT "kind", "target", "answer"::text AS answer
  FROM "RequestIds" WHERE "namespaceId" = $1::uuid AND "requestId" = $2::text)"};

// Bounded, so one run never holds locks on a huge backlog.
constexpr statement prune{"request_ids.prune", R"(
DELETE FROM "RequestIds" r
 USING (SELECT "namespaceId", "requestId" FROM "RequestIds"
         WHERE "createdAt" < now() - make_interval(hours => $1::integer)
         ORDER BY "createdAt" LIMIT $2::bigint) x
 WHERE r."namespaceId" = x."namespaceId" AND r."requestId" = x."requestId")"};

} // namespace

caf::expected<std::optional<std::string>> earlier_request(connection& conn,
                                                          const request_use& use) {
  auto e = conn.run(earlier, params::of(use.ns, use.id));
  if (!e)
    return std::move(e.error());
  if (e->rows() == 0)
    return std::optional<std::string>{};
  auto kind = e->str(0, e->column_named("kind"));
  auto target = e->str(0, e->column_named("target"));
  if (kind != use.kind || target != use.target)
    return make_error(errc::invalid, "requestId: " + use.id + " was used for " + kind + " of "
                                       + target + "; this request is " + use.kind + " of "
                                       + use.target + " (a retry repeats its request exactly)");
  return std::optional<std::string>{e->str(0, e->column_named("answer"))};
}

caf::expected<std::optional<std::string>> claim_request(connection& conn, const request_use& use,
                                                        const json_text& text) {
  auto r = conn.run(claim, params::of(use.ns, use.id, use.kind, use.target, text));
  if (!r)
    return std::move(r.error());
  if (r->rows() > 0)
    return std::optional<std::string>{};
  auto e = earlier_request(conn, use);
  if (e && !*e)  // pruned between the two statements: nothing to answer with, claim again
    return make_error(errc::retry_tx, "request id " + use.id + " expired while it was read");
  return e;
}

caf::expected<int64_t> prune_request_ids(connection& conn, int64_t retention_hours,
                                         int64_t limit) {
  auto r = conn.run(prune, params::of(retention_hours, limit));
  if (!r)
    return std::move(r.error());
  return r->affected();
}

} // namespace nf::store
