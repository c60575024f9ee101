#pragma once

// The supervisor of one owned partition: spawns the partition's decider, lessor,
// timer and relay with one partition_context and links them, so stopping the
// supervisor (the node does when ownership ends) stops all four and their caches
// die with them; a crash of one takes the others down and the node, which monitors
// the supervisor, starts the partition afresh while it still owns it.

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// The actors of one partition, for routing (docs/engine.md §2).
struct partition_handles {
  caf::actor supervisor;
  caf::actor decider;
  caf::actor lessor;
  caf::actor timer;
  caf::actor relay;
  int64_t epoch = 0;  ///< the epoch its writes are fenced at (partition_context)
};

partition_handles spawn_partition(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
