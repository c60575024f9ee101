#pragma once

// Where the engine reads this process's time. Deadlines that the database enforces come
// from the server's now(); this clock only measures and extrapolates (a batch's duration,
// the server's clock between two reads of it). Tests pass one they move by hand.

#include <chrono>
#include <cstdint>
#include <memory>

namespace nf::engine {

class clock {
public:
  using time_point = std::chrono::steady_clock::time_point;

  virtual ~clock() = default;
  virtual time_point now() const = 0;

  /// now() in milliseconds since the clock's epoch.
  int64_t now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now().time_since_epoch())
      .count();
  }
};

/// The process's steady clock.
class steady_clock_source : public clock {
public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
};

/// The one steady clock every engine object uses unless given another.
inline std::shared_ptr<const clock> steady_clock() {
  static const auto instance = std::make_shared<const steady_clock_source>();
  return instance;
}

} // namespace nf::engine
