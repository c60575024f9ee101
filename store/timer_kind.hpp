#pragma once

// The "timer_kind" ENUM of the database (migration 0007) as the store takes it: one type for
// the timers' own statements (store/timers.hpp) and the decisions that arm and cancel them
// (store/decisions.hpp), which include it from here.

#include <cstdint>
#include <optional>
#include <string_view>

namespace nf::store {

enum class timer_kind : uint8_t {
  schedule_to_start, start_to_close, task_timeout, workflow_timeout, wait, delay,
};

/// The ENUM label ("scheduleToStart", …).
const char* to_sql(timer_kind k);
std::optional<timer_kind> timer_kind_from_sql(std::string_view s);

} // namespace nf::store
