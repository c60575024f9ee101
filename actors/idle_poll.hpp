#pragma once

// The interval of an actor's safety-net poll (I9): the poll runs every `base` while it finds
// work or hints arrive, and each poll that found nothing doubles the wait up to `idle_max`.
// A node with nothing to do then costs Postgres a few transactions a second, and work whose
// every hint was lost is still found, within `idle_max` at worst.

#include <algorithm>
#include <chrono>

namespace nf::actors {

class idle_poll {
public:
  using duration = std::chrono::milliseconds;

  idle_poll() = default;
  idle_poll(duration base, duration idle_max)
    : base_(base), max_(std::max(base, idle_max)), next_(base) {}

  /// Something to do came (a hint, a request, a poll that found work): the next poll is at
  /// the base interval again.
  void active() { active_ = true; }

  /// The wait before the next poll, given what happened since the previous one.
  duration next() {
    next_ = active_ ? base_ : std::min(max_, next_ * 2);
    active_ = false;
    return next_;
  }

  duration base() const { return base_; }

private:
  duration base_{1000};
  duration max_{1000};
  duration next_{1000};
  bool active_ = false;
};

} // namespace nf::actors
