#pragma once

// Where the engine reads this process's time. Deadlines that the database enforces come
// from the server's now(); this clock only measures and extrapolates (a batch's duration,
// the server's clock between two reads of it). Tests pass one they move by hand.

#include <chrono>
#include <cstdint>
#include <functional>

namespace nf::engine {

using steady_now = std::function<std::chrono::steady_clock::time_point()>;

/// A time point of the steady clock in milliseconds since its epoch.
inline int64_t ms_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

} // namespace nf::engine
