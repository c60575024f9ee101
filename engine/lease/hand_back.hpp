#pragma once

// Leased tasks that never reached their worker, handed back to their queues at once
// (store/lease_hand_back.hpp): by the HTTP door when the long poll's client had gone, by the
// api when a poll's answer came after its deadline, or by a client that could not take them.

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// Hands back the leases `tasks` hold (by their tokens); returns the queue of each one
/// handed back, for the work hints that wake the next poll.
caf::expected<std::vector<std::string>> hand_back(store::connection& conn,
                                                  const std::vector<msg::leased_task>& tasks);

} // namespace nf::engine
