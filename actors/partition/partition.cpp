#include "actors/partition/partition.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/decider/decider.hpp"
#include "actors/lessor/lessor.hpp"
#include "actors/relay/relay.hpp"
#include "actors/timer/timer.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

caf::behavior supervisor(caf::event_based_actor* self, std::vector<caf::actor> children) {
  // Links go both ways: the supervisor's exit (any non-normal reason) stops every
  // child, and a child's crash stops the supervisor (default exit handler).
  for (auto& c : children)
    self->link_to(c);
  return {[](tick_atom) {}};
}

} // namespace

partition_handles spawn_partition(caf::actor_system& sys, const partition_context& ctx) {
  partition_handles h;
  h.decider = spawn_decider(sys, ctx);
  h.lessor = spawn_lessor(sys, ctx);
  h.timer = spawn_timer(sys, ctx);
  h.relay = spawn_relay(sys, ctx);
  h.supervisor = sys.spawn(supervisor, std::vector<caf::actor>{h.decider, h.lessor, h.timer,
                                                               h.relay});
  return h;
}

} // namespace nf::actors
