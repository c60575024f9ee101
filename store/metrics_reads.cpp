#include "store/metrics_reads.hpp"

#include "store/pg/params.hpp"

namespace nf::store {

namespace {

// The queues present, by a loose index scan of the primary key ("queueName", "id"): one probe
// per queue, not a scan of the rows. Per queue, counts capped at $1 on the partial indexes;
// its oldest ready row by id (ids are handed out in enqueue order). The oldest pending
// decision: one probe of ("shard", "enqueuedAt") per shard. The outbox: its two partial
// indexes, capped like the queues.
constexpr statement gauges{"metrics.store_gauges", R"(
WITH RECURSIVE names(queue) AS (
  (SELECT q."queueName" FROM "TaskQueues" q ORDER BY q."queueName" LIMIT 1)
  UNION ALL
  SELECT (SELECT q."queueName" FROM "TaskQueues" q WHERE q."queueName" > names.queue
           ORDER BY q."queueName" LIMIT 1)
    FROM names WHERE names.queue IS NOT NULL
), queues AS (
  SELECT queue FROM names WHERE queue IS NOT NULL LIMIT $2::bigint
)
SELECT 'queue' AS kind, queues.queue AS name,
       (SELECT count(*) FROM (SELECT 1 FROM "TaskQueues" r
          WHERE r."queueName" = queues.queue AND r."leaseExpiresAt" IS NULL
          LIMIT $1::bigint) c) AS n,
       (SELECT count(*) FROM (SELECT 1 FROM "TaskQueues" l
          WHERE l."queueName" = queues.queue AND l."leaseExpiresAt" IS NOT NULL
          LIMIT $1::bigint) c) AS leased,
       (SELECT (extract(epoch FROM clock_timestamp() - r."enqueuedAt") * 1000)::bigint
          FROM "TaskQueues" r
         WHERE r."queueName" = queues.queue AND r."leaseExpiresAt" IS NULL
         ORDER BY r."id" LIMIT 1) AS age_ms
  FROM queues
UNION ALL
SELECT 'decide', NULL,
       (SELECT count(*) FROM (SELECT 1 FROM "DecideQueues" LIMIT $1::bigint) c), NULL,
       (SELECT (extract(epoch FROM clock_timestamp() - min(o.at)) * 1000)::bigint
          FROM generate_series(0, (SELECT max("partitionCount") - 1 FROM "ClusterSettings")) s(shard),
               LATERAL (SELECT d."enqueuedAt" AS at FROM "DecideQueues" d
                         WHERE d."shard" = s.shard ORDER BY d."enqueuedAt" LIMIT 1) o)
UNION ALL
SELECT 'outbox', NULL,
       (SELECT count(*) FROM (SELECT 1 FROM "OutboxEvents" e
          WHERE e."publishedAt" IS NULL AND e."deadLetteredAt" IS NULL LIMIT $1::bigint) c),
       NULL, NULL
UNION ALL
SELECT 'dead_letters', NULL,
       (SELECT count(*) FROM (SELECT 1 FROM "OutboxEvents" e
          WHERE e."deadLetteredAt" IS NOT NULL LIMIT $1::bigint) c),
       NULL, NULL)"};

} // namespace

const statement& store_gauges_statement() {
  return gauges;
}

caf::expected<store_gauges> read_store_gauges(connection& conn) {
  auto r = conn.run(gauges, params::of(metrics_count_cap, metrics_max_queues));
  if (!r)
    return std::move(r.error());
  store_gauges out;
  const int kind = r->column_named("kind"), name = r->column_named("name"),
            n = r->column_named("n"), leased = r->column_named("leased"),
            age = r->column_named("age_ms");
  for (int i = 0; i < r->rows(); ++i) {
    auto k = r->str(i, kind);
    auto count = r->i64(i, n);
    if (k == "queue")
      out.queues.push_back({r->str(i, name), count, r->i64(i, leased), r->opt_i64(i, age)});
    else if (k == "decide") {
      out.pending_decisions = count;
      out.oldest_pending_ms = r->opt_i64(i, age);
    } else if (k == "outbox")
      out.outbox_backlog = count;
    else if (k == "dead_letters")
      out.dead_letters = count;
  }
  return out;
}

} // namespace nf::store
