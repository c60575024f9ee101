#pragma once

// Operator requests as pure functions of a snapshot: retry the last failed
// tasks, rerun from a task, restart, skip a task ahead. Each returns an `edit` to write in one
// transaction; decide() on the edited snapshot then schedules what follows.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "flow/decision.hpp"
#include "flow/definitions.hpp"
#include "flow/snapshot.hpp"

namespace nf::flow {

struct edit {
  /// Executions to delete (rerun discards what followed the task; restart all).
  std::vector<task_identity> remove;
  /// Executions to change, e.g. a DO_WHILE reopened (IN_PROGRESS).
  std::vector<task_update> updates;
  /// New executions: retries as `attempt + 1`, or a rerun task with new input.
  std::vector<scheduled_task> schedule;
  std::vector<sub_workflow_start> sub_workflows;
  std::vector<timer> arm;
  /// The workflow's status afterwards (RUNNING, or PAUSED for a paused workflow's
  /// variables); output and reason are cleared.
  workflow_status status = workflow_status::running;
  std::optional<boost::json::object> input;      ///< replaces the input (restart)
  std::optional<boost::json::object> variables;  ///< replaces the variables (restart)
  std::optional<time_ms> start_time;             ///< restarts the workflow timeout
  std::vector<event> events;
  /// Executions the request ends itself, with their output (update_state), and the timers
  /// that ending makes moot.
  std::vector<task_update> finish;
  std::vector<timer_ref> cancel;
};

/// An edit, or why the request is refused (`error` non-empty).
struct edit_result {
  edit value;
  std::string error;
  explicit operator bool() const { return error.empty(); }
};

/// Conductor's "retry": for a FAILED, TIMED_OUT or TERMINATED workflow,
/// schedules `attempt + 1` (SCHEDULED; decide() activates WAIT, JOIN and
/// inline types left SCHEDULED) of every task whose latest attempt FAILED,
/// TIMED_OUT, was CANCELED or FAILED_WITH_TERMINAL_ERROR, and reopens failed
/// DO_WHILE tasks. A TIMED_OUT workflow gets a fresh timeout.
/// `ids` (here and in rerun_from_task): a retry whose copied input holds its attempt's
/// `${CPEWF_TASK_ID}` gets an id of its own (flow/own_task_id.hpp).
edit_result retry_last_failed(const workflow_def& def, const task_def_map& task_defs,
                              const snapshot& snap, time_ms now,
                              const task_id_source* ids = nullptr);

/// Conductor's "rerun from task": for an ended workflow, deletes every
/// execution of (ref, iteration) and of the tasks that follow it (later tasks
/// of its list and of every enclosing list, later iterations of its loop),
/// reopens the enclosing DO_WHILE, retries other failed or canceled tasks like
/// retry_last_failed, and — when `input` is given — schedules the task with
/// that input instead of the one its definition resolves.
edit_result rerun_from_task(const workflow_def& def, const task_def_map& task_defs,
                            const snapshot& snap, std::string_view ref,
                            std::int32_t iteration, std::optional<boost::json::object> input,
                            time_ms now, const task_id_source* ids = nullptr);

/// Conductor's "restart": for an ended workflow whose definition is
/// `restartable`, deletes every execution and starts over with the same id,
/// with `input` when given (else the original input) and the definition's
/// variables.
edit_result restart(const workflow_def& def, const snapshot& snap,
                    std::optional<boost::json::object> input, time_ms now);

/// Orkes Conductor's "update variables": for a RUNNING or PAUSED workflow, `variables`
/// top-level keys replace (or add to) the workflow's variables; its status stays.
edit_result update_variables(const snapshot& snap, const boost::json::object& variables);

/// What Orkes Conductor's "update state" asks of a task: the WAIT or HUMAN task `ref` ended
/// with `status` (COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR) and `output`, as an update
/// by reference name ends it. `task_id`, when given, must be that task's id.
struct state_task_result {
  std::string ref;  ///< "ref", or a loop's iteration as Conductor names it ("ref__2")
  task_status status = task_status::completed;
  boost::json::object output;
  std::string reason_for_incompletion;
  std::string task_id;
};

/// Orkes Conductor's "update state": for a RUNNING or PAUSED workflow, in one edit, its
/// variables set as update_variables sets them and the task of `result` (its latest attempt,
/// still waiting) ended. Refused whole, nothing changed, when either part is: a task that is
/// not a WAIT or HUMAN, or no longer waits, is reported by its worker, not by reference.
edit_result update_state(const snapshot& snap, const boost::json::object* variables,
                         const state_task_result* result);

/// Conductor's "skip task": for a RUNNING workflow, marks a task of its definition that has
/// not run yet as SKIPPED, with `input` and `output` (empty when not given), so decide()
/// moves past it when the workflow reaches it. Refused for a task that already has an
/// execution, one inside a DO_WHILE (which iteration would be ambiguous) and a fork
/// (its JOIN would wait for branches that never run).
edit_result skip_task(const workflow_def& def, const snapshot& snap, std::string_view ref,
                      std::optional<boost::json::object> input,
                      std::optional<boost::json::object> output);

} // namespace nf::flow
