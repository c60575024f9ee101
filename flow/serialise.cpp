#include "flow/serialise.hpp"

#include "flow/conductor_fields.hpp"

namespace nf::flow {

namespace {

boost::json::array strings(const std::vector<std::string>& xs) {
  boost::json::array out;
  out.reserve(xs.size());
  for (const auto& x : xs)
    out.emplace_back(x);
  return out;
}

boost::json::array tasks(const std::vector<workflow_task>& ts) {
  boost::json::array out;
  out.reserve(ts.size());
  for (const auto& t : ts)
    out.push_back(to_json(t));
  return out;
}

}  // namespace

boost::json::value to_json(const task_def& d) {
  boost::json::object o{
    {"name", d.name},
    {"description", d.description},
    {"ownerEmail", d.owner_email},
    {"queueName", d.queue_name},
    {"retryCount", d.retry_count},
    {"retryLogic", to_string(d.logic)},
    {"retryDelaySeconds", d.retry_delay_seconds},
    {"maxRetryDelaySeconds", d.max_retry_delay_seconds},
    {"backoffScaleFactor", d.backoff_scale_factor},
    {"backoffJitterMs", d.backoff_jitter_ms},
    {"timeoutSeconds", d.timeout_seconds},
    {"timeoutPolicy", to_string(d.policy)},
    {"responseTimeoutSeconds", d.response_timeout_seconds},
    {"pollTimeoutSeconds", d.poll_timeout_seconds},
    {"totalTimeoutSeconds", d.total_timeout_seconds},
    {"rateLimitPerFrequency", d.rate_limit_per_frequency},
    {"rateLimitFrequencyInSeconds", d.rate_limit_frequency_in_seconds},
    {"concurrentExecLimit", d.concurrent_exec_limit},
    {"cacheTtlSeconds", d.cache_ttl_seconds},
    {"cacheKey", d.cache_key},
    {"inputKeys", strings(d.input_keys)},
    {"outputKeys", strings(d.output_keys)},
    {"secretOutputFields", strings(d.secret_output_fields)},
    {"inputTemplate", d.input_template},
  };
  write_metadata(d.metadata, o);
  return o;
}

boost::json::value to_json(const workflow_task& t) {
  boost::json::object o{
    {"name", t.name},
    {"taskReferenceName", t.task_reference_name},
    {"type", to_string(t.type)},
    {"optional", t.optional},
    {"startDelay", t.start_delay},
    {"inputParameters", t.input_parameters},
  };
  // Type-specific fields only when set: an empty `loopOver` on a SIMPLE task
  // would otherwise read back as "only allowed on DO_WHILE".
  if (!t.description.empty())
    o["description"] = t.description;
  if (!t.evaluator_type.empty())
    o["evaluatorType"] = t.evaluator_type;
  if (!t.expression.empty())
    o["expression"] = t.expression;
  if (!t.decision_cases.empty() || t.type == task_type::switch_
      || t.type == task_type::decision) {
    boost::json::object cases;
    for (const auto& c : t.decision_cases)
      cases[c.value] = tasks(c.tasks);
    o["decisionCases"] = std::move(cases);
  }
  if (!t.default_case.empty())
    o["defaultCase"] = tasks(t.default_case);
  if (!t.fork_tasks.empty()) {
    boost::json::array branches;
    for (const auto& b : t.fork_tasks)
      branches.push_back(tasks(b));
    o["forkTasks"] = std::move(branches);
  }
  if (!t.join_on.empty())
    o["joinOn"] = strings(t.join_on);
  if (!t.dynamic_fork_tasks_param.empty())
    o["dynamicForkTasksParam"] = t.dynamic_fork_tasks_param;
  if (!t.dynamic_fork_tasks_input_param_name.empty())
    o["dynamicForkTasksInputParamName"] = t.dynamic_fork_tasks_input_param_name;
  if (!t.loop_condition.empty())
    o["loopCondition"] = t.loop_condition;
  if (!t.loop_over.empty())
    o["loopOver"] = tasks(t.loop_over);
  if (!t.items.is_null())
    o["items"] = t.items;
  // Conductor's fields beyond the core, only when set (as for the type-specific ones).
  if (t.async_complete)
    o["asyncComplete"] = true;
  if (t.permissive)
    o["permissive"] = true;
  if (!t.join_mode.empty())
    o["joinMode"] = t.join_mode;
  if (t.retry_count)
    o["retryCount"] = *t.retry_count;
  if (t.task_definition)
    o["taskDefinition"] = to_json(*t.task_definition);
  if (t.cache_ttl_seconds > 0)
    o["cacheConfig"] = boost::json::object{{"key", t.cache_key},
                                           {"ttlInSecond", t.cache_ttl_seconds}};
  if (t.rate_limited)
    o["rateLimited"] = *t.rate_limited;
  if (!t.sub_workflow_name.empty() || t.sub_workflow_version) {
    boost::json::object sub{{"name", t.sub_workflow_name}};
    if (t.sub_workflow_version)
      sub["version"] = *t.sub_workflow_version;
    o["subWorkflowParam"] = std::move(sub);
  }
  if (!t.case_value_param.empty())
    o["caseValueParam"] = t.case_value_param;
  if (!t.case_expression.empty())
    o["caseExpression"] = t.case_expression;
  if (!t.default_exclusive_join_task.empty())
    o["defaultExclusiveJoinTask"] = strings(t.default_exclusive_join_task);
  if (!t.dynamic_task_name_param.empty())
    o["dynamicTaskNameParam"] = t.dynamic_task_name_param;
  if (!t.sink.empty())
    o["sink"] = t.sink;
  return o;
}

boost::json::value to_json(const workflow_def& d) {
  boost::json::object o{
    {"name", d.name},
    {"version", d.version},
    {"description", d.description},
    {"tasks", tasks(d.tasks)},
    {"inputParameters", strings(d.input_parameters)},
    {"outputParameters", d.output_parameters},
    {"variables", d.variables},
    {"timeoutSeconds", d.timeout_seconds},
    {"timeoutPolicy", to_string(d.policy)},
    {"failureWorkflow", d.failure_workflow},
    {"restartable", d.restartable},
    {"ownerEmail", d.owner_email},
    {"schemaVersion", d.schema_version},
    {"inputTemplate", d.input_template},
    {"workflowStatusListenerEnabled", d.status_listener_enabled},
  };
  write_metadata(d.metadata, o);
  return o;
}

} // namespace nf::flow
