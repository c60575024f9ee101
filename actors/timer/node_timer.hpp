#pragma once

// The timer of a node: fires the due "Timers" rows of every partition whose timer
// joined it. It sleeps until the earliest pending timer of those shards (actor
// clock), wakes early on a hint, claims due rows (SKIP LOCKED) and fires them
// through the store, which re-checks each target so a late deadline is a no-op
// (I6). One claim covers every served shard, so a node plans and runs the timer
// statements on one connection, not sixteen: a generic plan over the hourly
// "Timers" partitions takes 0.1-0.8 s to build, and every ANALYZE of a partition
// makes each connection build it again. Its checks claim what fell due in the last
// hour, a plan of two hours; the whole horizon (48 hours) only when a shard joins and every
// timer.full_sweep_interval_ms, so that plan is built and locked once a minute, not at every
// check. Protocol:
//   (join_atom, int16_t shard)        from a partition's timer: serve `shard` while it lives;
//   (join_atom, int16_t shard, int64_t epoch, std::string node)
//                                     the same, fenced at `epoch` (store/partition_fence.hpp):
//                                     once refused, the shard is not served again;
//   (armed_atom, int64_t fire_at_ms)  hint: a served shard's timer fires at fire_at_ms
//                                     (ms since the epoch).
// It also polls every timer.poll_interval_ms (I9), and then times out expired
// leases of any queue (the lease sweep: a lease is a deadline too, and one sweep
// per node keeps its plan on one connection). After firing it sends the node
// (decide_atom, int16_t shard) for woken workflows, (work_atom, queue) for queues
// a delay timer filled, and (outbox_atom, int16_t shard).

#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/settings.hpp"

namespace nf::actors {

struct node_timer_context {
  std::string dsn;  ///< for the timer's own connection
  caf::actor node;  ///< where hints go (none in some tests)
  config::values settings = config::values::defaults();
};

/// Spawns a node's timer (detached: it owns a database connection).
caf::actor spawn_node_timer(caf::actor_system& sys, const node_timer_context& ctx);

} // namespace nf::actors
