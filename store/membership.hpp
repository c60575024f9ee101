#pragma once

// Cluster membership (docs/schema.md §2 Cluster): "Nodes" rows and "PartitionLeases".
// A lease row is created on first acquisition and lives forever; its epoch only grows
// (a trigger enforces it); release = `"expiresAt" = now()`. Ownership is an
// optimisation (I9): these leases decide who polls which partition, and what commits is
// decided by the version compare-and-set; the epoch also fences a partition's own writes
// (store/partition_fence.hpp), so a node that lost a partition stops writing for it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// Inserts this process's "Nodes" row and returns its id.
caf::expected<node_id> register_node(connection& conn, const std::string& address);

/// Marks the node stopped and releases every lease it holds, in one transaction.
caf::expected<void> stop_node(connection& conn, const node_id& id);

struct partition_lease {
  int16_t partition = 0;
  int64_t epoch = 0;
};

/// What one membership round reads and writes.
struct round_facts {
  /// Live nodes: not stopped and heartbeating within lease_ms (this one included, so at
  /// least 1).
  int live = 1;
  /// Live nodes registered before this one (ids are uuidv7, so in registration order): this
  /// node's rank, which says whether it is among the cluster.deciding_nodes that own
  /// partitions.
  int older = 0;
  /// The leases this node still held at their epoch, extended to `now() + lease_ms` (a
  /// lease another node took over is missing).
  std::vector<partition_lease> renewed;
  /// Partitions 0 … partition_count-1 that nobody holds now (never leased, expired or
  /// released), lowest first.
  std::vector<int16_t> free;
  std::vector<std::string> owners;  ///< as partition_owners, after the renewal
};

/// Heartbeats the node, renews its leases, and reads the free partitions and the owners,
/// in one round trip (one pipeline, one implicit transaction): a membership round costs
/// one wait for the server, not four, which keeps rounds on time when the server is busy.
/// not_found when the node's row is gone or stopped.
caf::expected<round_facts> membership_round(connection& conn, const node_id& id,
                                            const std::vector<partition_lease>& held,
                                            int64_t lease_ms, int partition_count);

/// Acquires (or takes over) each partition whose lease is absent or expired, bumping
/// its epoch; a partition someone else holds live is not returned.
caf::expected<std::vector<partition_lease>>
acquire_leases(connection& conn, const node_id& id, const std::vector<int16_t>& partitions,
               int64_t lease_ms);

/// Releases leases this node holds (`"expiresAt" = now()`), so another node may take
/// them at once.
caf::expected<void> release_leases(connection& conn, const node_id& id,
                                   const std::vector<int16_t>& partitions);

/// The address ("Nodes"."address") of the node holding each partition's live lease,
/// indexed by partition; "" where nobody does. What a node forwards requests by.
caf::expected<std::vector<std::string>> partition_owners(connection& conn, int partition_count);

} // namespace nf::store
