#pragma once

// The task types decide() executes itself, as functions of their resolved
// input. Runtime data that a definition could not check (an expression that
// resolved to the wrong kind of value) fails the task with a reason; it never
// fails decide().

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "flow/definitions.hpp"
#include "flow/status.hpp"
#include "flow/types.hpp"

namespace nf::flow {

class def_index;

struct task_result {
  task_status status = task_status::completed;
  boost::json::object output;
  std::string reason;
};

/// SWITCH: output {"evaluationResult": [label]}.
task_result run_switch(const workflow_task& t, const boost::json::object& input);
/// The tasks a completed SWITCH or DECISION selected (a case, the default case, or none).
const std::vector<workflow_task>& selected_case(const workflow_task& t,
                                                const boost::json::object& output);

/// JSON_TRANSFORM: output {"result": mapping applied to the rest of the input}.
task_result run_json_transform(const boost::json::object& input);

/// TERMINATE: the status and output the workflow ends with.
struct termination {
  task_result task;
  workflow_status status = workflow_status::terminated;
  std::optional<boost::json::object> workflow_output;
  std::string reason;
};
termination run_terminate(const boost::json::object& input);

/// FORK_JOIN_DYNAMIC: the forked tasks and each one's input, read from the
/// fork's resolved input; `error` when they are unusable.
struct dynamic_fork {
  std::vector<workflow_task> tasks;
  boost::json::object inputs;  ///< taskReferenceName → input object
  std::string error;
};
dynamic_fork read_dynamic_fork(const workflow_task& t, const boost::json::object& input,
                               const def_index& static_refs);

/// WAIT: when it wakes (duration / until) or which signal it waits for; with
/// neither, it waits to be completed through the API.
struct wait_plan {
  std::optional<time_ms> wake;
  std::string signal;
  std::string error;
};
wait_plan plan_wait(const boost::json::object& input, time_ms scheduled_time);

} // namespace nf::flow
