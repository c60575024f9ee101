#pragma once

// GET /api/metadata/taskdefs/{name}/executions: the executions of a task definition, newest
// scheduled first, a page at a time (store/task_history.hpp).

#include <string>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// `{"taskDefName","executions":[{"taskId","workflowInstanceId","referenceTaskName",
/// "iteration","retryCount","taskType","status","scheduledTime","startTime","endTime",
/// "workerId","reasonForIncompletion"}],"next":cursor|null}`; `q.namespace_id` holds the
/// namespace's id (empty = "default"). A name no task was scheduled under has no executions.
caf::expected<std::string> task_history(store::connection& conn,
                                        const msg::task_history_query& q);

} // namespace nf::engine
