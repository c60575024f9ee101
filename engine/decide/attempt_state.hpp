#pragma once

// What the steps of the decider's transaction share (internal to engine/decide/): batch.cpp
// runs the attempt; starts.cpp, commands.cpp and claim.cpp each add to its state;
// known_tasks.cpp keeps what a committed attempt leaves to know.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/decide/batch.hpp"
#include "engine/decide/plans.hpp"
#include "proto/errors.hpp"
#include "store/decide_support.hpp"
#include "store/decisions.hpp"

namespace nf::engine {

/// What an attempt may do, set once per pass (decider_core::run): the first pass takes the
/// shortcuts below, a retry none of them, so whatever made the first fail cannot fail it again.
struct attempt_rules {
  /// Lease the decisions' new tasks to waiting polls in their own commit (apply_plans). A
  /// retry does not: the lending cannot be what failed it, and the polls are back with their
  /// lessors.
  bool lend = true;
  /// Take the completions' facts from the lease memory. A retry reads them, so a remembered
  /// lease that no longer holds cannot fail it again.
  bool recall = true;
  /// Leave the completions' events of workflows this attempt decides to their decisions
  /// (store::completion_writes::deferred). Not with commands either: they decide before the
  /// claim, and a completion's event must not follow theirs.
  bool defer = true;

  static attempt_rules for_pass(int pass, const batch_input& in) {
    bool first = pass == 1;
    return {first, first, first && in.commands.empty()};
  }
};

/// Statements an attempt added to a pipeline and has not sent yet: the completions' writes,
/// and the starts' statement ahead of them when no read or command needs a round trip
/// first. They go with the claim and its reads, which must see them, in one round trip
/// (decider_core::decide_claimed takes them); without a claim, flush() sends them on their
/// own. Nothing here is owned: the pipeline, the start plan and the completion writes are
/// locals of decider_core::attempt(), whose frame outlives every use of these pointers.
struct deferred_sends {
  store::pipeline* pipeline = nullptr;  ///< null: nothing waits to be sent
  /// The completions' writes in `pipeline` (null: none), checked once it ran.
  const store::completion_writes* writes = nullptr;
  /// The starts' statement at the head of `pipeline` (null: none); its result is read from
  /// the pipeline's (decider_core::note_starts).
  store::start_plan* starts = nullptr;

  /// Hands everything over to the caller's round trip, leaving nothing here.
  deferred_sends take() { return std::exchange(*this, {}); }

  /// Sends the completions' writes on their own, when nothing is to go with them, leaving
  /// nothing here.
  caf::expected<void> flush() {
    if (pipeline == nullptr)
      return {};
    if (starts != nullptr)  // never: only a batch that reaches the claim defers them
      return nf::make_error(nf::errc::internal,
                               "the starts' statement was left for a claim that was not made");
    auto sent = take();
    return store::run_transition(*sent.pipeline, sent.writes->plan, sent.writes->at);
  }
};

/// What the claim reads ahead in its round trip (store::claim_and_read), built by
/// decider_core::attempt() from what the batch's own starts and completions enqueued: the
/// claim makes room for each of them, so each is decided in its own commit (fast path a).
struct decider_core::claim_ahead {
  explicit claim_ahead(const std::set<std::string>& excluded) : excluded(excluded) {}

  /// Stale this batch (I4): requeued, and left undecided if claimed (decided next time).
  const std::set<std::string>& excluded;
  /// Rows claimed at most: decider.batch_size, plus the batch's own starts and completions.
  int limit = 0;
  /// Workflows whose snapshots are read with the claim (the completed ones'; the starts'
  /// executions come back from their own statement).
  std::vector<workflow_id> expected;
  /// Per expected workflow, the last task row known_ holds of it: only the rows past it are
  /// read.
  std::vector<std::optional<task_id>> after;
  /// Of the expected workflows, those whose history facts are read too (not in
  /// without_history_).
  std::vector<workflow_id> histories;
  /// Namespaces whose definition stamps are read: the last batch's and the starts'.
  std::vector<namespace_id> stamp_namespaces;
};

/// What one attempt of the transaction produced (discarded when it rolls back).
struct decider_core::attempt_state {
  attempt_rules rules;
  std::vector<caf::expected<store::start_result>> starts;
  std::vector<caf::expected<std::string>> completions;
  std::vector<caf::expected<std::string>> commands;
  plan_effects fx;
  bool claim_full = false;  ///< the claim hit its limit: more rows may be waiting
  /// Workflows decide_claimed writes an evaluation of (the attempt fails as a whole if the
  /// writes do).
  std::set<std::string> evaluated;
  /// Workflows this transaction started in a served shard, with no "DecideQueues" row
  /// (store::start_workflows): decide_claimed evaluates them without a claim, from the
  /// executions the start statement returned (nothing else can have touched them yet).
  std::map<std::string, store::workflow_snapshot> rowless_starts;
  /// Workflows of served shards whose completions this transaction applied without a
  /// "DecideQueues" row (store::complete_tasks): decide_claimed evaluates them, claimed or
  /// not (a row another wake left may be claimed with them).
  std::set<std::string> rowless_completions;
  bool decide_again = false;
  /// What this attempt's decisions leave known_ to hold of their workflows, once it commits
  /// (nullopt: nothing).
  std::map<std::string, std::optional<known_tasks>> learned;
  std::vector<lent_poll> lent;  ///< polls lent to this attempt (apply_plans)
  size_t recalled = 0;  ///< completions whose facts the lease memory gave (rules.recall)
  /// The completions' events left to their workflows' decisions (rules.defer), each taken
  /// from here by its workflow's.
  std::map<std::string, std::vector<store::event_write>> deferred;
  deferred_sends unsent;  ///< what waits to go with the claim

  /// The completions applied whose ends were stamped seen for an evaluation this attempt
  /// does not make (I3): a workflow the claim did not hold, or a stale one. Their ends must
  /// wait unseen for the evaluation their "DecideQueues" row brings.
  std::vector<store::task_result> unevaluated(const batch_input& in) const {
    std::vector<store::task_result> out;
    for (size_t i = 0; i < completions.size(); ++i)
      if (completions[i] && evaluated.count(in.completions[i].workflow.str()) == 0)
        out.push_back(in.completions[i]);
    return out;
  }
};

} // namespace nf::engine
