#pragma once

// The timer actor of one partition: fires the partition's due "Timers" rows.
// It sleeps until the earliest pending timer it knows of (actor clock), wakes
// early on a hint, claims due rows (SKIP LOCKED) and fires them through the
// store, which re-checks each target so a late deadline is a no-op (I6).
// Protocol (docs/engine.md §2):
//   (armed_atom, int64_t fire_at_ms)
//       hint: a timer of this partition fires at fire_at_ms (ms since the epoch).
// It also polls every timer.poll_interval_ms (I9). After firing it sends the
// node (decide_atom, int16_t shard) for woken workflows, (work_atom, queue) for
// queues a delay timer filled, and (outbox_atom, int16_t shard).

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the timer actor of `ctx.shard` (detached: it owns a database connection).
caf::actor spawn_timer(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
