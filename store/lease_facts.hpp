#pragma once

// What a completion's writes need to know of the task and the lease it finishes.

#include <cstdint>
#include <optional>
#include <string>

#include "flow/types.hpp"
#include "store/ids.hpp"

namespace nf::store {

/// Read with the completion (store::add_completion_read), or remembered by the node that
/// made the lease (engine/lease/lease_memory.hpp, docs/engine.md §3): the writes re-check the
/// lease under their locks either way, so facts that no longer hold make them `stale`,
/// never wrong.
struct lease_facts {
  workflow_id workflow;
  task_id task;
  lease_token token;
  namespace_id ns;
  int16_t shard = 0;
  std::string queue;
  flow::task_identity identity;
  /// Bounds the timer cancel's partitions from below: no later than the task's
  /// "scheduledAt", or than a minute before the completion (the cancel looks no further
  /// back: a timer due before that is the timer actor's, store/task_transitions.cpp).
  std::string scheduled_at;
  std::optional<int64_t> timers_within_s;  ///< task_finish::timers_within_s
  int64_t lease_expires_at_ms = 0;  ///< as the lease set it (server clock)
};

} // namespace nf::store
