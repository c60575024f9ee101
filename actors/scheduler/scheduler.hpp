#pragma once

// The scheduler of a node (detached, own connection): fires due workflow schedules
// (engine/schedules/fire.hpp). Every node runs one; the claim's row locks make them share
// the work, so a tick starts one workflow however many nodes race for it. It sleeps until
// the earliest due tick it reads, at most `max_wait` (5 s) while schedules exist, so a
// schedule created, resumed or brought forward on another node is seen within that, and
// `idle_wait` (30 s) while none does: an idle node costs one small read per 30 s. The
// tables are the truth: a lost hint costs at most one of those waits. Protocol:
//   (schedules_atom)  hint: a schedule changed here, read the tables again now.
// After firing it sends the node (decide_atom, int16_t shard) for the started workflows.

#include <chrono>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace nf::actors {

struct scheduler_context {
  std::string dsn;  ///< for the scheduler's own connection
  caf::actor node;  ///< where decide hints go (none in some tests)
  std::chrono::milliseconds max_wait{5000};
  std::chrono::milliseconds idle_wait{30000};
};

caf::actor spawn_scheduler(caf::actor_system& sys, const scheduler_context& ctx);

} // namespace nf::actors
