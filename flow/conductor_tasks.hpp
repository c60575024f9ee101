#pragma once

// NOOP, DECISION, EVENT, START_WORKFLOW and DYNAMIC as functions of their resolved input,
// as Conductor runs them. HUMAN and EXCLUSIVE_JOIN read other executions, so decide.cpp
// runs them; their field checks are in validate.cpp.

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "flow/decision.hpp"
#include "flow/definitions.hpp"
#include "flow/problem.hpp"
#include "flow/system_tasks.hpp"

namespace nf::flow {

/// DECISION: output {"caseOutput": [label]}, the label being the value of the input
/// parameter `caseValueParam`, or of `caseExpression` evaluated with `$` = the input.
task_result run_decision(const workflow_task& t, const boost::json::object& input);

/// Why nodeflow cannot deliver to an EVENT `sink`, or empty. Only Conductor's own queue
/// ("conductor", "conductor:<queue>") is delivered: to nodeflow's outbox.
std::string sink_refusal(std::string_view sink);

/// What an EVENT publishes, and where.
struct event_context {
  std::string_view workflow_id;
  std::string_view workflow_type;
  std::int64_t workflow_version = 0;
  std::string_view correlation_id;
  std::string_view task_ref;
};

/// EVENT: the message is the input with workflowInstanceId, workflowType, workflowVersion
/// and correlationId; the output is the message plus `event_produced`, the queue Conductor
/// names ("conductor:<workflowType>:<queue or taskReferenceName>"). `sink` is resolved.
task_result run_event(std::string_view sink, const boost::json::object& input,
                      const event_context& ctx);

/// START_WORKFLOW: the request in input `startWorkflow`.
struct workflow_start_plan {
  std::string name;
  std::optional<std::int64_t> version;  ///< absent = latest
  boost::json::object input;
  std::string correlation_id;           ///< empty = the starting workflow's
  std::optional<std::int64_t> priority;
  std::string idempotency_key;
  std::string error;                    ///< the request is unusable: why
};
workflow_start_plan plan_start_workflow(const boost::json::object& input);
/// The start a START_WORKFLOW task `id` asks for; without its own correlationId the
/// started workflow takes the starter's, as in Conductor.
sub_workflow_start detached_start(const task_identity& id, workflow_start_plan plan,
                                  std::string_view starter_correlation_id);
/// The same check on a definition's literal `startWorkflow` (validation): problems at `path`.
void check_start_workflow(const boost::json::value& request, const std::string& path,
                          problems& out);

/// DYNAMIC: the task name held by input `dynamicTaskNameParam`, or empty with `error`.
std::string dynamic_task_name(const workflow_task& t, const boost::json::object& input,
                              std::string& error);

} // namespace nf::flow
