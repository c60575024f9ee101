#include "actors/decider/decider.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/decider/committer_split.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

/// Holds no state and never blocks: the node's decide committers own the
/// connections, the batches and the answers (delegated promises reply straight to
/// the requester).
caf::behavior decider_behavior(caf::event_based_actor* self, partition_context ctx) {
  auto shard = ctx.shard;
  // Every committer knows this shard while this actor lives (each monitors us); the one
  // that decides for it (committer_split) claims at once whatever waited while nobody
  // owned the partition.
  for (const auto& c : ctx.committers)
    if (ctx.epoch > 0)
      self->send(c, join_atom_v, shard, ctx.epoch, ctx.node_id);
    else
      self->send(c, join_atom_v, shard);
  auto committer = [committers = ctx.committers, split = ctx.split, shard] {
    return committers[split ? split->committer_of(shard) : 0];
  };
  return {
    [=](start_atom, const msg::start_request& m) {
      return self->delegate(committer(), start_atom_v, shard, m);
    },
    [=](complete_atom, const msg::task_result& m) {
      return self->delegate(committer(), complete_atom_v, m);
    },
    [=](command_atom, const msg::workflow_command& m) {
      return self->delegate(committer(), command_atom_v, m);
    },
    [=](decide_atom) { self->send(committer(), decide_atom_v); },
  };
}

} // namespace

caf::actor spawn_decider(caf::actor_system& sys, const partition_context& ctx) {
  return sys.spawn(decider_behavior, ctx);
}

} // namespace nf::actors
