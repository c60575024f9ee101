#pragma once

// A running task's progress as its worker tells it (log lines, output so far): kept in the
// workflow's history as `TASK_IN_PROGRESS` events. Why the history and not a table of its
// own: the lines belong to one attempt of one task, are read with the execution (events,
// SSE, the task log route) and age out with its history partitions; the gap-free seq (I8)
// orders them with the task's other events.

#include <boost/json/value.hpp>
#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// Appends `payload` as a `TASK_IN_PROGRESS` event of task `task` (its outbox row with it);
/// its "outputData", when an object, replaces the task's output while it is IN_PROGRESS.
/// `not_found` when the workflow has no such task.
caf::expected<void> record_task_progress(connection& conn, const workflow_id& wf,
                                            const task_id& task,
                                            const boost::json::value& payload);

} // namespace nf::store
