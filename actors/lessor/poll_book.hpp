#pragma once

// The lessor's bookkeeping of open polls, without I/O: which polls go into the
// next lease transaction (pending), which wait for work (parked, by queue), and
// when each must be answered. Kept apart from the actor so its rules are plain.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/response_promise.hpp>

#include "proto/messages.hpp"

namespace nf::actors {

struct open_poll {
  int64_t id = 0;
  msg::poll_request req;
  caf::response_promise promise;
  std::chrono::steady_clock::time_point deadline;
  bool parked = false;
  bool expiry_armed = false; ///< a delayed expiry message for it is on its way
  bool offered = false;      ///< offered to the node's committers (waiting_polls.hpp)
};

class poll_book {
public:
  using time_point = std::chrono::steady_clock::time_point;

  /// Adds a poll to the next transaction; returns its id.
  int64_t add(msg::poll_request req, caf::response_promise promise, time_point deadline);

  /// Adds a poll that is not queued for a transaction (its queue is known to be
  /// empty): the caller parks it or answers it.
  open_poll& add_unqueued(msg::poll_request req, caf::response_promise promise,
                          time_point deadline);

  bool has_pending() const { return !pending_.empty(); }

  /// Takes pending polls, oldest first, while their max_tasks fit in `budget`
  /// (always at least one, so a large poll cannot starve).
  std::vector<open_poll*> take_pending(int budget);

  /// Parks a poll that found no work; true when it needs an expiry message.
  bool park(open_poll& p);

  /// Whether a parked poll may be taken now: false while a committer has it lent.
  using may_take = std::function<bool(open_poll&)>;

  /// Moves the parked polls of `queue` back to pending, oldest first, at most
  /// `limit` of them, skipping (and keeping parked) those `take` refuses; returns how many.
  size_t wake(const std::string& queue, size_t limit, const may_take& take);

  /// Moves every parked poll `take` allows back to pending (the periodic retry).
  size_t wake_all(const may_take& take);

  /// Moves one parked poll back to pending; false when it is not parked.
  bool wake_one(int64_t id);

  /// Answers `p` (already delivered by the caller) and forgets it.
  void erase(int64_t id);

  open_poll* find(int64_t id);

  /// Parked polls whose deadline is at or before `now`.
  std::vector<open_poll*> expired(time_point now);

  size_t parked_count(const std::string& queue) const;

  /// Every poll still open (for answering them when the lessor stops).
  std::vector<open_poll*> all();

private:
  /// Takes a parked poll off its queue's parked list.
  void unlist_parked(const open_poll& p);

  int64_t next_id_ = 1;
  std::unordered_map<int64_t, open_poll> polls_;
  std::deque<int64_t> pending_;
  std::map<std::string, std::vector<int64_t>> parked_; ///< by queue, oldest first
};

} // namespace nf::actors
