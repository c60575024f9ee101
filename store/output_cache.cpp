#include "store/output_cache.hpp"

namespace nf::store {

namespace {

// Bounded, so one run never holds locks on a huge backlog.
constexpr statement prune{"output_cache.prune", R"(
DELETE FROM "TaskOutputCache" c
 USING (SELECT "namespaceId", "taskDefName", "key" FROM "TaskOutputCache"
         WHERE "expiresAt" < now() ORDER BY "expiresAt" LIMIT $1) x
 WHERE c."namespaceId" = x."namespaceId" AND c."taskDefName" = x."taskDefName"
   AND c."key" = x."key")"};

} // namespace

caf::expected<int64_t> prune_output_cache(connection& conn, int64_t limit) {
  auto r = conn.run(prune, params::of(limit));
  if (!r)
    return std::move(r.error());
  return r->affected();
}

} // namespace nf::store
