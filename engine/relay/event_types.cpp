#include "engine/relay/event_types.hpp"

#include <algorithm>

namespace nf::engine::relay {

const std::vector<std::string_view>& outbox_event_types() {
  static const std::vector<std::string_view> all{
    // "task." + a task status in lower case (flow/decide.cpp, task_event), and the alert.
    "task.scheduled", "task.in_progress", "task.completed", "task.completed_with_errors",
    "task.failed", "task.failed_with_terminal_error", "task.timed_out", "task.canceled",
    "task.skipped", "task.timeout_alert", "loop.iteration",
    // "workflow." + an ending status, an operation (flow/operations.cpp), or a listener.
    "workflow.completed", "workflow.failed", "workflow.timed_out", "workflow.terminated",
    "workflow.paused", "workflow.resumed", "workflow.retried", "workflow.rerun",
    "workflow.restarted", "workflow.timeout_alert", "workflow.status_listener",
    // "workflow_event_type" (migrations 0009, 0021), in the enum's order.
    "WORKFLOW_STARTED", "WORKFLOW_COMPLETED", "WORKFLOW_FAILED", "WORKFLOW_TIMED_OUT",
    "WORKFLOW_TERMINATED", "WORKFLOW_PAUSED", "WORKFLOW_RESUMED", "WORKFLOW_RESTARTED",
    "WORKFLOW_RETRIED", "WORKFLOW_RERUN", "TASK_SCHEDULED", "TASK_STARTED", "TASK_COMPLETED",
    "TASK_FAILED", "TASK_TIMED_OUT", "TASK_CANCELED", "TASK_SKIPPED", "TASK_RETRY_SCHEDULED",
    "TASK_IN_PROGRESS", "SIGNAL_RECEIVED", "VARIABLES_UPDATED", "TIMER_FIRED"};
  return all;
}

bool is_outbox_event_type(std::string_view type) {
  const auto& all = outbox_event_types();
  return std::find(all.begin(), all.end(), type) != all.end();
}

} // namespace nf::engine::relay
