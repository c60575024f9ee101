#pragma once

// Where a workflow waits on the outside world, as Conductor's signal and synchronous
// execution find it: its first pending WAIT task in task order, or else the first one of a
// running sub-workflow, depth first (8 levels and 64 sub-workflows at most). A signal may end
// a timed WAIT (a duration or an until) early, but a synchronous answer does not stop at one:
// it ends by itself. And the answer both give, Conductor's SignalResponse, shaped by its
// returnStrategy.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "net/web/exchange.hpp"
#include "net/web/gateway.hpp"
#include "net/web/router.hpp"

namespace nf::net::web {

/// A pending WAIT task and the workflow that holds it (the engine's execution JSON).
struct blocking_point {
  boost::json::object workflow;
  boost::json::object task;
};

/// The text of `o[key]`; empty when it is absent or not text.
std::string text_field(const boost::json::object& o, const char* key);

/// Finds the blocking point of `wf` (read with its tasks), timed WAITs included when
/// `timed_waits`, passing over the task `skip_task_id` (one already signalled whose update
/// the decider has not applied yet): `found(point)` or `found(nullopt)`. Errors reading a
/// sub-workflow are answered on `ex`.
void find_blocking_wait(gateway* api, const exchange_ptr& ex, const boost::json::object& wf,
                        bool timed_waits, std::string skip_task_id,
                        std::function<void(std::optional<blocking_point>)> found);

enum class return_strategy { target_workflow, blocking_workflow, blocking_task,
                             blocking_task_input };

/// The returnStrategy query parameter (TARGET_WORKFLOW when absent), or nullopt with the 400
/// answered.
std::optional<return_strategy> read_return_strategy(const exchange_ptr& ex);

/// Conductor's SignalResponse: responseType, targetWorkflowId and targetWorkflowStatus, then
/// the workflow (TARGET_WORKFLOW: `target`; BLOCKING_WORKFLOW: the one holding the blocking
/// task) in Conductor's Workflow shape, or the blocking task (BLOCKING_TASK: taskId,
/// taskType, referenceTaskName, status, input, output, …; BLOCKING_TASK_INPUT: its input).
/// With no blocking point (the workflow ended, or the wait ran out) every strategy answers
/// the target workflow, and responseType says so.
boost::json::object signal_response(return_strategy strategy, const boost::json::object& target,
                                    const std::optional<blocking_point>& point);

/// waitUntilTaskRef: reference names separated by commas, blanks around them dropped.
std::vector<std::string> task_refs(const std::string* text);

/// Whether the execution (read with its tasks) has scheduled a task named in `refs`, by its
/// plain reference name or as Conductor names a loop's iteration.
bool has_task(const boost::json::object& wf, const std::vector<std::string>& refs);

/// Reads the workflow `id` until it has ended, or `reached(workflow)` holds, or it has a
/// blocking point (timed WAITs passed over) other than the task `skip_task_id`, or
/// `deadline` passes; then `answer(workflow, point)`. Between reads it waits on the workflow's history, at most a
/// second at a time while a sub-workflow runs: its WAIT writes no event in its parent's
/// history.
void wait_until_blocked(gateway* api, const exchange_ptr& ex, const std::string& id,
                        std::chrono::steady_clock::time_point deadline, int64_t max_wait_ms,
                        std::string skip_task_id,
                        std::function<bool(const boost::json::object&)> reached,
                        std::function<void(const boost::json::object&,
                                           const std::optional<blocking_point>&)> answer);

/// How a synchronous answer (an execution's, an update of state's) waits, from its query:
/// until a task of `waitUntilTaskRef` is scheduled or `waitForSeconds` (0 … 600, default 10)
/// pass; `requestId` is echoed in the answer.
struct sync_answer {
  std::vector<std::string> refs;
  std::chrono::steady_clock::time_point deadline;
  std::string request_id;
};

/// Those three parameters as a route declares them, then `more`.
std::vector<param_doc> sync_answer_params(std::vector<param_doc> more = {});

/// nullopt with the 400 answered.
std::optional<sync_answer> read_sync_answer(const exchange_ptr& ex);

/// A synchronous answer: waits as wait_until_blocked does, stopping also once a task of
/// `w.refs` is scheduled, then answers the SignalResponse with the request id echoed.
void answer_when_blocked(gateway* api, const exchange_ptr& ex, const std::string& id,
                         const sync_answer& w, int64_t max_wait_ms, return_strategy strategy);

} // namespace nf::net::web
