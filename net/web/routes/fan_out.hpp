#pragma once

// Many requests to the api for one HTTP request (a bulk command, the workflows of several
// correlation ids), a bounded number at a time, joined once all are answered. Answers come
// on CAF's threads, so the bookkeeping is under a mutex.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

namespace nf::net::web {

class fan_out : public std::enable_shared_from_this<fan_out> {
public:
  /// One step: does its work and calls `next()` exactly once when it is done.
  using step_fn = std::function<void(size_t index, std::function<void()> next)>;

  /// Runs `step(i, next)` for every i in [0, n) with at most `window` in flight, then
  /// `finished()` once, after the last step called its `next()`.
  static void run(size_t n, size_t window, step_fn step, std::function<void()> finished);

  fan_out(size_t n, size_t window, step_fn step, std::function<void()> finished)
    : n_(n), window_(window == 0 ? 1 : window), step_(std::move(step)),
      finished_(std::move(finished)) {}

private:
  void launch();
  void one_done();

  std::mutex m_;
  size_t n_;
  size_t window_;
  size_t started_ = 0;
  size_t in_flight_ = 0;
  size_t done_ = 0;
  step_fn step_;
  std::function<void()> finished_;
};

} // namespace nf::net::web
