#pragma once

// The lessors a node runs for partitions another node owns: a stand-in while the owner
// cannot be reached (write_through, relay.cpp), and a local lessor whose polls wait here for
// this node's decisions (cluster.lease_locally, docs/engine.md §2).

#include <map>

#include <caf/actor.hpp>
#include <caf/exit_reason.hpp>

#include "actors/node/node_state.hpp"

namespace nf::actors::node_impl {

/// The lessor that leases `shard`'s queues here while their owner cannot be reached.
caf::actor stand_in_lessor(node_actor* self, int16_t shard);

/// The lessor that leases `shard`'s queues to this node's polls (cluster.lease_locally) while
/// another node owns the partition. Its polls wait here, where this node's committers lease
/// them the tasks they decide; forwarded to the owner, they would wait where only the owner's
/// decisions could.
caf::actor local_lessor(node_actor* self, int16_t shard);

/// Stops the lessors of `guests` (stand-ins or local lessors, logged as `what`_stopped) whose
/// shard `stop` names; their open polls are answered "poll again".
template <class Pred>
void stop_guests(node_actor* self, std::map<int16_t, caf::actor>& guests, const char* what,
                 Pred stop) {
  for (auto it = guests.begin(); it != guests.end();) {
    if (!stop(it->first)) {
      ++it;
      continue;
    }
    self->state.log->info("{}_stopped partition={}", what, it->first);
    self->send_exit(it->second, caf::exit_reason::user_shutdown);
    it = guests.erase(it);
  }
}

/// Stops the stand-in lessors of `shards` (owned here now, by a new owner, or by a peer
/// that answers again).
template <class Pred>
void stop_stand_ins(node_actor* self, Pred stop) {
  stop_guests(self, self->state.stand_ins, "stand_in_lessor", stop);
}

} // namespace nf::actors::node_impl
