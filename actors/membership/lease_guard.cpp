#include "actors/membership/lease_guard.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/local_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/logger.h>

#include "config/folder_logger.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

using steady = std::chrono::steady_clock;

struct guard_state {
  caf::actor node;
  std::vector<int16_t> owned;  ///< what membership last said
  steady::time_point valid_until;
  std::vector<int16_t> told;   ///< what the node last heard
  std::shared_ptr<spdlog::logger> log;

  static inline const char* name = "nf.lease_guard";
};

using guard_actor = caf::stateful_actor<guard_state>;

void tell(guard_actor* self) {
  auto& st = self->state;
  auto now = steady::now();
  std::vector<int16_t> serving = now < st.valid_until ? st.owned : std::vector<int16_t>{};
  if (serving == st.told)
    return;
  if (serving.empty() && !st.owned.empty())
    st.log->warn("leases_lapsed owned={} (membership renewed none in time: stopping them "
                 "until they are acquired again)",
                 st.owned.size());
  st.log->info("partitions_changed owned={}", serving.size());
  st.told = serving;
  if (st.node)
    self->send(st.node, partitions_atom_v, std::move(serving));
}

caf::behavior guard_behavior(guard_actor* self, caf::actor node) {
  self->state.node = std::move(node);
  self->state.log = folder_logger("membership");
  return {
    [=](partitions_atom, std::vector<int16_t> owned, int64_t valid_until_ns) {
      auto& st = self->state;
      st.owned = std::move(owned);
      st.valid_until = steady::time_point{std::chrono::nanoseconds{valid_until_ns}};
      tell(self);
      auto left = st.valid_until - steady::now();
      if (!st.owned.empty() && left > steady::duration::zero())
        self->delayed_send(self, left + std::chrono::milliseconds{1}, tick_atom_v);
    },
    // A deadline came: if no renewal moved it since, the node stops the partitions.
    [=](tick_atom) { tell(self); },
  };
}

} // namespace

caf::actor spawn_lease_guard(caf::local_actor* membership, caf::actor node) {
  return membership->spawn<caf::linked>(guard_behavior, std::move(node));
}

} // namespace nf::actors
