#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nf::flow {

/// Workflow statuses; the labels match Conductor and the database ENUM.
enum class workflow_status : std::uint8_t {
  running, completed, failed, timed_out, terminated, paused,
};

/// Task statuses; the labels match Conductor and the database ENUM.
enum class task_status : std::uint8_t {
  scheduled, in_progress, completed, completed_with_errors, failed,
  failed_with_terminal_error, timed_out, canceled, skipped,
};

/// "RUNNING", "COMPLETED", …
std::string_view to_string(workflow_status s);
/// "SCHEDULED", "IN_PROGRESS", …
std::string_view to_string(task_status s);

/// Exact, case-sensitive match of the labels above; nullopt otherwise.
std::optional<workflow_status> parse_workflow_status(std::string_view label);
std::optional<task_status> parse_task_status(std::string_view label);

/// COMPLETED, FAILED, TIMED_OUT, TERMINATED: nothing runs any more.
bool is_terminal(workflow_status s);
/// Everything but SCHEDULED and IN_PROGRESS.
bool is_terminal(task_status s);
/// COMPLETED, COMPLETED_WITH_ERRORS, SKIPPED: successors may run.
bool is_successful(task_status s);

} // namespace nf::flow
