#pragma once

// The leases this decider's own decisions made (a task leased to a waiting poll in the
// commit that schedules it, docs/engine.md §3), remembered so that their completions need
// no read of the task and queue rows: a flush of such completions is one round trip
// shorter. Only a cache: the completion's writes re-check the lease under their locks
// (task_transitions: a removed queue row holding the token, a task row still IN_PROGRESS),
// so a lease that expired or was taken since makes the attempt `stale`, and its retry reads
// the rows as before.

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "store/tasks.hpp"

namespace nf::actors::decider {

class lease_memory {
public:
  /// Past this many the memory starts again from none (leases whose completion never came
  /// here: a worker that died, a partition that moved).
  explicit lease_memory(size_t capacity = 50000) : capacity_(capacity) {}

  /// Called once the lease's transaction has committed.
  void remember(store::lease_facts f);

  /// The facts of `r`'s lease if this decider made it and `r` holds its token. Forgotten
  /// once asked: a second report of the task, or a retried attempt, reads the rows.
  std::optional<store::lease_facts> recall(const store::task_result& r);

  size_t size() const { return by_task_.size(); }
  void clear() { by_task_.clear(); }

private:
  size_t capacity_;
  std::unordered_map<std::string, store::lease_facts> by_task_;
};

} // namespace nf::actors::decider
