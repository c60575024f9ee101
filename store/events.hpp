#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "flow/types.hpp"
#include "store/ids.hpp"
#include "store/pg/params.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

/// One entry of a workflow's history ("WorkflowEvents").
struct event_write {
  std::string type;  ///< a "workflow_event_type" label: TASK_SCHEDULED, WORKFLOW_COMPLETED, …
  std::optional<task_id> task;  ///< the task it is about, when known
  /// The task by identity: gives "refName", and the task id when `task` is
  /// absent (looked up when the event is written, so a task inserted earlier
  /// in the same transaction is found).
  std::optional<flow::task_identity> identity;
  std::optional<json_text> payload;  ///< nullopt = {}
  /// Set: the event's outbox row, in this shard, is made from the stored row as
  /// store::add_events makes its own (`{workflowId, seq, at, taskId, refName, data}`): the
  /// events a decision writes for the lessor (TASK_STARTED) and for this transaction's
  /// completions (TASK_COMPLETED, TASK_FAILED) look as if they had written them.
  /// Only insert_numbered_events reads it.
  std::optional<int16_t> outbox_shard = std::nullopt;
};

/// Events of one workflow, in the order they happened.
struct workflow_events {
  workflow_id id;
  std::vector<event_write> events;
};

/// Appends events in the caller's transaction (I8): per workflow, seqs
/// `lastSeq+1 … lastSeq+n` come from `UPDATE "WorkflowExecutions" SET
/// "lastSeq" = "lastSeq" + n … RETURNING` in the same statement, under the
/// execution's row lock held until commit; never from a clock. One statement
/// for the whole batch. Returns each workflow's new last seq, in input order;
/// a workflow without an execution row is `not_found`.
caf::expected<std::vector<int64_t>> append_events(transaction& tx,
                                                  const std::vector<workflow_events>& batch);

/// The same statement added to a pipeline (whose results the caller reads).
/// Returns false, adding nothing, when there is no event to write.
bool append_events(pipeline& p, const std::vector<workflow_events>& batch);

/// Events whose seqs the caller allocated under the workflow's row lock earlier in this
/// transaction, by adding `events.size()` to its "lastSeq": they take the last seqs up
/// to the row's "lastSeq", in order (gap-free, I8).
struct numbered_events {
  workflow_id id;
  namespace_id ns;
  std::vector<event_write> events;
};

/// Adds their insert to a pipeline; false, adding nothing, when there is no event.
bool insert_numbered_events(pipeline& p, const std::vector<numbered_events>& batch);

/// One stored event.
struct event_row {
  int64_t seq = 0;
  int64_t at_ms = 0;
  std::string type;
  std::optional<task_id> task;
  std::optional<std::string> ref_name;
  std::string payload;  ///< JSON text
};

/// The most events one read returns (docs/schema.md §4.7: bounded reads).
constexpr int max_events_per_read = 1000;

/// A workflow's events with seq > `after_seq`, in seq order, at most `limit`
/// (clamped to 1 … max_events_per_read): the history view and the SSE resume
/// (`Last-Event-ID` = seq).
caf::expected<std::vector<event_row>> read_events(connection& conn, const workflow_id& id,
                                                  int64_t after_seq, int limit);

} // namespace nf::store
