#pragma once

// Operator edits of an ended (or running) execution: the store half of
// flow::retry_last_failed / rerun_from_task / restart (flow/operations.hpp). The new
// executions, timers and events of an edit are written with apply_decisions, so this
// file only does what a decision cannot: delete executions, reopen ended ones, and
// replace the workflow's status, input and variables.

#include <cstdint>
#include <optional>
#include <vector>

#include <caf/expected.hpp>

#include "flow/status.hpp"
#include "flow/types.hpp"
#include "store/ids.hpp"
#include "store/pg/params.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

/// A status change that may reopen an ended execution (a DO_WHILE set back to
/// IN_PROGRESS by a retry): "endedAt" and "deciderSeenAt" are cleared for a
/// non-terminal status so the task's next end is seen again (I3).
struct task_reopen {
  flow::task_identity identity;
  flow::task_status status = flow::task_status::in_progress;
};

struct edit_write {
  workflow_id id;
  /// The snapshot's version: the edit bumps it to +1 or fails `stale` (I4).
  int64_t expected_version = 0;
  /// Executions to delete, with their queue rows (a leased one loses its lease: the
  /// late worker gets `lease lost`) and pending timers.
  std::vector<flow::task_identity> remove;
  std::vector<task_reopen> reopen;
  /// The status afterwards; output, reason, failed task and "endedAt" are cleared.
  flow::workflow_status status = flow::workflow_status::running;
  std::optional<json_text> input;      ///< replaces the input
  std::optional<json_text> variables;  ///< replaces the variables
};

/// Writes one edit in the caller's transaction, in the lock order
/// WorkflowExecutions → TaskQueues → TaskExecutions. `stale` when the version moved.
caf::expected<void> apply_edit(transaction& tx, const edit_write& w);

} // namespace nf::store
