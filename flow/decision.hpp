#pragma once

// What decide() asks the engine to write. Applying it is idempotent by
// construction: every row it inserts carries its identity (I1), every timer is
// keyed by (kind, identity), every event by a stable `key`.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "flow/status.hpp"
#include "flow/task_type.hpp"
#include "flow/types.hpp"

namespace nf::flow {

/// A task execution to insert.
struct scheduled_task {
  task_identity id;
  task_type type = task_type::simple;
  std::string task_def_name;
  /// The queue a worker polls (SIMPLE only); empty for tasks no worker polls:
  /// HTTP goes to the system-task runner, SUB_WORKFLOW to `decision::sub_workflows`,
  /// WAIT/JOIN/DO_WHILE and inline types are handled by decide() itself.
  std::string queue;
  boost::json::object input;
  std::int64_t start_delay_ms = 0;  ///< startDelay or retry backoff
  /// SCHEDULED for worker/system tasks; IN_PROGRESS for WAIT, JOIN, DO_WHILE;
  /// terminal (with output/reason) for inline types executed by decide().
  task_status status = task_status::scheduled;
  boost::json::object output;
  std::string reason_for_incompletion;
  /// Output cache (a SIMPLE task with cacheConfig, or whose definition has cacheTtlSeconds
  /// and cacheKey): the resolved key, and how long a COMPLETED output stays cached. The
  /// engine looks the key up and decides again with what it found (decide()'s `cached`);
  /// a task completed from the cache has neither.
  std::string cache_key;
  std::int64_t cache_ttl_seconds = 0;
  /// The id the row is inserted with, when its input holds it (`${CPEWF_TASK_ID}`);
  /// empty: the store assigns one.
  std::string task_id;
};

/// Makes the id of a new task execution (`${CPEWF_TASK_ID}`): flow does no I/O, so the
/// engine hands it the generator.
using task_id_source = std::function<std::string()>;

/// A change to an existing execution (or one scheduled in the same decision).
struct task_update {
  task_identity id;
  task_status status = task_status::completed;
  std::optional<boost::json::object> output;  ///< replaces the output when set
  std::string reason_for_incompletion;
};

enum class timer_kind : std::uint8_t {
  schedule_to_start, start_to_close, task_timeout, workflow_timeout, wait, delay,
};
std::string_view to_string(timer_kind k);

/// A timer to arm (upsert on kind + task identity; workflow timers have an
/// empty task ref). When it fires, the engine enqueues a decide; decide()
/// re-checks the deadline (I6).
struct timer {
  timer_kind kind = timer_kind::delay;
  task_identity task;
  time_ms fire_at = 0;
};

struct timer_ref {
  timer_kind kind = timer_kind::delay;
  task_identity task;
};

/// An entry for the workflow's history and outbox. `key` is stable across
/// re-evaluations of the same facts, so the store can dedupe on it.
struct event {
  std::string type;  ///< "task.scheduled", "workflow.completed", …
  std::string key;
  boost::json::object payload;
};

/// A task's change of status as an event: type "task.<status>" (lower case), keyed by the
/// type and the task's identity, with ref, iteration, attempt, type, status and the reason
/// when there is one.
event task_event(const task_identity& id, task_type type, task_status status,
                 const std::string& reason = {});

/// Start a child workflow for a SUB_WORKFLOW task; the child's end completes
/// (or fails) the parent task with the child's output. A START_WORKFLOW's start is
/// `detached`: the workflow it starts has no parent, and the task completes as soon as
/// it has started, with {"workflowId": its id} (or fails when it cannot start).
struct sub_workflow_start {
  task_identity parent;
  std::string name;
  std::optional<std::int64_t> version;  ///< absent = latest
  boost::json::object input;
  bool detached = false;
  std::string correlation_id;           ///< detached only; empty = none
  std::optional<std::int64_t> priority; ///< detached only; absent = the starter's
  std::string idempotency_key;          ///< detached only; empty = none
};

/// Start the definition's `failureWorkflow` with details of this failure.
struct failure_workflow_start {
  std::string name;
  boost::json::object input;
};

struct decision {
  std::vector<scheduled_task> schedule;
  std::vector<task_update> updates;
  std::vector<timer> arm;
  std::vector<timer_ref> cancel;
  boost::json::object variables;  ///< merged into the workflow's variables
  std::vector<event> events;
  std::optional<workflow_status> status;  ///< set when the workflow changes status
  boost::json::object output;             ///< with a terminal status
  std::string reason_for_incompletion;    ///< with FAILED / TIMED_OUT / TERMINATED
  std::string failed_task_ref;            ///< with FAILED / TIMED_OUT: the task that ended it
  std::vector<sub_workflow_start> sub_workflows;
  std::optional<failure_workflow_start> failure_workflow;
  /// decide() stopped early to bound its work (a loop of inline tasks): write
  /// this decision, then decide again without waiting for an event.
  bool decide_again = false;

  /// Nothing to write.
  bool empty() const;
};

bool operator==(const scheduled_task& a, const scheduled_task& b);
bool operator==(const task_update& a, const task_update& b);
bool operator==(const timer& a, const timer& b);
bool operator==(const timer_ref& a, const timer_ref& b);
bool operator==(const event& a, const event& b);
bool operator==(const sub_workflow_start& a, const sub_workflow_start& b);
bool operator==(const failure_workflow_start& a, const failure_workflow_start& b);
bool operator==(const decision& a, const decision& b);
inline bool operator!=(const decision& a, const decision& b) { return !(a == b); }

} // namespace nf::flow
