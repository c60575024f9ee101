#include "store/output_cache.hpp"

#include "store/pg/params.hpp"

namespace nf::store {

namespace {

// One probe of the primary key per key (a LATERAL subquery, kept from being flattened into a
// join by OFFSET 0: store/README.md). Expired rows wait for the prune, so the probe skips them.
constexpr statement lookup{"output_cache.lookup", R"(
SELECT u.ns, u.def, u.key, c.output
  FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(ns, def, key)
 CROSS JOIN LATERAL (
   SELECT "output" AS output FROM "TaskOutputCache"
    WHERE "namespaceId" = u.ns AND "taskDefName" = u.def AND "key" = u.key
      AND "expiresAt" > now() OFFSET 0) c)"};

// Bounded, so one run never holds locks on a huge backlog.
constexpr statement prune{"output_cache.prune", R"(
DELETE FROM "TaskOutputCache" c
 USING (SELECT "namespaceId", "taskDefName", "key" FROM "TaskOutputCache"
         WHERE "expiresAt" < now() ORDER BY "expiresAt" LIMIT $1) x
 WHERE c."namespaceId" = x."namespaceId" AND c."taskDefName" = x."taskDefName"
   AND c."key" = x."key")"};

} // namespace

caf::expected<std::vector<cached_output>>
lookup_output_cache(connection& conn, const std::vector<output_cache_key>& keys) {
  std::vector<cached_output> out;
  if (keys.empty())
    return out;
  std::vector<std::string> ns, defs, ks;
  for (const auto& k : keys) {
    ns.push_back(k.ns.str());
    defs.push_back(k.task_def_name);
    ks.push_back(k.key);
  }
  auto r = conn.run(lookup, params::of(text_array(ns), text_array(defs), text_array(ks)));
  if (!r)
    return std::move(r.error());
  const int n = r->column_named("ns"), d = r->column_named("def"), k = r->column_named("key"),
            o = r->column_named("output");
  for (int row = 0; row < r->rows(); ++row)
    out.push_back({{namespace_id{r->str(row, n)}, r->str(row, d), r->str(row, k)},
                   r->str(row, o)});
  return out;
}

caf::expected<int64_t> prune_output_cache(connection& conn, int64_t limit) {
  auto r = conn.run(prune, params::of(limit));
  if (!r)
    return std::move(r.error());
  return r->affected();
}

} // namespace nf::store
