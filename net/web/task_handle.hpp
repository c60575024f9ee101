#pragma once

// The taskId a Conductor client sees. nodeflow fences every report by the lease it was
// polled under (I5), but Conductor's TaskResult carries only taskId and workflowInstanceId,
// so the poll hands out `<taskId>.<workflowId>.<leaseToken>` (three UUIDs, opaque to the
// SDKs) and a report splits it again: a result for a lease taken back is then refused
// instead of completing the task's next attempt. The workflow id is in it for the routes
// that get only the taskId (a task's log).

#include <optional>
#include <string>

namespace nf::net::web {

struct task_handle {
  std::string task_id;
  std::string workflow_id;
  std::string lease_token; ///< empty when the text named no lease
};

std::string format_task_handle(const std::string& task, const std::string& workflow,
                               const std::string& lease);

/// `<task>.<workflow>.<lease>` or `<task>.<workflow>` (UUIDs); nullopt otherwise, with
/// `why` saying what is wrong.
std::optional<task_handle> parse_task_handle(const std::string& text, std::string& why);

} // namespace nf::net::web
