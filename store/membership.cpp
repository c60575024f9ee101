#include "store/membership.hpp"

#include <chrono>

#include "proto/errors.hpp"
#include "store/db_clock.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

namespace {

constexpr statement insert_node{"membership.register", R"(
INSERT INTO "Nodes" ("address") VALUES ($1) RETURNING "id"::text)"};

// A node's own row counts as live even when its previous heartbeat is old. server_us is
// Postgres's clock, read where the node already waits for an answer (store/db_clock.hpp).
constexpr statement heartbeat{"membership.heartbeat", R"(
WITH h AS (
  UPDATE "Nodes" SET "heartbeatAt" = now() WHERE "id" = $1 AND "stoppedAt" IS NULL
  RETURNING "id")
SELECT (SELECT count(*) FROM h) AS renewed,
       (SELECT count(*) FROM "Nodes"
         WHERE "stoppedAt" IS NULL
           AND ("id" = $1 OR "heartbeatAt" > now() - $2 * interval '1 millisecond')) AS live,
       (SELECT count(*) FROM "Nodes"
         WHERE "stoppedAt" IS NULL AND "id" < $1
           AND "heartbeatAt" > now() - $2 * interval '1 millisecond') AS older,
       (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS server_us)"};

constexpr statement mark_stopped{"membership.stop", R"(
UPDATE "Nodes" SET "stoppedAt" = now() WHERE "id" = $1 AND "stoppedAt" IS NULL)"};

// docs/schema.md §2: renew at the epoch we hold; a takeover bumped it, so it misses.
// Only for a node not stopped: it runs in the heartbeat's round trip even when the
// heartbeat finds the node's row stopped, and must not revive leases stop_node released.
constexpr statement renew{"membership.renew", R"(
UPDATE "PartitionLeases" l SET "expiresAt" = now() + $4 * interval '1 millisecond'
  FROM unnest($2::smallint[], $3::bigint[]) AS u(p, e)
 WHERE l."partition" = u.p AND l."nodeId" = $1 AND l."epoch" = u.e
   AND EXISTS (SELECT 1 FROM "Nodes" n WHERE n."id" = $1 AND n."stoppedAt" IS NULL)
RETURNING l."partition", l."epoch")"};

constexpr statement free_parts{"membership.free", R"(
SELECT g.p AS "partition"
  FROM generate_series(0, $1::int - 1) AS g(p)
  LEFT JOIN "PartitionLeases" l ON l."partition" = g.p
 WHERE l."partition" IS NULL OR l."expiresAt" < now()
 ORDER BY g.p)"};

// docs/schema.md §2's upsert: creates, or takes over an expired lease with epoch + 1;
// a live lease of another node stays untouched and returns no row.
constexpr statement acquire{"membership.acquire", R"(
INSERT INTO "PartitionLeases" ("partition", "nodeId", "expiresAt")
SELECT u.p, $1, now() + $3 * interval '1 millisecond' FROM unnest($2::smallint[]) AS u(p)
 ORDER BY u.p
ON CONFLICT ("partition") DO UPDATE
  SET "nodeId" = EXCLUDED."nodeId", "epoch" = "PartitionLeases"."epoch" + 1,
      "expiresAt" = EXCLUDED."expiresAt", "acquiredAt" = now()
  WHERE "PartitionLeases"."expiresAt" < now()
RETURNING "partition", "epoch")"};

constexpr statement release{"membership.release", R"(
UPDATE "PartitionLeases" SET "expiresAt" = now()
 WHERE "nodeId" = $1 AND "partition" = ANY($2::smallint[]) AND "expiresAt" > now())"};

constexpr statement release_all{"membership.release_all", R"(
UPDATE "PartitionLeases" SET "expiresAt" = now() WHERE "nodeId" = $1 AND "expiresAt" > now())"};

// Who serves each partition now: the address of the node holding its live lease.
constexpr statement owners{"membership.owners", R"(
SELECT l."partition", n."address"
  FROM "PartitionLeases" l
  JOIN "Nodes" n ON n."id" = l."nodeId"
 WHERE l."expiresAt" > now() AND n."stoppedAt" IS NULL AND l."partition" < $1
 ORDER BY l."partition")"};

array_literal shard_list(const std::vector<int16_t>& xs) {
  return int_array(std::vector<int64_t>(xs.begin(), xs.end()));
}

std::vector<partition_lease> leases_of(const result& r) {
  std::vector<partition_lease> out;
  const int partition = r.column_named("partition"), epoch = r.column_named("epoch");
  for (int row = 0; row < r.rows(); ++row)
    out.push_back({static_cast<int16_t>(r.i64(row, partition)), r.i64(row, epoch)});
  return out;
}

std::vector<std::string> owners_of(const result& r, int partition_count) {
  std::vector<std::string> out(static_cast<size_t>(partition_count));
  const int partition = r.column_named("partition"), address = r.column_named("address");
  for (int row = 0; row < r.rows(); ++row)
    out[static_cast<size_t>(r.i64(row, partition))] = r.str(row, address);
  return out;
}

} // namespace

caf::expected<node_id> register_node(connection& conn, const std::string& address) {
  auto r = conn.run1(insert_node, params::of(address));
  if (!r)
    return std::move(r.error());
  return node_id{r->str(0, r->column_named("id"))};
}

caf::expected<void> stop_node(connection& conn, const node_id& id) {
  return perform(conn, [&](transaction& tx) -> caf::expected<void> {
    if (auto r = tx.conn().run(release_all, params::of(id)); !r)
      return std::move(r.error());
    if (auto r = tx.conn().run(mark_stopped, params::of(id)); !r)
      return std::move(r.error());
    return {};
  });
}

caf::expected<round_facts> membership_round(connection& conn, const node_id& id,
                                            const std::vector<partition_lease>& held,
                                            int64_t lease_ms, int partition_count) {
  std::vector<int64_t> parts, epochs;
  for (const auto& l : held) {
    parts.push_back(l.partition);
    epochs.push_back(l.epoch);
  }
  pipeline p{conn};
  p.add(heartbeat, params::of(id, lease_ms));
  p.add(renew, params::of(id, int_array(parts), int_array(epochs), lease_ms));
  p.add(free_parts, params::of(int64_t{partition_count}));
  p.add(owners, params::of(int64_t{partition_count}));
  auto sent = std::chrono::system_clock::now();
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  const auto& h = (*rs)[0];
  observe_db_clock(sent, h.i64(0, h.column_named("server_us")), std::chrono::system_clock::now());
  if (h.i64(0, h.column_named("renewed")) == 0)
    return make_error(errc::not_found, "node " + id.str() + " is not registered or was stopped");
  round_facts out;
  out.live = static_cast<int>(h.i64(0, h.column_named("live")));
  out.older = static_cast<int>(h.i64(0, h.column_named("older")));
  out.renewed = leases_of((*rs)[1]);
  const auto& f = (*rs)[2];
  const int partition = f.column_named("partition");
  for (int row = 0; row < f.rows(); ++row)
    out.free.push_back(static_cast<int16_t>(f.i64(row, partition)));
  out.owners = owners_of((*rs)[3], partition_count);
  return out;
}

caf::expected<std::vector<partition_lease>>
acquire_leases(connection& conn, const node_id& id, const std::vector<int16_t>& partitions,
               int64_t lease_ms) {
  if (partitions.empty())
    return std::vector<partition_lease>{};
  auto r = conn.run(acquire, params::of(id, shard_list(partitions), lease_ms));
  if (!r)
    return std::move(r.error());
  return leases_of(*r);
}

caf::expected<void> release_leases(connection& conn, const node_id& id,
                                   const std::vector<int16_t>& partitions) {
  if (partitions.empty())
    return {};
  auto r = conn.run(release, params::of(id, shard_list(partitions)));
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<std::vector<std::string>> partition_owners(connection& conn, int partition_count) {
  auto r = conn.run(owners, params::of(int64_t{partition_count}));
  if (!r)
    return std::move(r.error());
  return owners_of(*r, partition_count);
}

} // namespace nf::store
