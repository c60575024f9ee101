#include "actors/node/node_state.hpp"

#include "proto/errors.hpp"

namespace nf::actors::node_impl {

const partition_handles* owner(node_actor* self, int16_t shard) {
  auto it = self->state.parts.find(shard);
  return it == self->state.parts.end() ? nullptr : &it->second;
}

caf::error not_owned(int16_t shard) {
  return nf::make_error(nf::errc::unavailable,
                           "partition " + std::to_string(shard) + " is not owned by this node");
}

std::string owner_elsewhere(node_actor* self, int16_t shard) {
  const auto& st = self->state;
  auto i = static_cast<size_t>(shard);
  if (i >= st.owners.size() || st.owners[i] == st.address)
    return {};
  return st.owners[i];
}

partition_context context_of(node_actor* self, int16_t shard) {
  auto& st = self->state;
  partition_context ctx;
  ctx.shard = shard;
  ctx.partition_count = st.partitions;
  ctx.dsn = st.opt.dsn;
  ctx.node = caf::actor_cast<caf::actor>(self);
  ctx.committers = st.committers;
  ctx.split = st.split;
  ctx.outbox_relay = st.outbox_relay;
  ctx.node_timer = st.node_timer;
  ctx.waiting = st.waiting;
  ctx.leases = st.leases;
  ctx.settings = st.opt.settings;
  return ctx;
}

} // namespace nf::actors::node_impl
