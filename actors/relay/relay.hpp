#pragma once

// The relay of one partition: the entry point for outbox hints of its shard. It
// joins the node's outbox relay (outbox_relay.hpp), which delivers the events
// of every joined shard in one claim, and forwards its hints there.
// Protocol (docs/engine.md §2):
//   (outbox_atom)   hint: outbox rows were written in my partition.
// While it lives, the outbox relay claims and polls this shard's events (I9).

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the relay of `ctx.shard`, which hands its shard to `ctx.outbox_relay`.
caf::actor spawn_relay(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
