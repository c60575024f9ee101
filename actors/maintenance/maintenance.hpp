#pragma once

// Maintenance (detached, own connection): at start and every maintenance.interval_s
// it creates the range partitions ahead of time, drops expired ones
// (store::partition_manager; every node runs it, the manager is race-safe), prunes
// expired "TaskOutputCache" rows and deletes outbox events delivered longer ago than
// relay.published_retention_s (two nodes deleting the same rows only wait for each
// other). It takes no requests.

#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/settings.hpp"

namespace nf::actors {

caf::actor spawn_maintenance(caf::actor_system& sys, std::string dsn,
                             const config::values& settings);

} // namespace nf::actors
