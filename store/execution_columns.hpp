#pragma once

// The columns of a "WorkflowExecutions" row as the decider reads them, in one place:
// the snapshot read selects them, and the start statement returns them for the rows it
// inserts (a workflow started and decided in one transaction is not read back).

#include "store/decisions.hpp"
#include "store/pg/result.hpp"

// Written in SQL once, for both statements; execution_of() reads them in this order.
#define NF_EXECUTION_COLUMNS                                                                   \
  "\"id\", (extract(epoch FROM \"startedAt\") * 1000)::bigint AS started_at_ms, "              \
  "\"namespaceId\", \"workflowName\", \"workflowVersion\", \"status\", \"input\", "              \
  "\"variables\", \"output\", \"reasonForIncompletion\", \"failedTaskRef\", \"correlationId\", " \
  "\"idempotencyKey\", \"priority\", \"parentWorkflowId\", \"parentTaskId\", \"shard\", "        \
  "\"lastSeq\", (extract(epoch FROM \"endedAt\") * 1000)::bigint AS ended_at_ms, \"version\", " \
  "\"taskToDomain\", \"outputPayloadId\""

namespace nf::store {

/// Where a result holds NF_EXECUTION_COLUMNS, looked up by name once per result: each the
/// first of its name at or after column `first` (the start statement's result has an `id` and
/// a `shard` of its own before them).
struct execution_columns {
  explicit execution_columns(const result& r, int first = 0);
  int id, started_at_ms, ns, workflow_name, workflow_version, status, input, variables, output,
    reason, failed_task_ref, correlation_id, idempotency_key, priority, parent_workflow_id,
    parent_task_id, shard, last_seq, ended_at_ms, version, task_to_domain, output_payload_id;
};

/// The execution (without its tasks) in `r`'s row `row`.
workflow_snapshot execution_of(const result& r, const execution_columns& c, int row);

} // namespace nf::store
