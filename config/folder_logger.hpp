#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace nf {

/// The logger of one source folder ("lessor", "timer", …): created on first
/// use as a clone of the default logger (same sinks and level), then shared.
std::shared_ptr<spdlog::logger> folder_logger(const std::string& name);

/// Lets a hot-path warning through at most once per `every`; `suppressed()`
/// says how many were dropped since the last one let through.
class warn_limiter {
public:
  explicit warn_limiter(std::chrono::milliseconds every = std::chrono::seconds(10))
    : every_(every) {}

  bool allow() {
    auto now = std::chrono::steady_clock::now();
    if (last_ != std::chrono::steady_clock::time_point{} && now - last_ < every_) {
      ++dropped_;
      return false;
    }
    last_ = now;
    reported_ = dropped_;
    dropped_ = 0;
    return true;
  }

  /// Warnings dropped before the one just allowed.
  long suppressed() const { return reported_; }

private:
  std::chrono::milliseconds every_;
  std::chrono::steady_clock::time_point last_{};
  long dropped_ = 0;
  long reported_ = 0;
};

} // namespace nf
