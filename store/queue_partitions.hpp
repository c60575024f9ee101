#pragma once

// The one "TaskQueues" partition a queue's rows live in, and statements that name it.
//
// A statement prepared once and run as a generic plan cannot prune "TaskQueues" on
// "queueName" = $1 until the executor starts: its plan is an Append of every partition,
// and an ordered read of one queue is then a Sort over that Append or a Merge Append of
// each partition's index, priced on statistics. A queue analysed while empty (its usual
// state) looks like one row, and with the other partitions small the Sort won: each claim
// read the whole backlog of its queue to take the first rows of it (store.explain_worker
// checks). Named directly, the partition's dequeue index gives the order itself and the
// scan stops at the claim's LIMIT.

#include <string>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// The name of the "TaskQueues" partition that holds `queue`'s rows (hash partitions of
/// "queueName", migrations/0005_task_queues). Asked of the catalog once per queue name
/// and process: the partitioning is the schema's, the same in every database migrated.
caf::expected<std::string> queue_partition(connection& conn, const std::string& queue);

/// `st` with every "TaskQueues" of its text naming the partition `partition` instead,
/// prepared under the name `<st.name>@<partition>`.
const statement& on_queue_partition(const statement& st, const std::string& partition);

} // namespace nf::store
