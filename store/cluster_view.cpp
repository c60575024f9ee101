#include "store/cluster_view.hpp"

namespace nf::store {

namespace {

// A node that stopped without saying so keeps "stoppedAt" NULL: its heartbeat age tells.
constexpr statement nodes{"cluster.view_nodes", R"(
SELECT n."id", n."address", (extract(epoch FROM n."startedAt") * 1000)::bigint AS started_ms,
       (extract(epoch FROM clock_timestamp() - n."heartbeatAt") * 1000)::bigint AS heartbeat_age_ms,
       n."stoppedAt" IS NOT NULL AS stopped,
       (SELECT count(*) FROM "PartitionLeases" p
         WHERE p."nodeId" = n."id" AND p."expiresAt" > clock_timestamp()) AS held
  FROM "Nodes" n
 WHERE n."stoppedAt" IS NULL OR n."stoppedAt" > clock_timestamp() - interval '1 hour'
 ORDER BY n."heartbeatAt" DESC LIMIT $1)"};

constexpr statement partitions{"cluster.view_partitions", R"(
SELECT p."partition", p."nodeId", p."epoch",
       (extract(epoch FROM p."expiresAt" - clock_timestamp()) * 1000)::bigint AS remaining_ms,
       (extract(epoch FROM clock_timestamp() - p."acquiredAt") * 1000)::bigint AS held_ms
  FROM "PartitionLeases" p ORDER BY p."partition")"};

} // namespace

caf::expected<cluster_view> read_cluster_view(connection& conn) {
  cluster_view out;
  auto n = conn.run(nodes, params::of(cluster_view_max_nodes));
  if (!n)
    return std::move(n.error());
  const int id = n->column_named("id"), address = n->column_named("address"),
            started = n->column_named("started_ms"), age = n->column_named("heartbeat_age_ms"),
            stopped = n->column_named("stopped"), held = n->column_named("held");
  for (int i = 0; i < n->rows(); ++i)
    out.nodes.push_back({n->str(i, id), n->str(i, address), n->i64(i, started), n->i64(i, age),
                         n->boolean(i, stopped), n->i64(i, held)});
  auto p = conn.run(partitions);
  if (!p)
    return std::move(p.error());
  const int part = p->column_named("partition"), owner = p->column_named("nodeId"),
            epoch = p->column_named("epoch"), remaining = p->column_named("remaining_ms"),
            held_ms = p->column_named("held_ms");
  for (int i = 0; i < p->rows(); ++i)
    out.partitions.push_back({static_cast<int>(p->i64(i, part)), p->str(i, owner),
                              p->i64(i, epoch), p->i64(i, remaining), p->i64(i, held_ms)});
  return out;
}

} // namespace nf::store
