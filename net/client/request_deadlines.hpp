#pragma once

// The deadlines of an actor's requests in flight, kept by the actor itself.
//
// A CAF 0.17 request with a timeout hands the timeout to the actor clock's thread when it
// is sent and again when its answer comes: two wake-ups of that thread per request, about
// six per one-task workflow in a node (a start, a poll and a report, each relayed once), a
// tenth of the node's context switches on a two-core machine.
// The actor asks with no timeout instead, notes each request's deadline here, and fails
// what is overdue from a sweep of its own, one timer for all of them. The first of a
// request's answer and its expiry wins; the other finds the entry gone and does nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include <caf/error.hpp>

namespace nf::net {

class request_deadlines {
public:
  using clock = std::chrono::steady_clock;
  using fail_fn = std::function<void(caf::error)>;

  /// Notes a request that `fail` answers if nothing else did by `deadline`.
  uint64_t add(clock::time_point deadline, fail_fn fail);

  /// Its answer came: true when it was still in flight (the caller delivers the answer),
  /// false when it had expired already (the answer is dropped).
  bool settle(uint64_t id);

  /// Fails every request due at `now` with `caf::sec::request_timeout`, as CAF would.
  size_t expire(clock::time_point now);

  /// The earliest deadline still pending, if any.
  std::optional<clock::time_point> next_deadline() const;

  size_t size() const { return pending_.size(); }

private:
  struct entry {
    clock::time_point deadline;
    fail_fn fail;
  };
  uint64_t next_id_ = 1;
  // Ordered by id, not by deadline: a sweep walks every request in flight (a few per
  // worker's open polls, every 10-500 ms), which costs less than keeping a second index
  // to update on every answer.
  std::map<uint64_t, entry> pending_;
};

} // namespace nf::net
