#pragma once

// The workflow language as plain value types. Field comments give the JSON name.
// Parsing lives in parse.hpp, writing in serialise.hpp, checking in validate.hpp.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "flow/task_type.hpp"

namespace nf::flow {

/// `retryLogic`
enum class retry_logic : std::uint8_t { fixed, linear_backoff, exponential_backoff };
/// `timeoutPolicy` (tasks accept all three, workflows TIME_OUT_WF and ALERT_ONLY)
enum class timeout_policy : std::uint8_t { retry, time_out_wf, alert_only };

std::string_view to_string(retry_logic r);
std::optional<retry_logic> parse_retry_logic(std::string_view label);
std::string_view to_string(timeout_policy p);
std::optional<timeout_policy> parse_timeout_policy(std::string_view label);

/// A registered task definition. Counts and durations are non-negative and at
/// most INT32_MAX (parse rejects the rest); 0 means "none" for every timeout.
/// Defaults follow Conductor except `responseTimeoutSeconds` (0 = no heartbeat
/// deadline, because Conductor's 3600 default contradicts short timeouts).
struct task_def {
  std::string name;                              ///< name (required)
  std::string description;                       ///< description
  std::string owner_email;                       ///< ownerEmail
  std::string queue_name;                        ///< queueName; empty = the task name
  std::int64_t retry_count = 3;                  ///< retryCount
  retry_logic logic = retry_logic::fixed;        ///< retryLogic
  std::int64_t retry_delay_seconds = 60;         ///< retryDelaySeconds
  std::int64_t max_retry_delay_seconds = 0;      ///< maxRetryDelaySeconds (0 = no cap)
  std::int64_t backoff_scale_factor = 1;         ///< backoffScaleFactor (LINEAR_BACKOFF)
  std::int64_t backoff_jitter_ms = 0;            ///< backoffJitterMs
  std::int64_t timeout_seconds = 0;              ///< timeoutSeconds (start to close)
  timeout_policy policy = timeout_policy::time_out_wf;  ///< timeoutPolicy
  std::int64_t response_timeout_seconds = 0;     ///< responseTimeoutSeconds (heartbeat)
  std::int64_t poll_timeout_seconds = 0;         ///< pollTimeoutSeconds (schedule to start)
  std::int64_t total_timeout_seconds = 0;        ///< totalTimeoutSeconds (all attempts)
  std::int64_t rate_limit_per_frequency = 0;     ///< rateLimitPerFrequency (0 = none)
  std::int64_t rate_limit_frequency_in_seconds = 1;  ///< rateLimitFrequencyInSeconds
  std::int64_t concurrent_exec_limit = 0;        ///< concurrentExecLimit (0 = none)
  std::int64_t cache_ttl_seconds = 0;            ///< cacheTtlSeconds (0 = no cache)
  std::string cache_key;                         ///< cacheKey: a template like inputParameters
  std::vector<std::string> input_keys;           ///< inputKeys
  std::vector<std::string> output_keys;          ///< outputKeys
  std::vector<std::string> secret_output_fields; ///< secretOutputFields
  boost::json::object input_template;            ///< inputTemplate: defaults under the input
  /// Conductor's bookkeeping fields (ownerApp, createTime, updateTime, createdBy,
  /// updatedBy, accessPolicy, tags, baseType, inputSchema, outputSchema,
  /// enforceSchema), kept as registered and returned: they change nothing here.
  boost::json::object metadata;

  /// What a SIMPLE task whose definition is not registered runs with:
  /// no retries, no timeouts.
  static task_def unregistered(std::string name);
};

bool operator==(const task_def& a, const task_def& b);
inline bool operator!=(const task_def& a, const task_def& b) { return !(a == b); }

/// Task definitions by name, as decide() consults them; absent means defaults.
using task_def_map = std::map<std::string, task_def, std::less<>>;

struct workflow_task;

/// One entry of a SWITCH's `decisionCases`, in the order written.
struct switch_case {
  std::string value;
  std::vector<workflow_task> tasks;
};

/// A task inside a workflow definition (Conductor's WorkflowTask).
struct workflow_task {
  std::string name;                     ///< name (the task definition for SIMPLE)
  std::string task_reference_name;      ///< taskReferenceName, unique in the workflow
  std::string description;              ///< description
  task_type type = task_type::simple;   ///< type (default SIMPLE)
  bool optional = false;                ///< optional: a failure does not fail the workflow
  std::int64_t start_delay = 0;         ///< startDelay, seconds before it may start
  boost::json::object input_parameters; ///< inputParameters, with ${…} expressions
  /// asyncComplete: on a SIMPLE task the worker completes it whenever it reports, which
  /// is what true asks for; other types refuse true (see conductor_fields.hpp).
  bool async_complete = false;
  /// permissive: a failure lets the rest run; the JOIN (or the workflow's end) then fails.
  bool permissive = false;
  std::optional<std::int64_t> retry_count;   ///< retryCount: overrides the definition's
  /// taskDefinition: used in place of the registered definition of `name`.
  std::optional<task_def> task_definition;
  /// cacheConfig {key, ttlInSecond}: overrides the definition's cacheKey/cacheTtlSeconds.
  std::string cache_key;
  std::int64_t cache_ttl_seconds = 0;
  std::optional<bool> rate_limited;     ///< rateLimited (the definition's limit applies)
  std::string join_mode;                ///< joinMode: SYNC | ASYNC (JOIN only; both hold here)

  // SWITCH
  std::string evaluator_type;           ///< evaluatorType: value-param | javascript
  std::string expression;               ///< expression: a parameter name or a safe expression
  std::vector<switch_case> decision_cases;   ///< decisionCases
  std::vector<workflow_task> default_case;   ///< defaultCase

  // FORK_JOIN / JOIN
  std::vector<std::vector<workflow_task>> fork_tasks;  ///< forkTasks (branches)
  std::vector<std::string> join_on;                    ///< joinOn

  // FORK_JOIN_DYNAMIC
  std::string dynamic_fork_tasks_param;            ///< dynamicForkTasksParam
  std::string dynamic_fork_tasks_input_param_name; ///< dynamicForkTasksInputParamName

  // DO_WHILE
  std::string loop_condition;           ///< loopCondition, a safe expression
  std::vector<workflow_task> loop_over; ///< loopOver
  /// items: a list, or an expression giving one; the body runs once per item
  /// (null = absent, the loop runs on its loopCondition alone)
  boost::json::value items;

  // SUB_WORKFLOW: subWorkflowParam { name, version }
  std::string sub_workflow_name;
  std::optional<std::int64_t> sub_workflow_version;  ///< absent = latest

  // DECISION (SWITCH's deprecated form): one of the two picks the case
  std::string case_value_param;         ///< caseValueParam: the input parameter holding it
  std::string case_expression;          ///< caseExpression: a safe expression over $ (the input)

  // EXCLUSIVE_JOIN (with joinOn)
  std::vector<std::string> default_exclusive_join_task;  ///< defaultExclusiveJoinTask

  // DYNAMIC
  std::string dynamic_task_name_param;  ///< dynamicTaskNameParam: the input naming the task

  // EVENT
  std::string sink;                     ///< sink: "conductor" or "conductor:<queue>"
};

bool operator==(const workflow_task& a, const workflow_task& b);
inline bool operator!=(const workflow_task& a, const workflow_task& b) { return !(a == b); }
bool operator==(const switch_case& a, const switch_case& b);

/// A workflow definition (Conductor's WorkflowDef, schemaVersion 2).
struct workflow_def {
  std::string name;                          ///< name (required)
  std::int64_t version = 1;                  ///< version
  std::string description;                   ///< description
  std::vector<workflow_task> tasks;          ///< tasks (required, non-empty)
  std::vector<std::string> input_parameters; ///< inputParameters: documented input names
  boost::json::object output_parameters;     ///< outputParameters; empty = last task's output
  boost::json::object variables;             ///< variables: initial values
  std::int64_t timeout_seconds = 0;          ///< timeoutSeconds (0 = none)
  timeout_policy policy = timeout_policy::time_out_wf;  ///< timeoutPolicy
  std::string failure_workflow;              ///< failureWorkflow: started when this one fails
  bool restartable = true;                   ///< restartable
  std::string owner_email;                   ///< ownerEmail
  std::int64_t schema_version = 2;           ///< schemaVersion (only 2 is accepted)
  boost::json::object input_template;        ///< inputTemplate: defaults under the input
  /// workflowStatusListenerEnabled: the end of each execution is published as a
  /// "workflow.status_listener" event through the outbox.
  bool status_listener_enabled = false;
  /// Conductor's bookkeeping fields (ownerApp, createTime, updateTime, createdBy,
  /// updatedBy, accessPolicy, tags, metadata, inputSchema, outputSchema, enforceSchema),
  /// kept as registered and returned: they change nothing here.
  boost::json::object metadata;
};

bool operator==(const workflow_def& a, const workflow_def& b);
inline bool operator!=(const workflow_def& a, const workflow_def& b) { return !(a == b); }

/// The queue a worker polls for a SIMPLE task: the definition's queueName, else
/// the task name.
std::string queue_of(const workflow_task& t, const task_def* def);

} // namespace nf::flow
