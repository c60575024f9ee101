#pragma once

// decide(): given a workflow definition, the state of one execution and the
// time, what happens next. Pure and deterministic: no I/O, no clock, no
// randomness (jitter derives from the task identity). Deciding twice on the
// same snapshot gives equal decisions; deciding on the snapshot with a decision
// applied never schedules an identity that already exists (I1).

#include <map>
#include <string>
#include <utility>

#include <boost/json/object.hpp>

#include "flow/decision.hpp"
#include "flow/definitions.hpp"
#include "flow/snapshot.hpp"

namespace nf::flow {

/// What happens next. `task_defs` holds registered task definitions by name; a
/// SIMPLE task without one runs with task_def::unregistered (no retries, no
/// timeouts). A PAUSED or terminal workflow yields an empty decision.
///
/// Semantics in brief (Conductor's where the issue is silent):
/// - tasks of a list run in order; a task starts when its predecessor ended
///   successfully (COMPLETED, COMPLETED_WITH_ERRORS or SKIPPED);
/// - SWITCH, FORK_JOIN, FORK_JOIN_DYNAMIC, SET_VARIABLE, TERMINATE and
///   JSON_TRANSFORM execute inside decide() and are inserted already ended;
///   WAIT, JOIN and DO_WHILE are inserted IN_PROGRESS and ended by a later
///   decide(); SIMPLE (queue), HTTP (system-task runner) and SUB_WORKFLOW
///   (child workflow) are inserted SCHEDULED and ended by the engine;
/// - a FAILED or TIMED_OUT (policy RETRY) SIMPLE/HTTP/SUB_WORKFLOW task with
///   attempts left is retried as `attempt + 1` after retry_delay_ms();
///   FAILED_WITH_TERMINAL_ERROR and CANCELED are never retried;
/// - when a task has no attempts left: optional → COMPLETED_WITH_ERRORS and
///   the workflow goes on; policy TIME_OUT_WF → workflow TIMED_OUT; otherwise
///   the workflow FAILS, every running task is CANCELED and `failureWorkflow`
///   is started;
/// - deadlines (retry.hpp next_deadline) are enforced whenever decide() runs;
///   ALERT_ONLY emits "task.timeout_alert" instead of ending the task;
/// - the workflow COMPLETES when its task list is done and nothing runs; its
///   output is `outputParameters` resolved, or the last task's output.
///
/// `cached`: live entries of the task output cache the engine found for keys an earlier
/// decide() of the same snapshot resolved (scheduled_task::cache_key), by task definition name
/// and key. A SIMPLE task scheduled with a key found there is inserted COMPLETED with that
/// output instead (no queue, no timers; its event says `"cached": true`), and the workflow
/// goes on in the same decision. decide() itself reads nothing: the engine looks the keys up.
using cached_outputs = std::map<std::pair<std::string, std::string>, boost::json::object>;
/// `ids` makes the id of a task whose input names `${CPEWF_TASK_ID}` (and of a retry whose
/// copied input holds its attempt's); without it the expression is null.
decision decide(const workflow_def& def, const task_def_map& task_defs, const snapshot& snap,
                time_ms now, const cached_outputs* cached = nullptr,
                const task_id_source* ids = nullptr);

/// The most inline tasks and loop iterations one decide() executes before it
/// stops with `decide_again` (bounds the cost of a loop of inline tasks).
constexpr int max_inline_steps_per_decide = 1000;

} // namespace nf::flow
