#pragma once

// Firing due schedules: one transaction claims the due "Schedules" rows (FOR UPDATE SKIP
// LOCKED: a row another node is firing is skipped, never waited for), starts the workflow
// of each due tick (engine/schedules/ticks.hpp says which) with the idempotency key
// `schedule:<name>@<tick ms>` (the start's own guard: a tick's key names one workflow for
// good, I10), and moves each row's "nextRunAt" past what it started. So a tick starts
// exactly one workflow whatever the number of nodes racing for it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::engine::schedules {

/// At most this many schedules per transaction.
constexpr int schedules_per_firing = 20;

struct fire_outcome {
  int64_t started = 0;        ///< workflows created
  int64_t already = 0;        ///< ticks whose key named a workflow already
  int64_t failed = 0;         ///< ticks whose start was refused (e.g. its definition is gone)
  int64_t skipped = 0;        ///< ticks passed over by the catch-up policy
  std::vector<int16_t> shards;///< where started workflows wait for their decider
  bool more = false;          ///< a full batch was claimed: fire again at once
};

/// The idempotency key of a schedule's tick.
std::string tick_key(const std::string& schedule, int64_t tick_ms);

caf::expected<fire_outcome> fire_due(store::connection& conn, int partition_count);

} // namespace nf::engine::schedules
