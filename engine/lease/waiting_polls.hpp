#pragma once

// The polls a node's lessors hold parked, offered to the node's decide committers.
// A committer that queues a task on one of these queues leases it to a waiting poll
// in the same transaction (docs/engine.md §3, "lease in the decision"): the worker has
// the task as soon as that commits, with no lease transaction of its own in between.
//
// Lessors and committers are detached actors on threads of their own, so this is
// shared under a mutex. A parked poll is here (offered), or lent to one committer,
// or neither; whoever takes it out of here owns it until it is answered or handed
// back: the lessor that withdraws it, or the committer it is lent to, which hands it
// back by message (`lent_atom`, lessor.hpp) whether it leased anything or not.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "store/queues.hpp"

namespace nf::engine {

struct waiting_poll {
  caf::actor lessor;              ///< answers the poll
  int64_t poll = 0;               ///< its id in that lessor's poll_book
  store::lease_request request;   ///< worker, max_tasks and the queue's lease policy
};

class waiting_polls {
public:
  /// Offers a parked poll. Only polls of queues without a concurrency or rate limit
  /// are offered: those limits are the lessor's to apply.
  void offer(waiting_poll p);

  /// Takes an offered poll back; false when it is lent (or was never offered).
  bool withdraw(caf::actor_id lessor, int64_t poll);

  /// Takes back every poll `lessor` offered (it is stopping).
  void withdraw_all(caf::actor_id lessor);

  /// Lends the oldest polls of `queue` until their max_tasks cover `tasks`.
  std::vector<waiting_poll> lend(const std::string& queue, size_t tasks);

  /// How many polls each queue has offered now (the node's status).
  std::map<std::string, size_t> offered() const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, std::deque<waiting_poll>> by_queue_;
};

} // namespace nf::engine
