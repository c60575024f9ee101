#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "config/settings.hpp"

namespace nf::engine {
class lease_memory;
class waiting_polls;
} // namespace nf::engine

namespace nf::actors {

class committer_split;

/// What every per-partition actor is spawned with.
struct partition_context {
  int16_t shard = 0;              ///< the logical partition this actor serves
  int partition_count = 16;       ///< P, equal to ClusterSettings.partitionCount
  /// The epoch the node acquired this partition at and the node's id ("PartitionLeases"):
  /// the partition's writes are refused once the lease moved on (store/partition_fence.hpp).
  /// 0: no fence (a partition run without membership, as tests do).
  int64_t epoch = 0;
  std::string node_id;
  std::string dsn;                ///< for the actor's own connection (detached actors)
  caf::actor node;                ///< the node supervisor: routes hints and requests
  /// The node's decide committers (decider/committer.hpp), and which one decides for
  /// this shard now (null: the first, as a committer without a split decides for every
  /// shard that joined it).
  std::vector<caf::actor> committers;
  std::shared_ptr<const committer_split> split;
  caf::actor outbox_relay;        ///< the node's outbox relay (relay/outbox_relay.hpp)
  caf::actor node_timer;          ///< the node's timer (timer/node_timer.hpp)
  /// Where the lessor offers its parked polls to the node's committers (null: it does
  /// not, lessor.lease_in_decision = false).
  std::shared_ptr<engine::waiting_polls> waiting;
  /// Where the lessor writes the leases it made, for their completions (lease_memory.hpp;
  /// null: nowhere).
  std::shared_ptr<engine::lease_memory> leases;
  config::values settings = config::values::defaults();
};

} // namespace nf::actors
