#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "flow/status.hpp"
#include "flow/task_type.hpp"
#include "flow/types.hpp"
#include "store/events.hpp"
#include "store/ids.hpp"
#include "store/pg/params.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"
#include "store/timer_kind.hpp"

namespace nf::store {

// The decider's side of the tables (DESIGN §3 step 2): claim pending
// evaluations, read what decide() needs, write what it decided. Everything
// runs in the caller's transaction, one per batch of workflows, in the lock
// order DecideQueues → WorkflowExecutions → TaskQueues → TaskExecutions.

/// A claimed "DecideQueues" row; it stays locked until the transaction ends.
struct decide_claim {
  workflow_id id;
  int64_t started_at_ms = 0;
  namespace_id ns;
};

/// Claims up to `limit` pending evaluations of the given shards with `FOR UPDATE SKIP
/// LOCKED`: one statement for every shard a node's decider serves, reading the shards' rows
/// in ("shard", "enqueuedAt") order until `limit` are locked, oldest first within a shard;
/// each call starts at the next of `shards`, so every shard comes first in turn.
caf::expected<std::vector<decide_claim>>
claim_decide_batch(transaction& tx, const std::vector<shard_id>& shards, int limit);

/// claim_decide_batch as one statement of the caller's pipeline, and its result read.
void add_claim(pipeline& p, const std::vector<shard_id>& shards, int limit);
std::vector<decide_claim> claims_of(const result& r);

/// One "TaskExecutions" row. JSON columns are the stored text.
struct task_row {
  task_id id;
  flow::task_identity identity;
  flow::task_type type = flow::task_type::simple;
  std::string task_def_name;
  std::optional<std::string> queue_name;
  flow::task_status status = flow::task_status::scheduled;
  std::string input;                  ///< JSON object text
  std::optional<std::string> output;  ///< JSON text; NULL = no output yet
  /// Set when the value is stored in "Payloads" (store/payloads.hpp): the reads resolve it,
  /// so `input`/`output` above still hold the whole value. An output with this set must not
  /// be cached ("TaskOutputCache").
  std::optional<std::string> input_payload_id, output_payload_id;
  std::optional<std::string> reason_for_incompletion;
  std::optional<std::string> worker_id;
  int32_t poll_count = 0;
  std::optional<task_id> retried_task_id;
  std::optional<workflow_id> sub_workflow_id;
  int64_t scheduled_at_ms = 0;
  std::optional<int64_t> started_at_ms;
  std::optional<int64_t> ended_at_ms;
  int64_t updated_at_ms = 0;
  /// Terminal and not yet reacted to ("endedAt" IS NOT NULL AND
  /// "deciderSeenAt" IS NULL), as of this read: exactly these ids go back
  /// into decision_write::seen (I3).
  bool unprocessed = false;
};

/// One "WorkflowExecutions" row with every task row of the workflow (every
/// attempt: decide() resolves `${ref.output…}` and picks latest attempts).
struct workflow_snapshot {
  workflow_id id;
  int64_t started_at_ms = 0;
  namespace_id ns;
  std::string workflow_name;
  int32_t workflow_version = 0;
  flow::workflow_status status = flow::workflow_status::running;
  std::string input;      ///< JSON object text
  std::string variables;  ///< JSON object text
  std::optional<std::string> output;
  /// Set when `output` is stored in "Payloads" (resolved by the reads, as task_row's).
  std::optional<std::string> output_payload_id;
  std::optional<std::string> reason_for_incompletion;
  std::optional<std::string> failed_task_ref;
  std::optional<std::string> correlation_id;
  std::optional<std::string> idempotency_key;
  int16_t priority = 0;
  std::optional<workflow_id> parent_workflow_id;
  std::optional<task_id> parent_task_id;
  shard_id shard;
  int64_t last_seq = 0;
  std::optional<int64_t> ended_at_ms;
  int64_t version = 0;  ///< the compare-and-set a decision_write carries (I4)
  /// taskToDomain (JSON object text: task name or "*" to domain); absent = none.
  std::optional<std::string> task_to_domain;
  std::vector<task_row> tasks;

  /// The ids of `tasks` read as unprocessed.
  std::vector<task_id> unprocessed() const;
};

/// Loads the executions and all their task rows in one round trip (the
/// lateral per-workflow form: each id prunes to its own partition). Ids with
/// no execution are left out of the result.
caf::expected<std::vector<workflow_snapshot>> load_snapshots(transaction& tx,
                                                             const std::vector<workflow_id>& ids);

/// load_snapshots as two statements of the caller's pipeline (ids not empty), and
/// the snapshots read from their two results. `after` (empty, or one per id): of a
/// workflow with an id there, only the task rows whose ids are greater are read.
void add_snapshot_reads(pipeline& p, const std::vector<workflow_id>& ids,
                        const std::vector<std::optional<task_id>>& after = {});
std::vector<workflow_snapshot> snapshots_of(const result& executions, const result& tasks);

/// The non-terminal tasks of each workflow (the frontier index, one partition
/// per workflow): what a terminate or pause must cancel.
caf::expected<std::vector<std::pair<workflow_id, task_row>>>
load_frontier(transaction& tx, const std::vector<workflow_id>& ids);

/// The statements behind load_snapshots' task read and load_frontier, so
/// EXPLAIN tests check the very SQL the decider runs.
const statement& snapshot_tasks_statement();
const statement& snapshot_tasks_after_statement();
const statement& frontier_statement();

/// A lease granted in the deciding transaction to a poll that waits (docs/engine.md §3,
/// "lease in the decision"): the task is inserted IN_PROGRESS with its queue row already
/// leased, and its TASK_STARTED event and start-to-close timer are written with it, as
/// the lessor writes them; the event takes the seq after the decision's own events, from the
/// compare-and-set's allocation (no second update of the execution row).
struct task_lease {
  task_id id;                  ///< the row's id, made here: the event and the timer name it
  std::string worker_id;
  lease_token token;
  int64_t expires_at_ms = 0;   ///< server clock
  int start_to_close_seconds = 0;
};

/// A task execution to insert (I1: its identity is inserted once).
struct task_insert {
  flow::task_identity identity;
  flow::task_type type = flow::task_type::simple;
  std::string task_def_name;
  /// The queue a worker (or the system-task runner) polls; empty = never enters "TaskQueues".
  std::string queue;
  std::optional<json_text> input;  ///< nullopt = {}
  /// SCHEDULED (worker and system tasks), IN_PROGRESS (WAIT, JOIN, DO_WHILE)
  /// or terminal for tasks decide() executed inline (then with output/reason).
  flow::task_status status = flow::task_status::scheduled;
  std::optional<json_text> output;
  std::optional<std::string> reason_for_incompletion;
  /// > 0: no queue row now; a `delay` timer (in decision_write::arm) enqueues it.
  int64_t start_delay_ms = 0;
  /// The id to insert it with (its input holds it: `${CPEWF_TASK_ID}`); none: a new one.
  /// A lease's id equals it when both are set.
  std::optional<task_id> id;
  /// Set only on a SCHEDULED task that gets a queue row (`is_queued`).
  std::optional<task_lease> lease;
  /// The output cache key ("TaskOutputCache") and TTL a SIMPLE task was scheduled with: its
  /// COMPLETED output is written to the cache when it finishes ("task.finish"). Empty = none.
  std::string cache_key;
  int64_t cache_ttl_seconds = 0;
};

/// A status change of an existing task (or one inserted by the same write),
/// applied only while the task is still non-terminal.
struct task_change {
  flow::task_identity identity;
  flow::task_status status = flow::task_status::canceled;
  std::optional<json_text> output;  ///< replaces the output when set
  std::optional<std::string> reason_for_incompletion;
  /// The status the evaluation saw the task in: the write is stale (errc::stale) if the
  /// row has another by then (a lease taken, handed back or given back meanwhile). None: any
  /// non-terminal status (a task the same write inserts, or a cancel, right from either).
  std::optional<flow::task_status> from;
};

/// A deadline to arm at `fire_at_ms`, Unix milliseconds on the clock decide() read
/// (`clock_timestamp()`, later than the arming transaction's `now()`: a delay added to
/// `now()` would fire early by the difference), or at `now()` if that is past. `task` is required
/// for every kind but workflow_timeout. A task timer is not armed twice: a
/// pending timer of the same kind for the task absorbs it. The start arms the
/// workflow_timeout, so one in the first evaluation (expected_version 0) is
/// absorbed too. start_to_close belongs to the lessor (it needs the lease token).
struct timer_arm {
  timer_kind kind = timer_kind::delay;
  std::optional<flow::task_identity> task;
  int64_t fire_at_ms = 0;
};

/// Cancels the pending timers of one kind of a task (bounded by the task's
/// "scheduledAt", docs/schema.md §4.5). workflow_timeout timers are not
/// cancelled here: their re-check (I6) makes a late firing a no-op.
struct timer_cancel {
  timer_kind kind = timer_kind::delay;
  flow::task_identity task;
};

/// An outbox event (I7): published by the relay after commit.
struct outbox_write {
  std::string type;  ///< free text matched against "WebhookSinks"."eventTypes"
  std::optional<json_text> payload;
};

/// Everything one evaluation of one workflow writes.
struct decision_write {
  workflow_id id;
  /// The snapshot's version: the write bumps it to +1 or fails `stale` (I4).
  int64_t expected_version = 0;
  /// The snapshot's namespace, shard and priority, which a workflow keeps from its start:
  /// its new task, queue, timer and outbox rows carry them.
  namespace_id ns;
  shard_id shard;
  int16_t priority = 0;
  std::optional<flow::workflow_status> status;  ///< a terminal one also sets "endedAt"
  std::optional<json_text> output;
  std::optional<std::string> reason_for_incompletion;
  std::optional<std::string> failed_task_ref;
  std::optional<json_text> variables;  ///< merged key by key into the workflow's variables
  std::vector<task_insert> inserts;
  std::vector<task_change> changes;
  std::vector<timer_arm> arm;
  std::vector<timer_cancel> cancel;
  /// Exactly the task ids this evaluation read as unprocessed (I3). Never a time.
  std::vector<task_id> seen;
  std::vector<event_write> events;
  /// Events of this transaction's completions left to this write
  /// (store::completion_writes::deferred): they take the seqs before `events`.
  std::vector<event_write> preceding;
  std::vector<outbox_write> outbox;
  /// Delete this workflow's "DecideQueues" row: only when this transaction
  /// claimed (and so locked) it; deleting an unclaimed row could drop a
  /// completion that committed after the snapshot (I2).
  bool dequeue = true;
};

/// Whether `t` of `w` gets a queue row now (and so may be leased in the decision).
bool is_queued(const decision_write& w, const task_insert& t);

struct inserted_task {
  workflow_id workflow;
  task_id id;
  flow::task_identity identity;
  flow::task_type type = flow::task_type::simple;
  std::string queue;  ///< empty when it got no queue row
};

/// What the caller nudges after commit.
struct apply_result {
  std::vector<std::string> queues;           ///< distinct queues that received rows
  std::optional<int64_t> earliest_timer_ms;  ///< earliest "fireAt" armed (server clock)
  std::vector<inserted_task> inserted;       ///< rows this write inserted (not absorbed ones)
};

/// Writes the decisions of a batch of workflows in the caller's transaction, in one round
/// trip whatever the batch size: the version compare-and-set with event seq allocation,
/// then the batched (unnest) writes, in one pipeline. If any workflow's version moved,
/// the result is `stale` naming it, and what the pipeline wrote after the compare-and-set
/// must not commit: the caller rolls back and requeues (I4). With `commit`, the pipeline ends
/// with the transaction's COMMIT (transaction::run_and_commit), for a caller with nothing
/// left to write: a result is then a committed one, and an error one that was not (or
/// `in_doubt`).
caf::expected<apply_result> apply_decisions(transaction& tx,
                                            const std::vector<decision_write>& writes,
                                            bool commit = false);

/// Asks for another evaluation: "DecideQueues" upsert with
/// `ON CONFLICT DO UPDATE SET "reason"` (never DO NOTHING: I2). Unknown ids
/// are skipped. Runs on `conn` as it is (own statement, or the caller's tx).
caf::expected<void> requeue(connection& conn, const std::vector<workflow_id>& ids,
                            const std::string& reason);

} // namespace nf::store
