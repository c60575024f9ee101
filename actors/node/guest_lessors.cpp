#include "actors/node/guest_lessors.hpp"

#include "actors/lessor/lessor.hpp"

namespace nf::actors::node_impl {

namespace {

/// A lessor of `shard`'s queues on this node, which does not own the partition: the same
/// lease statement (FOR UPDATE SKIP LOCKED) the owner's runs, so the two may overlap (I9),
/// with no epoch to fence it. `lend`: its parked polls are offered to this node's
/// committers, which lease them the tasks they decide.
caf::actor spawn_guest_lessor(node_actor* self, int16_t shard, bool lend) {
  auto ctx = context_of(self, shard);
  if (!lend)
    ctx.waiting = nullptr;
  auto lessor = spawn_lessor(self->system(), ctx);
  self->monitor(lessor);
  return lessor;
}

/// `shard`'s lessor in `guests`, started (and `started` called) when there is none yet.
template <class Started>
caf::actor guest(node_actor* self, std::map<int16_t, caf::actor>& guests, int16_t shard,
                 bool lend, Started started) {
  if (auto it = guests.find(shard); it != guests.end())
    return it->second;
  auto lessor = spawn_guest_lessor(self, shard, lend);
  guests.emplace(shard, lessor);
  started();
  return lessor;
}

} // namespace

caf::actor stand_in_lessor(node_actor* self, int16_t shard) {
  return guest(self, self->state.stand_ins, shard, false, [&] {
    self->state.log->warn("stand_in_lessor_started partition={} owner={}", shard,
                          owner_elsewhere(self, shard));
  });
}

caf::actor local_lessor(node_actor* self, int16_t shard) {
  return guest(self, self->state.local_lessors, shard, true,
               [&] { self->state.log->info("local_lessor_started partition={}", shard); });
}

} // namespace nf::actors::node_impl
