#pragma once

// The leases a node made, remembered so that their completions need no read of the task and
// queue rows (docs/engine.md §3): a committer writes a completion from what the lease's
// maker knew, and a flush of such completions is one round trip shorter. Both makers write
// here once their transaction has committed: a committer for a task it leased in its own
// decision, a lessor for the tasks of its lease transactions. Only a cache: the
// completion's writes re-check the lease under their locks (task_transitions: the queue row
// deleted only while it holds the token, the task row finished only while IN_PROGRESS,
// I5), so a lease that expired or moved since makes the attempt `stale`, and its retry
// reads the rows as before. Shared by the node's lessors and committers, each on a thread of
// its own, under a mutex.

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/lease_facts.hpp"
#include "store/tasks.hpp"

namespace nf::engine {

class lease_memory {
public:
  /// Past this many the memory starts again from none (leases whose completion never came
  /// here: a worker that died, a workflow whose partition moved).
  explicit lease_memory(size_t capacity = 100000) : capacity_(capacity) {}

  /// Called once the leases' transaction has committed.
  void remember(std::vector<store::lease_facts> leases);

  /// The facts of `r`'s lease if this node made it, `r` holds its token, and the lease is
  /// not due to expire by `now_ms` (server clock) and a margin: an expired lease is likely
  /// swept or taken by now, and writing from its facts would fail the caller's attempt
  /// (its rows are read instead; a lease a heartbeat extended is read too). Forgotten once
  /// asked: a second report of the task, or a retried attempt, reads the rows.
  std::optional<store::lease_facts> recall(const store::task_result& r, int64_t now_ms);

  /// How close to its expiry a lease is no longer recalled.
  static constexpr int64_t expiry_margin_ms = 500;

private:
  size_t capacity_;
  std::mutex mutex_;
  std::unordered_map<std::string, store::lease_facts> by_task_;
};

} // namespace nf::engine
