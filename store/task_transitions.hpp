#pragma once

// The write engine shared by the worker path (completion, lease-expiry sweep, timers).
// A caller reads the rows it means to change WITHOUT locks, builds a `transition_plan`,
// and `apply_transition` writes it in the global lock order
//   "DecideQueues" → "WorkflowExecutions" (seq allocation) → "TaskQueues" → "TaskExecutions"
// re-checking under the locks that the plan still holds (the queue row still has the
// token read, the task is still in the status read). A plan that no longer holds is
// `errc::stale`: the caller rolls back and re-plans (`perform_replanning`), so a race
// never writes a partial change and never leaves a hole in a workflow's event seqs (I8).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "flow/status.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"
#include "proto/errors.hpp"
#include "store/pg/params.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

class pipeline;

/// Wakes a workflow's decider: the "DecideQueues" upsert (I2).
struct decider_wake {
  workflow_id workflow;
  namespace_id ns;
  int16_t shard = 0;
  std::string reason;
};

/// One "WorkflowEvents" row (plus its "OutboxEvents" row); the seq is allocated on apply.
struct event_draft {
  workflow_id workflow;
  namespace_id ns;
  int16_t shard = 0;
  const char* type = ""; ///< a workflow_event_type value
  std::optional<task_id> task;
  std::optional<std::string> ref;
  json_text payload;
};

/// Deletes a task's queue row only while it holds `token` (nullopt: only while unleased);
/// with `expired_only` only while its lease has expired too (the sweeper's re-check).
struct queue_removal {
  std::string queue;
  task_id task;
  std::optional<lease_token> token;
  bool expired_only = false;
};

/// Enqueues a task that waited in a `delay` timer, only while it is still SCHEDULED.
struct queue_insert {
  workflow_id workflow;
  task_id task;
  int16_t shard = 0;
};

/// Moves a task from `from` to a terminal `to` (`"endedAt" = now()`) and cancels its
/// pending timers.
struct task_finish {
  workflow_id workflow;
  task_id task;
  flow::task_status from = flow::task_status::in_progress;
  flow::task_status to = flow::task_status::completed;
  std::optional<json_text> output;
  std::optional<std::string> reason;
  std::string scheduled_at; ///< the task's "scheduledAt": bounds the timer cancel's partitions
  /// No timer of the task fires later than this many seconds after now(): bounds the
  /// cancel's partitions from above (unknown: every partition ahead is probed).
  std::optional<int64_t> timers_within_s;
  /// The caller's transaction evaluates the task's workflow after this and so reacts to
  /// the end (I3): "deciderSeenAt" is set by this update instead of a second one. The
  /// caller clears it again if that evaluation does not happen (unsee_tasks).
  bool seen = false;
};

struct transition_plan {
  std::vector<decider_wake> wakes;
  std::vector<queue_removal> removals;
  std::vector<queue_insert> inserts;
  std::vector<task_finish> finishes;
  std::vector<event_draft> events;
  /// Execution rows locked (FOR NO KEY UPDATE) where their events would be written, for
  /// workflows whose events the caller writes later in the transaction (the decision's
  /// compare-and-set numbers them): the row is still locked before the queue and task rows.
  std::vector<workflow_id> locked;

  bool empty() const {
    return wakes.empty() && removals.empty() && inserts.empty() && finishes.empty()
           && events.empty() && locked.empty();
  }
};

/// Applies `plan` in the caller's open transaction, in lock order; `errc::stale` when a
/// re-check under the locks fails (the caller must roll back).
caf::expected<void> apply_transition(connection& conn, const transition_plan& plan);

/// apply_transition in two parts, for a caller that sends the writes in a pipeline with
/// statements of its own after them: add_transition adds them (in lock order, nothing when
/// the plan is empty), and once the pipeline ran, transition_applied checks their results
/// (`errc::stale` as above).
struct transition_slots {
  /// Pipeline indexes of the plan's statements (each meaningful only if it has any).
  size_t events_at = 0, locked_at = 0, removals_at = 0, inserts_at = 0, finishes_at = 0;
  bool appended = false;
};
transition_slots add_transition(pipeline& p, const transition_plan& plan);
caf::expected<void> transition_applied(const transition_plan& plan, const transition_slots& at,
                                       const std::vector<result>& rs);
/// Runs `p`, which holds the plan's statements (added at `at`) and nothing after them, and
/// checks them; nothing to do when `p` is empty.
caf::expected<void> run_transition(pipeline& p, const transition_plan& plan,
                                   const transition_slots& at);

/// Queues, as one statement, the seq allocation of `events` ("lastSeq" bumped under each
/// execution row's lock, ascending id, §4.1, I8), their insert and their outbox rows (I7).
/// Returns false, adding nothing, when there are none; read its result with events_written().
bool add_events(pipeline& p, const std::vector<event_draft>& events);

/// `errc::not_found` naming the first workflow of `events` that had no execution row, given
/// the result of the statement add_events() queued.
caf::expected<void> events_written(const std::vector<event_draft>& events, const result& r);

/// `perform`, re-planned from scratch while the plan turns out `stale` under the locks.
template <class F>
auto perform_replanning(connection& conn, F&& fn, int max_passes = 8)
  -> decltype(fn(std::declval<transaction&>())) {
  for (int pass = 1;; ++pass) {
    auto r = perform(conn, fn);
    if (r || code_of(r.error()) != errc::stale || pass >= max_passes)
      return r;
  }
}

/// `{"a","b"}` for a `$n::uuid[]` parameter.
template <class Range, class Get>
array_literal ids_array(const Range& xs, Get get) {
  std::vector<std::string> out;
  out.reserve(xs.size());
  for (const auto& x : xs)
    out.push_back(get(x).str());
  return text_array(out);
}

/// A completion's timer cancel as written ($1 task ids, $2 their schedule times, $3 the
/// latest deadline in seconds after now()), run when the tasks' deadlines are not near (else
/// an hour-window variant, store/pg/hour_window.hpp): EXPLAIN tests compare the two.
const statement& timer_cancel_statement();

/// `{1,2}` for a `$n::smallint[]` parameter (`{}` when `shards` is empty).
array_literal shard_array(const std::vector<shard_id>& shards);

/// A `$n::smallint[]` shard filter; nullopt (SQL NULL = every shard) when `shards` is empty.
std::optional<array_literal> shard_filter(const std::vector<shard_id>& shards);

/// Milliseconds since the epoch of a timestamptz column, computed by the server.
#define NF_EPOCH_MS(col) "(extract(epoch FROM " col ") * 1000)::bigint"

/// The latest any timer of a task of task definition row `def` fires, in seconds after its
/// lease (task_finish::timers_within_s): its startToClose timeoutSeconds after the lease, its
/// scheduleToStart and taskTimeout (poll and total timeouts) after a schedule before it.
#define NF_TIMERS_WITHIN(def)                                                                   \
  "(GREATEST(" def ".\"timeoutSeconds\", COALESCE(" def ".\"pollTimeoutSeconds\", 0),"        \
  " COALESCE(" def ".\"totalTimeoutSeconds\", 0)) + 1)"

} // namespace nf::store
