#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "config/settings.hpp"

namespace nf::actors {

/// What every per-partition actor is spawned with.
struct partition_context {
  int16_t shard = 0;              ///< the logical partition this actor serves
  int partition_count = 16;       ///< P, equal to ClusterSettings.partitionCount
  std::string dsn;                ///< for the actor's own connection (detached actors)
  caf::actor node;                ///< the node supervisor: routes hints and requests
  caf::actor committer;           ///< the node's decide committer (decider/committer.hpp)
  caf::actor outbox_relay;        ///< the node's outbox relay (relay/outbox_relay.hpp)
  caf::actor node_timer;          ///< the node's timer (timer/node_timer.hpp)
  config::values settings = config::values::defaults();
};

} // namespace nf::actors
