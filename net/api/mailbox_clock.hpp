#pragma once

// How long a request waits for a store worker, the api's pool of database sessions: the api
// notes when it sends each request to a worker, the worker takes the oldest note when it
// starts one. The api is a worker's only sender and a worker takes its mailbox in order, so
// the k-th note taken is the k-th request's. A worker sent to by nobody else (tests) finds
// no note and measures nothing.

#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

namespace nf::net {

class mailbox_clock {
public:
  using clock = std::chrono::steady_clock;

  void sent() {
    auto now = clock::now();
    std::lock_guard<std::mutex> lock{mutex_};
    sent_.push_back(now);
  }

  /// The wait of the request the worker takes up now.
  std::optional<clock::duration> taken() {
    std::lock_guard<std::mutex> lock{mutex_};
    if (sent_.empty())
      return std::nullopt;
    auto at = sent_.front();
    sent_.pop_front();
    return clock::now() - at;
  }

private:
  std::mutex mutex_;
  std::deque<clock::time_point> sent_;
};

} // namespace nf::net
