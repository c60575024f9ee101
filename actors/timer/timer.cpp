#include "actors/timer/timer.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

caf::behavior timer(caf::event_based_actor* self, partition_context ctx) {
  auto node_timer = ctx.node_timer;
  // The node's timer serves this shard while this actor lives (it monitors us).
  if (ctx.epoch > 0)
    self->send(node_timer, join_atom_v, ctx.shard, ctx.epoch, ctx.node_id);
  else
    self->send(node_timer, join_atom_v, ctx.shard);
  return {
    [=](armed_atom, int64_t fire_at_ms) { self->send(node_timer, armed_atom_v, fire_at_ms); },
  };
}

} // namespace

caf::actor spawn_timer(caf::actor_system& sys, const partition_context& ctx) {
  return sys.spawn(timer, ctx);
}

} // namespace nf::actors
