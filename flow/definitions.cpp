#include "flow/definitions.hpp"

#include <array>
#include <tuple>

namespace nf::flow {

namespace {

constexpr std::array<std::string_view, 3> retry_labels{
  "FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF",
};
constexpr std::array<std::string_view, 3> timeout_labels{
  "RETRY", "TIME_OUT_WF", "ALERT_ONLY",
};

template <class Enum>
std::optional<Enum> find_label(const std::array<std::string_view, 3>& labels,
                               std::string_view label) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == label)
      return static_cast<Enum>(i);
  return std::nullopt;
}

}  // namespace

std::string_view to_string(retry_logic r) { return retry_labels[static_cast<std::size_t>(r)]; }

std::optional<retry_logic> parse_retry_logic(std::string_view label) {
  return find_label<retry_logic>(retry_labels, label);
}

std::string_view to_string(timeout_policy p) {
  return timeout_labels[static_cast<std::size_t>(p)];
}

std::optional<timeout_policy> parse_timeout_policy(std::string_view label) {
  return find_label<timeout_policy>(timeout_labels, label);
}

task_def task_def::unregistered(std::string name) {
  task_def d;
  d.name = std::move(name);
  d.retry_count = 0;
  d.retry_delay_seconds = 0;
  return d;
}

bool operator==(const task_def& a, const task_def& b) {
  auto tie = [](const task_def& d) {
    return std::tie(d.name, d.description, d.owner_email, d.queue_name, d.retry_count, d.logic,
                    d.retry_delay_seconds, d.max_retry_delay_seconds, d.backoff_scale_factor,
                    d.backoff_jitter_ms, d.timeout_seconds, d.policy,
                    d.response_timeout_seconds, d.poll_timeout_seconds,
                    d.total_timeout_seconds, d.rate_limit_per_frequency,
                    d.rate_limit_frequency_in_seconds, d.concurrent_exec_limit,
                    d.cache_ttl_seconds, d.cache_key, d.input_keys, d.output_keys,
                    d.secret_output_fields, d.input_template, d.metadata);
  };
  return tie(a) == tie(b);
}

bool operator==(const switch_case& a, const switch_case& b) {
  return a.value == b.value && a.tasks == b.tasks;
}

bool operator==(const workflow_task& a, const workflow_task& b) {
  auto tie = [](const workflow_task& t) {
    return std::tie(t.name, t.task_reference_name, t.description, t.type, t.optional,
                    t.start_delay, t.input_parameters, t.evaluator_type, t.expression,
                    t.decision_cases, t.default_case, t.fork_tasks, t.join_on,
                    t.dynamic_fork_tasks_param, t.dynamic_fork_tasks_input_param_name,
                    t.loop_condition, t.loop_over, t.items, t.sub_workflow_name,
                    t.sub_workflow_version, t.async_complete, t.permissive, t.retry_count,
                    t.task_definition, t.cache_key, t.cache_ttl_seconds, t.rate_limited,
                    t.join_mode, t.case_value_param, t.case_expression,
                    t.default_exclusive_join_task, t.dynamic_task_name_param, t.sink);
  };
  return tie(a) == tie(b);
}

bool operator==(const workflow_def& a, const workflow_def& b) {
  auto tie = [](const workflow_def& d) {
    return std::tie(d.name, d.version, d.description, d.tasks, d.input_parameters,
                    d.output_parameters, d.variables, d.timeout_seconds, d.policy,
                    d.failure_workflow, d.restartable, d.owner_email, d.schema_version,
                    d.input_template, d.status_listener_enabled, d.metadata);
  };
  return tie(a) == tie(b);
}

std::string queue_of(const workflow_task& t, const task_def* def) {
  if (def != nullptr && !def->queue_name.empty())
    return def->queue_name;
  return t.name;
}

} // namespace nf::flow
