#pragma once

// The timer of one partition: the entry point for timer hints of its shard. It
// joins the node's timer (node_timer.hpp), which fires the due timers of every
// joined shard in one claim, and forwards its hints there.
// Protocol (docs/engine.md §2):
//   (armed_atom, int64_t fire_at_ms)
//       hint: a timer of this partition fires at fire_at_ms (ms since the epoch).
// While it lives, the node's timer claims and polls this shard's timers (I9).

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the timer of `ctx.shard`, which hands its shard to `ctx.node_timer`.
caf::actor spawn_timer(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
