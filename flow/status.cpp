#include "flow/status.hpp"

#include <array>

#include "flow/types.hpp"

namespace nf::flow {

namespace {

constexpr std::array<std::string_view, 6> workflow_labels{
  "RUNNING", "COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED", "PAUSED",
};

constexpr std::array<std::string_view, 9> task_labels{
  "SCHEDULED", "IN_PROGRESS", "COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED",
  "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "CANCELED", "SKIPPED",
};

template <class Enum, std::size_t N>
std::optional<Enum> find_label(const std::array<std::string_view, N>& labels,
                               std::string_view label) {
  for (std::size_t i = 0; i < N; ++i)
    if (labels[i] == label)
      return static_cast<Enum>(i);
  return std::nullopt;
}

}  // namespace

std::string to_string(const task_identity& id) {
  return id.ref + '/' + std::to_string(id.iteration) + '/' + std::to_string(id.attempt);
}

std::string_view to_string(workflow_status s) {
  return workflow_labels[static_cast<std::size_t>(s)];
}

std::string_view to_string(task_status s) {
  return task_labels[static_cast<std::size_t>(s)];
}

std::optional<workflow_status> parse_workflow_status(std::string_view label) {
  return find_label<workflow_status>(workflow_labels, label);
}

std::optional<task_status> parse_task_status(std::string_view label) {
  return find_label<task_status>(task_labels, label);
}

bool is_terminal(workflow_status s) {
  return s != workflow_status::running && s != workflow_status::paused;
}

bool is_terminal(task_status s) {
  return s != task_status::scheduled && s != task_status::in_progress;
}

bool is_successful(task_status s) {
  return s == task_status::completed || s == task_status::completed_with_errors
         || s == task_status::skipped;
}

} // namespace nf::flow
