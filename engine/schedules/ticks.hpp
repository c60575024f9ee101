#pragma once

// A schedule's times: its cron expression in its zone (flow/cron.hpp over the zone the tz
// database gives), the first tick of a new or resumed schedule, and which due ticks a firing
// starts. What happens after downtime (the catch-up policy):
//   * runCatchupScheduleInstances false: a tick that fell due more than `late_grace_ms`
//     (60 s) ago is skipped; the ones within it start (a node busy for a few seconds loses
//     nothing). After an outage the schedule carries on from the next tick.
//   * true: every missed tick of the last `catchup_window_ms` (24 h) starts, oldest first,
//     `ticks_per_firing` (100) per transaction; older ones are skipped.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "flow/cron.hpp"

namespace nf::engine::schedules {

constexpr int64_t late_grace_ms = 60'000;
constexpr int64_t catchup_window_ms = 24 * 3600 * 1000;
constexpr size_t ticks_per_firing = 100;

struct timing {
  flow::cron_expression cron;
  std::shared_ptr<const flow::time_zone> zone;
};

/// `invalid` naming cronExpression or zoneId when either is refused.
caf::expected<timing> timing_of(const std::string& cron_expression, const std::string& zone_id);

/// The first tick after `now_ms` (and at or after `start_ms`, not after `end_ms`), ms.
std::optional<int64_t> first_tick(const timing& t, int64_t now_ms, std::optional<int64_t> start_ms,
                                  std::optional<int64_t> end_ms);

/// A firing's ticks: those to start now, and the next tick left (none: no run left).
struct firing {
  std::vector<int64_t> ticks;
  std::optional<int64_t> next;
  int64_t skipped = 0; ///< ticks passed over by the catch-up policy (counted up to 10000)
};

firing due_ticks(const timing& t, int64_t next_due_ms, int64_t now_ms, bool catch_up,
                 std::optional<int64_t> end_ms);

} // namespace nf::engine::schedules
