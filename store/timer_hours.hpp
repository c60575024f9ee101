#pragma once

// Which hourly "Timers" partitions a statement bounded by the server's now() can touch,
// judged by this process's clock (store/pg/hour_window.hpp).

#include <cstdint>
#include <optional>

#include "store/pg/hour_window.hpp"

namespace nf::store {

/// How far this process's clock may be from the server's. A timer the window misses
/// because they differ by more is not cancelled; it fires later and does nothing (I6).
inline constexpr int64_t timer_clock_skew_s = 600;

/// The hours that hold every "fireAt" in [now() + from_s, now() + to_s], now() the
/// server's, widened by timer_clock_skew_s each way; nothing when that is more than
/// `max_hours`.
std::optional<hour_window> timer_hours(int64_t from_s, int64_t to_s, int max_hours);

} // namespace nf::store
