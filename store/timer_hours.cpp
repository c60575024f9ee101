#include "store/timer_hours.hpp"

#include <chrono>

namespace nf::store {

std::optional<hour_window> timer_hours(int64_t from_s, int64_t to_s, int max_hours) {
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  return hours_covering(now_s + from_s - timer_clock_skew_s, now_s + to_s + timer_clock_skew_s,
                        max_hours);
}

} // namespace nf::store
