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
  "\"lastSeq\", (extract(epoch FROM \"endedAt\") * 1000)::bigint AS ended_at_ms, \"version\""

namespace nf::store {

/// The execution (without its tasks) in `r`'s row `row`, whose NF_EXECUTION_COLUMNS start at
/// column `first`.
workflow_snapshot execution_of(const result& r, int row, int first = 0);

} // namespace nf::store
