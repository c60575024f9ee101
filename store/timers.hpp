#pragma once

// "Timers": arming deadlines, and firing due ones (DESIGN §3 step 5, schema §4.5). Firing
// re-checks the target in the same transaction and acts only if the deadline still
// applies (I6); anything else just marks the timer claimed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/partition_fence.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/transaction.hpp"
#include "store/timer_kind.hpp"

namespace nf::store {

class pipeline;

struct timer_spec {
  timer_kind kind = timer_kind::delay;
  workflow_id workflow;
  int16_t shard = 0;                 ///< the workflow's logical partition
  std::optional<task_id> task;       ///< required for every kind but workflow_timeout
  std::optional<lease_token> token;  ///< required for start_to_close: the lease it guards
  int64_t after_ms = 0;              ///< fires at the server's now() + after_ms (>= 0)
};

/// Inserts timers (one statement) in the caller's transaction, if any.
caf::expected<void> arm_timers(connection& conn, const std::vector<timer_spec>& timers);

/// Queues the same insert on a pipeline (for callers batching a transaction's writes).
void add_arm_timers(pipeline& p, const std::vector<timer_spec>& timers);

struct fired_timer {
  int64_t id = 0;
  timer_kind kind = timer_kind::delay;
  workflow_id workflow;
  std::optional<task_id> task;
  int16_t shard = 0;   ///< the workflow's partition
  bool acted = false;  ///< false: the deadline no longer applied (a no-op, I6)
  std::string queue;   ///< delay that enqueued: the queue to nudge (else empty)
};

struct fire_options {
  std::vector<shard_id> shards; ///< the caller's partitions; empty = every shard
  int limit = 100;              ///< 1 … 10000
  int horizon_hours = 48;       ///< oldest "fireAt" still claimed (retention.timers_hours)
  /// The caller's partitions at the epochs it holds them at: the transaction is refused
  /// (NF002, nothing fired) once one moved on (store/partition_fence.hpp). Empty: none.
  partition_fence fence;
};

/// Claims due timers (both bounds, SKIP LOCKED) and fires them in one transaction:
///  - scheduleToStart: task still SCHEDULED, unleased and never polled → TIMED_OUT,
///    decider woken;
///  - startToClose: task IN_PROGRESS and its queue row still holds the timer's lease token →
///    TIMED_OUT, queue row deleted, decider woken;
///  - taskTimeout: an attempt of the task's ref still open → decider woken;
///  - workflowTimeout, wait: workflow (and wait task) still open → decider woken with the
///    kind as reason (flow::decide(now) decides);
///  - delay: task still SCHEDULED with no queue row → enqueued (`queue` says where).
/// Every kind is a no-op when the workflow has ended.
caf::expected<std::vector<fired_timer>> fire_due_timers(connection& conn, const fire_options& opt);

/// The same inside the caller's open transaction; `errc::stale`: roll back, call again.
caf::expected<std::vector<fired_timer>> fire_due_timers(transaction& tx, const fire_options& opt);

/// The claim's statement as written, so EXPLAIN tests compare it with the hour-window variant
/// the engine runs (store/pg/hour_window.hpp).
const statement& timer_claim_statement();

/// Milliseconds from the server's now() until the earliest pending timer of `shards`
/// (empty = every shard), 0 if one is already due; nullopt when none is pending within
/// about an hour (the window's hours, store/pg/hour_window.hpp): the timer's poll, at most
/// an hour apart, finds a later one.
caf::expected<std::optional<int64_t>>
earliest_pending_timer(connection& conn, const std::vector<shard_id>& shards,
                       int horizon_hours = 48);

} // namespace nf::store
