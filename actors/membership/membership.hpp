#pragma once

// Membership (docs/engine.md §1): registers the node in "Nodes", heartbeats every
// membership.heartbeat_ms, and holds "PartitionLeases": alone a node owns all P;
// with several live nodes it keeps its fair share ceil(P / live nodes), releases
// the rest, and takes over partitions whose lease expired (a dead node's). It tells
// the node every change of the owned set: (partitions_atom, std::vector<int16_t>), each
// preceded by (partitions_atom, int16_t partition, int64_t epoch, std::string node_id)
// for every owned partition, the epoch its writes are fenced at; and
// of who owns every partition: (owners_atom, std::vector<std::string>), the owner's
// address by partition ("" for none), which the node forwards requests by.
// When renewing fails (database down) or blocks (a half-open link), the node keeps the
// partitions until their leases would expire by its own clock, then stops them (the lease
// guard, lease_guard.hpp, keeps that time even while membership is stuck): ownership is
// an optimisation (I9). A lapsed lease is taken back only by acquiring it again.
// Protocol: (status_atom) -> std::string, JSON {"nodeId", "address", "liveNodes",
// "partitions": [{"partition", "epoch"}]}.
// On exit it releases its leases ("expiresAt" = now()) and marks the node stopped.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace nf::actors {

struct membership_options {
  std::string dsn;
  std::string address;       ///< stored in "Nodes"."address"
  int partition_count = 16;  ///< P (checked against ClusterSettings.partitionCount)
  int64_t heartbeat_ms = 1000;
  int64_t lease_ms = 10000;
  /// cluster.deciding_nodes: how many live nodes, the longest registered, own partitions;
  /// the others own none and forward to them. 0 = every live node.
  int deciding_nodes = 0;
  caf::actor node;           ///< receives (partitions_atom, owned set), (owners_atom, map)
};

/// Spawns membership detached (it owns a connection), with its lease guard. Link it to the
/// node so the node's exit releases the leases.
caf::actor spawn_membership(caf::actor_system& sys, membership_options opt);

} // namespace nf::actors
