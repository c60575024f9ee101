#include "actors/relay/relay.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

caf::behavior relay(caf::event_based_actor* self, partition_context ctx) {
  auto outbox_relay = ctx.outbox_relay;
  // The outbox relay serves this shard while this actor lives (it monitors us).
  if (ctx.epoch > 0)
    self->send(outbox_relay, join_atom_v, ctx.shard, ctx.epoch, ctx.node_id);
  else
    self->send(outbox_relay, join_atom_v, ctx.shard);
  return {
    [=](outbox_atom) { self->send(outbox_relay, outbox_atom_v); },
  };
}

} // namespace

caf::actor spawn_relay(caf::actor_system& sys, const partition_context& ctx) {
  return sys.spawn(relay, ctx);
}

} // namespace nf::actors
