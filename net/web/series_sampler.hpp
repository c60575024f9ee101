#pragma once

// Samples the node's metrics into a rate_series (engine/metrics/series.hpp) on a thread of
// its own, every interval, for GET /api/metrics/series.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/metrics/series.hpp"

namespace nf::net::web {

class series_sampler {
public:
  /// Keeps `window / interval` points (an hour of 5 s points by default).
  explicit series_sampler(std::chrono::milliseconds interval = std::chrono::seconds{5},
                          std::chrono::milliseconds window = std::chrono::hours{1});
  ~series_sampler();
  series_sampler(const series_sampler&) = delete;
  series_sampler& operator=(const series_sampler&) = delete;

  void start();
  void stop();

  std::chrono::milliseconds interval() const { return interval_; }
  const engine::metrics::rate_series& series() const { return series_; }

  /// One sample now (the thread calls it; tests may too).
  void sample_now();

private:
  std::chrono::milliseconds interval_;
  engine::metrics::rate_series series_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace nf::net::web
