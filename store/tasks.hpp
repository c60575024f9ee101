#pragma once

// Finishing leased tasks: complete / fail, fenced by the lease token (I5, DESIGN §3 step 4).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/events.hpp"
#include "store/ids.hpp"
#include "store/lease_facts.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/params.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

enum class task_outcome {
  completed,       ///< COMPLETED
  failed,          ///< FAILED (the decider may retry: attempt + 1)
  failed_terminal, ///< FAILED_WITH_TERMINAL_ERROR (never retried)
};

/// What a worker reports for one leased task.
struct task_result {
  workflow_id workflow;
  task_id task;
  lease_token token;
  task_outcome outcome = task_outcome::completed;
  std::optional<json_text> output;   ///< through json(); absent keeps the current output
  std::optional<std::string> reason; ///< "reasonForIncompletion"
  /// The namespace the report came from: a task of another one is `not_found`. Absent for
  /// the node's own reports (system tasks), which may finish a task of any namespace.
  std::optional<namespace_id> ns;
};

/// Per-task answer of a batch.
enum class completion { done, lease_lost, not_found };

/// Finishes one task in one transaction, in the lock order: "DecideQueues" upsert
/// (DO UPDATE, I2) → seq allocation → the queue row deleted only if it still holds
/// `token` → the task row finished → its pending timers cancelled → event + outbox row.
/// A token that is no longer the task's lease is `errc::lease_lost` ("lease lost") and
/// changes nothing; an unknown task is `errc::not_found`.
caf::expected<void> complete_task(connection& conn, const task_result& r);

/// The most tasks complete_tasks takes in one call.
constexpr size_t max_completions_per_batch = 1000;

/// The same for many tasks (of many workflows) in one transaction. A lost lease only
/// drops its own task: entry i answers r[i]. The same task twice, or more than
/// max_completions_per_batch tasks, is `invalid`.
caf::expected<std::vector<completion>> complete_tasks(connection& conn,
                                                      const std::vector<task_result>& rs);

/// The same inside the caller's open transaction. `errc::stale` means a race changed a
/// row between the unlocked read and the locks: roll back and call again.
/// `evaluated_here`: the caller evaluates the tasks' workflows later in the same
/// transaction, so each end is stamped seen at once (task_finish::seen, I3); the caller
/// must unsee_tasks those whose workflow it then did not evaluate.
/// `decided_here`: workflows the caller is sure to evaluate in this transaction (it serves
/// their shards, fast path a). Their completions write no "DecideQueues" row, which the
/// same commit would only delete again; the caller writes one after all for a workflow
/// it then does not evaluate to the end (store::requeue).
caf::expected<std::vector<completion>> complete_tasks(
  transaction& tx, const std::vector<task_result>& rs, bool evaluated_here = false,
  const std::set<workflow_id>& decided_here = {});

/// complete_tasks (in the caller's transaction) in parts, so that a caller can send the
/// read and the writes in pipelines of its own (the decider sends the read with its starts,
/// and the writes with its claim): the batch's own checks (`invalid`: too many tasks, a task
/// twice; an empty batch needs no read), the read of the leases, and the writes the read
/// calls for. add_completion_writes adds those to the caller's pipeline, which may carry
/// statements of its own after them (they see the writes). Once it ran,
/// transition_applied(plan, at, …) says whether the writes held (`errc::stale`: roll back
/// and call again); `answers` are the batch's answers if they did.
caf::expected<void> check_completions(const std::vector<task_result>& rs);
void add_completion_read(pipeline& p, const std::vector<task_result>& rs);

/// lease_facts::scheduled_at for a lease made at `leased_ms` (server clock): a minute before
/// it, which is no later than a minute before the lease's completion.
std::string scheduled_bound_of_lease(int64_t leased_ms);

/// The facts each completion of `rs` needs from `read` (add_completion_read's result),
/// or nullopt with its answer in `answers` (not_found, lease_lost: I5).
std::vector<std::optional<lease_facts>> lease_facts_of(const std::vector<task_result>& rs,
                                                       const result& read,
                                                       std::vector<completion>& answers);
struct completion_writes {
  std::vector<completion> answers;
  /// With `defer_events`, the TASK_COMPLETED / TASK_FAILED events of the workflows in
  /// `decided_here`, by workflow, in order: not written here (their execution rows are
  /// locked in the events' place instead, transition_plan::locked), but by the caller's
  /// decision of each, before its own events (decision_write::preceding), so the execution
  /// row is updated once. The caller must write every one of them or roll back.
  std::map<std::string, std::vector<event_write>> deferred;
  transition_plan plan;
  transition_slots at;
};
completion_writes add_completion_writes(pipeline& p, const std::vector<task_result>& rs,
                                        const result& read, bool evaluated_here = false,
                                        const std::set<workflow_id>& decided_here = {},
                                        bool defer_events = false);
/// The same from each completion's facts (nullopt: it is answered in `answers` already,
/// and writes nothing).
completion_writes add_completion_writes(pipeline& p, const std::vector<task_result>& rs,
                                        const std::vector<std::optional<lease_facts>>& facts,
                                        std::vector<completion> answers, bool evaluated_here,
                                        const std::set<workflow_id>& decided_here,
                                        bool defer_events);

/// Clears "deciderSeenAt" of tasks whose ends complete_tasks stamped for an evaluation
/// that did not happen in the transaction: they wait unseen for the one that will (I3).
caf::expected<void> unsee_tasks(transaction& tx, const std::vector<task_result>& rs);

} // namespace nf::store
