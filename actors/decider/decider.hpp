#pragma once

// The decider of one partition (docs/engine.md §1–§3): the only actor that runs
// flow::decide(). Protocol (dynamically typed, docs/engine.md §2):
//   (start_atom, msg::start_request)       -> msg::start_reply
//       starts a workflow whose id it makes in its own shard, and decides its
//       first step in the same transaction (fast path a);
//   (complete_atom, msg::task_result)      -> std::string (JSON) | error `lease lost`
//       finishes a leased task (fenced by its token, I5) and decides what follows;
//   (command_atom, msg::workflow_command)  -> std::string (JSON)
//       pause, resume, terminate, retry, rerun, restart;
//   (decide_atom)
//       hint: "DecideQueues" rows of this shard may be waiting.
// Everything that arrived before a flush shares one transaction (group commit by
// mailbox draining); after the commit it answers, then sends the node the hints
// (work_atom queue, armed_atom shard ms, outbox_atom shard, decide_atom shard).
// It also polls its "DecideQueues" rows every decider.poll_interval_ms (I9).

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the decider of `ctx.shard` (detached: it owns a database connection).
caf::actor spawn_decider(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
