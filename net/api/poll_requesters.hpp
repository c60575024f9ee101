#pragma once

// The network senders of the polls an api holds open, watched while one of theirs is open.
//
// A poll answered after its sender went away (its process ended, its link dropped, or its
// call gave up waiting) leased tasks nobody will read; CAF drops an answer to a stopped
// proxy without a word. The api monitors each sender while it has a poll open and, when
// the sender goes down first, hands the answer's leases back to their queues at once
// instead of letting them wait out the task's lease (responseTimeoutSeconds).

#include <cstddef>
#include <memory>
#include <unordered_map>

#include <caf/actor_addr.hpp>

namespace nf::net {

class poll_requesters {
public:
  struct opened {
    /// True once the sender went down; read when the poll is answered.
    std::shared_ptr<const bool> gone;
    /// The sender's first open poll: the caller starts monitoring it.
    bool first = false;
  };

  /// A poll of `who` opened.
  opened open(const caf::actor_addr& who);

  /// A poll of `who` was answered: true when it was its last open one and `who` is still
  /// watched (the caller stops monitoring it).
  bool close(const caf::actor_addr& who);

  /// `who` went down: its open polls' answers reach nobody. False if it was not watched.
  bool went_away(const caf::actor_addr& who);

  /// Senders watched now.
  size_t size() const { return by_sender_.size(); }

private:
  struct entry {
    size_t open = 0;
    std::shared_ptr<bool> gone;
  };
  std::unordered_map<caf::actor_addr, entry> by_sender_;
};

} // namespace nf::net
