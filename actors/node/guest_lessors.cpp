#include "actors/node/guest_lessors.hpp"

#include "actors/lessor/lessor.hpp"

namespace nf::actors::node_impl {

/// A lessor of `shard`'s queues on this node, which does not own the partition: the same
/// lease statement (FOR UPDATE SKIP LOCKED) the owner's runs, so the two may overlap (I9),
/// with no epoch to fence it. `lend`: its parked polls are offered to this node's
/// committers, which lease them the tasks they decide.
namespace {

caf::actor spawn_guest_lessor(node_actor* self, int16_t shard, bool lend) {
  auto ctx = context_of(self, shard);
  if (!lend)
    ctx.waiting = nullptr;
  auto lessor = spawn_lessor(self->system(), ctx);
  self->monitor(lessor);
  return lessor;
}

} // namespace

caf::actor stand_in_lessor(node_actor* self, int16_t shard) {
  auto& st = self->state;
  if (auto it = st.stand_ins.find(shard); it != st.stand_ins.end())
    return it->second;
  auto lessor = spawn_guest_lessor(self, shard, false);
  st.stand_ins.emplace(shard, lessor);
  st.log->warn("stand_in_lessor_started partition={} owner={}", shard, owner_elsewhere(self, shard));
  return lessor;
}

caf::actor local_lessor(node_actor* self, int16_t shard) {
  auto& st = self->state;
  if (auto it = st.local_lessors.find(shard); it != st.local_lessors.end())
    return it->second;
  auto lessor = spawn_guest_lessor(self, shard, true);
  st.local_lessors.emplace(shard, lessor);
  st.log->info("local_lessor_started partition={}", shard);
  return lessor;
}

} // namespace nf::actors::node_impl
