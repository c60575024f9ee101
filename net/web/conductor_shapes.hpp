#pragma once

// nodeflow's JSON (engine/operations.hpp) in Conductor's REST shapes: the Workflow with its
// Tasks, the WorkflowSummary of a search. Pure functions of the engine's answers, so the
// shapes are written once for every route that answers them.

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>

namespace nf::net::web {

/// Conductor's Workflow from get_execution's JSON (read with its tasks): workflowId,
/// workflowName, workflowVersion, correlationId, status, input, output, variables,
/// reasonForIncompletion, failedReferenceTaskNames, createTime, startTime, endTime (0 while
/// it runs), updateTime (its latest start, end or task update), priority, idempotencyKey,
/// parentWorkflowId, parentWorkflowTaskId, taskToDomain ({}), and `tasks` (Conductor's Task
/// shape, task_shape) when `include_tasks`.
boost::json::object workflow_shape(const boost::json::object& execution, bool include_tasks);

/// A task's referenceTaskName as Conductor shows it: inside a DO_WHILE (iteration > 0) the
/// reference name with "__<iteration>" appended ("charge__2"), else as written.
std::string conductor_ref(const std::string& ref, int64_t iteration);

/// Conductor's Task: taskId, taskType (the task definition's name for SIMPLE, as
/// Conductor's workers poll it), taskDefName, referenceTaskName (conductor_ref), status, inputData,
/// outputData, retryCount (the attempt, from 0), retried (a later attempt exists), seq (its
/// place in the workflow's task list, from 1), iteration, scheduledTime, startTime, endTime
/// (0 when not yet), updateTime, workflowInstanceId, workflowType, workflowPriority,
/// correlationId, reasonForIncompletion, workerId, pollCount, queueName, retriedTaskId,
/// subWorkflowId.
boost::json::object task_shape(const boost::json::object& task,
                               const boost::json::object& execution, int64_t seq, bool retried);

/// Conductor's WorkflowSummary from one search item: workflowType, version, workflowId,
/// correlationId, status, startTime/updateTime/endTime as ISO-8601 UTC text (as Conductor
/// writes them; endTime null while it runs), executionTime (ms, 0 while it runs),
/// reasonForIncompletion.
boost::json::object summary_shape(const boost::json::object& item);

/// Milliseconds since the epoch as Conductor's summary times: "2024-05-01T12:00:00.123Z".
std::string iso_utc(int64_t ms);

/// The task of an execution's JSON (read with its tasks) with this taskId, if any.
const boost::json::object* find_task(const boost::json::object& execution,
                                     const std::string& task_id);

} // namespace nf::net::web
