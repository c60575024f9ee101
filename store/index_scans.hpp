#pragma once

// The engine's own connections (the decider's, the lessor's, the timer's, the relay's) run
// only statements written as index probes and index range scans (docs/schema.md §4), and
// their plans are generic plans, made once per connection and kept until an ANALYZE of a
// table they read invalidates them. A plan made while a partition was young (every
// partition of a new database, a new month's "WorkflowExecutions" partition, a new hour's
// "Timers") scans it sequentially, which is cheapest at that size, and keeps doing so as it
// grows until the next ANALYZE, reading every row of the partition per call. With
// sequential scans priced out, the planner picks the index such a statement was written
// for from the start; a statement with no index to use still scans (enable_seqscan only
// adds a penalty). Administrative work (migrations, partition maintenance, operator
// reads) keeps the planner's defaults.

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// Sets this connection's session to price sequential scans out (SET enable_seqscan = off).
caf::expected<void> prefer_index_scans(connection& conn);

/// prefer_index_scans, and sorts priced out too (SET enable_sort = off): for the lessor's
/// session, whose claim takes the head of a queue in its dequeue index's order. A queue
/// partition that once held a backlog keeps that analyse's column statistics when a later
/// one finds it empty, and the planner then takes it for a one-row table: the ordered read
/// of the dequeue index tied with a bitmap scan of the ("queueName", "taskId") index under a
/// Sort, which won and read the whole backlog at every claim until the next analyse (5,000
/// rows for 64, store.explain_worker). With sorts priced out the ordered read wins; a
/// statement that needs a sort still sorts (enable_sort only adds a penalty).
caf::expected<void> prefer_index_order(connection& conn);

} // namespace nf::store
