#pragma once

// What one transaction writes per workflow (a "plan"), how evaluations and operator
// commands produce plans, and how a batch of plans is written: edits, the batched
// decision writes (I1–I4), then the SUB_WORKFLOW children and failure workflows they
// start and the parent tasks their ends complete — all in the caller's transaction.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "engine/decide/batch.hpp"
#include "flow/decide.hpp"
#include "flow/decision.hpp"
#include "flow/definitions.hpp"
#include "store/decide_support.hpp"
#include "store/decisions.hpp"
#include "store/workflow_edits.hpp"

namespace nf::engine {

/// What a plan starts and ends, counted (engine/metrics) once its transaction commits.
struct decided_counts {
  std::vector<std::string> started;  ///< workflow names
  std::vector<std::pair<std::string, flow::workflow_status>> ended;  ///< name, final status
  /// Task definition name and terminal status of each attempt whose end a decision took in
  /// (the rows it stamps seen, I3), ran inline or ended itself (cancels, skips).
  std::vector<std::pair<std::string, flow::task_status>> task_ends;

  void merge(decided_counts&& o);
};

struct workflow_plan {
  workflow_id id;
  namespace_id ns;
  std::string workflow_name;
  int16_t priority = 0;
  boost::json::object task_to_domain;  ///< inherited by the children it starts
  std::optional<std::string> correlation_id;  ///< inherited by its children and failure workflow
  std::optional<store::edit_write> edit;  ///< applied first (version v → v+1)
  store::decision_write write;
  std::vector<flow::sub_workflow_start> children;
  std::optional<flow::failure_workflow_start> failure;
  /// This workflow is a child that ended: its parent task ends with it.
  std::optional<store::sub_workflow_end> parent_end;
  bool requeue = false;       ///< evaluate again (resume, edits)
  bool decide_again = false;  ///< decide() stopped early
  /// The ends of the tasks this write takes in or makes (decided_counts::task_ends).
  std::vector<std::pair<std::string, flow::task_status>> task_ends;
};

/// What the plans of one transaction did, for the answers, hints and log line.
struct plan_effects {
  batch_hints hints;
  size_t workflows = 0;
  size_t tasks_scheduled = 0;
  std::vector<workflow_id> stale;  ///< set when apply failed `stale` (I4)
  bool more_here = false;          ///< new work in a shard the caller serves
  /// Per workflow, the lowest id of the task rows the plans inserted.
  std::map<std::string, task_id> first_inserted;
  decided_counts counts;  ///< of the plans written
};

/// Parked polls (waiting_polls.hpp) the plans' new tasks are leased to in their own
/// transaction (docs/engine.md §3, "lease in the decision").
struct lending {
  waiting_polls* polls = nullptr;
  int64_t now_ms = 0;                      ///< the server's clock: the leases' expiry
  std::vector<lent_poll>* lent = nullptr;  ///< every poll borrowed, with what it was leased
};

/// The plan of one evaluation. `def` null = the execution's definition is missing
/// (`def_error` says why): the workflow fails rather than being retried forever. `cached`:
/// the output cache's entries found for the keys an earlier plan of it asked for
/// (cached_outputs.hpp).
workflow_plan plan_evaluation(const store::workflow_snapshot& s, const flow::workflow_def* def,
                              const std::string& def_error, const flow::task_def_map& task_defs,
                              const store::history_facts* facts, int64_t now_ms,
                              const flow::cached_outputs* cached = nullptr);

/// pause / resume / terminate (no definitions needed).
caf::expected<std::optional<workflow_plan>> plan_state_command(const command_request& c,
                                                               const store::workflow_snapshot& s);

/// retry / rerun / restart through flow/operations.hpp.
caf::expected<workflow_plan> plan_edit_command(const command_request& c,
                                               const store::workflow_snapshot& s,
                                               const flow::workflow_def& def,
                                               const flow::task_def_map& task_defs,
                                               const store::history_facts* facts, int64_t now_ms);

/// Writes `plans` in the caller's transaction. On `stale`, `fx.stale` names the
/// workflows another evaluation got to first. With `lend`, new tasks of queues where polls
/// wait are leased to them in the same writes; the borrowed polls are appended to
/// `lend->lent` whatever happens, for the caller to hand back. With `commit_if_last`, a caller
/// with nothing to write after these plans lets the transaction commit in the round trip of
/// their writes when nothing follows them here either (no child to start, no parent task to
/// end): `tx.committed()` then says it did.
caf::expected<void> apply_plans(store::transaction& tx, const std::vector<workflow_plan>& plans,
                                const std::set<int16_t>& served, int partition_count,
                                plan_effects& fx, const lending* lend = nullptr,
                                bool commit_if_last = false);

} // namespace nf::engine
