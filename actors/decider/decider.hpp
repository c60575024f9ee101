#pragma once

// The decider of one partition (docs/engine.md §1–§3): the entry point for
// everything decided in its shard. It gives a start an id in its shard and hands
// starts, completions, commands and hints to the node's decide committer
// (committer.hpp), which runs flow::decide() and commits the work of every
// partition of the node together. Protocol (dynamically typed, docs/engine.md §2):
//   (start_atom, msg::start_request)       -> msg::start_reply
//       starts a workflow whose id it makes in its own shard, and decides its
//       first step in the same transaction (fast path a);
//   (complete_atom, msg::task_result)      -> std::string (JSON) | error `lease lost`
//       finishes a leased task (fenced by its token, I5) and decides what follows;
//   (command_atom, msg::workflow_command)  -> std::string (JSON)
//       pause, resume, terminate, retry, rerun, restart;
//   (decide_atom)
//       hint: "DecideQueues" rows of this shard may be waiting.
// While it lives, the committer claims and polls this shard's "DecideQueues" rows.

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the decider of `ctx.shard`, which hands its work to the one of `ctx.committers`
/// that decides for its shard (`ctx.split`).
caf::actor spawn_decider(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
