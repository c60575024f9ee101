#include "flow/parse.hpp"

#include "flow/conductor_fields.hpp"
#include "flow/json_read.hpp"
#include "flow/precise_json.hpp"

namespace nf::flow {

namespace {

std::string at_root(const std::string& path) {
  return path.empty() ? "$" : path;
}

const boost::json::object* expect_object(const boost::json::value& v, const std::string& path,
                                         std::string_view what, problems& errs) {
  if (const auto* obj = v.if_object())
    return obj;
  errs.push_back({at_root(path), "expected " + std::string(what) + " (an object), got "
                                   + describe(v)});
  return nullptr;
}

void read_task_into(const boost::json::value& v, const std::string& path, problems& errs,
                    workflow_task& t);

std::vector<workflow_task> read_task_list(const boost::json::value* v, const std::string& path,
                                          problems& errs) {
  std::vector<workflow_task> out;
  if (v == nullptr)
    return out;
  const auto* arr = v->if_array();
  if (arr == nullptr) {
    errs.push_back({path, "expected an array of tasks, got " + describe(*v)});
    return out;
  }
  out.reserve(arr->size());
  std::string item;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    item = path_index(path, i);
    read_task_into((*arr)[i], item, errs, out.emplace_back());  // in place: a task is large
  }
  return out;
}

void read_sub_workflow_param(object_reader& r, workflow_task& t, problems& errs) {
  const auto* v = r.get("subWorkflowParam");
  if (v == nullptr)
    return;
  auto path = r.field_path("subWorkflowParam");
  const auto* obj = expect_object(*v, path, "subWorkflowParam", errs);
  if (obj == nullptr)
    return;
  object_reader sub(*obj, path, errs);
  sub.text("name", t.sub_workflow_name);  // validate() reports it missing
  if (sub.get("version") != nullptr) {
    std::int64_t version = 0;
    sub.count("version", version);
    t.sub_workflow_version = version;
  }
  read_conductor_sub_workflow_fields(sub, errs);
  sub.finish("subWorkflowParam");
}

void read_task_into(const boost::json::value& v, const std::string& path, problems& errs,
                    workflow_task& t) {
  const auto* obj = expect_object(v, path, "a task", errs);
  if (obj == nullptr)
    return;
  object_reader r(*obj, path, errs);
  r.text("name", t.name, true);
  r.text("taskReferenceName", t.task_reference_name, true);
  r.text("description", t.description);
  if (const auto* type = r.get("type")) {
    auto parsed = type->is_string() ? parse_task_type(type->get_string()) : std::nullopt;
    auto refused = type->is_string() ? unsupported_task_type(type->get_string()) : std::nullopt;
    if (parsed)
      t.type = *parsed;
    else if (refused)
      errs.push_back({r.field_path("type"), *refused});
    else
      errs.push_back({r.field_path("type"), "unknown task type " + describe(*type)
                                              + " (expected one of "
                                              + std::string(task_type_labels()) + ")"});
  }
  r.flag("optional", t.optional);
  r.count("startDelay", t.start_delay);
  r.object("inputParameters", t.input_parameters);
  r.text("evaluatorType", t.evaluator_type);
  r.text("expression", t.expression);
  if (const auto* cases = r.get("decisionCases")) {
    auto cases_path = r.field_path("decisionCases");
    if (const auto* cobj = expect_object(*cases, cases_path, "decisionCases", errs))
      for (const auto& kv : *cobj)
        t.decision_cases.push_back(
          {std::string(kv.key()),
           read_task_list(&kv.value(), path_key(cases_path, kv.key()), errs)});
  }
  if (const auto* v = r.get("defaultCase"))
    t.default_case = read_task_list(v, r.field_path("defaultCase"), errs);
  if (const auto* fork = r.get("forkTasks")) {
    auto fork_path = r.field_path("forkTasks");
    if (const auto* arr = fork->if_array()) {
      for (std::size_t i = 0; i < arr->size(); ++i)
        t.fork_tasks.push_back(read_task_list(&(*arr)[i], path_index(fork_path, i), errs));
    } else {
      errs.push_back({fork_path, "expected an array of task arrays, got " + describe(*fork)});
    }
  }
  r.string_list("joinOn", t.join_on);
  r.text("dynamicForkTasksParam", t.dynamic_fork_tasks_param);
  r.text("dynamicForkTasksInputParamName", t.dynamic_fork_tasks_input_param_name);
  r.text("loopCondition", t.loop_condition);
  if (const auto* v = r.get("loopOver"))
    t.loop_over = read_task_list(v, r.field_path("loopOver"), errs);
  if (const auto* v = r.get("items")) {
    if (v->is_string() || v->is_array())
      t.items = *v;
    else
      errs.push_back({r.field_path("items"), "expected a list or an expression giving one, got "
                                               + describe(*v)});
  }
  read_sub_workflow_param(r, t, errs);
  read_conductor_task_fields(r, t, errs);
  r.text("caseValueParam", t.case_value_param);
  r.text("caseExpression", t.case_expression);
  r.string_list("defaultExclusiveJoinTask", t.default_exclusive_join_task);
  r.text("dynamicTaskNameParam", t.dynamic_task_name_param);
  r.text("sink", t.sink);
  r.finish("a workflow task");
}

}  // namespace

bool parse_json(std::string_view text, boost::json::value& out, problems& errs,
                const std::string& path) {
  boost::system::error_code ec;
  boost::json::parse_options opts;
  opts.max_depth = 64;  // untrusted input: bound recursion everywhere below
  out = parse_precise(text, ec, out.storage(), opts);
  if (ec) {
    errs.push_back({path, "invalid JSON: " + ec.message()});
    return false;
  }
  return true;
}

task_def read_task_def(const boost::json::value& v, const std::string& path, problems& errs) {
  task_def d;
  const auto* obj = expect_object(v, path, "a task definition", errs);
  if (obj == nullptr)
    return d;
  object_reader r(*obj, path, errs);
  r.text("name", d.name, true);
  r.text("description", d.description);
  r.text("ownerEmail", d.owner_email);
  r.text("queueName", d.queue_name);
  r.count("retryCount", d.retry_count);
  if (int i = r.choice("retryLogic", {"FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"}); i >= 0)
    d.logic = static_cast<retry_logic>(i);
  r.count("retryDelaySeconds", d.retry_delay_seconds);
  r.count("maxRetryDelaySeconds", d.max_retry_delay_seconds);
  r.count("backoffScaleFactor", d.backoff_scale_factor);
  r.count("backoffJitterMs", d.backoff_jitter_ms);
  r.count("timeoutSeconds", d.timeout_seconds);
  if (int i = r.choice("timeoutPolicy", {"RETRY", "TIME_OUT_WF", "ALERT_ONLY"}); i >= 0)
    d.policy = static_cast<timeout_policy>(i);
  r.count("responseTimeoutSeconds", d.response_timeout_seconds);
  r.count("pollTimeoutSeconds", d.poll_timeout_seconds);
  r.count("totalTimeoutSeconds", d.total_timeout_seconds);
  r.count("rateLimitPerFrequency", d.rate_limit_per_frequency);
  r.count("rateLimitFrequencyInSeconds", d.rate_limit_frequency_in_seconds);
  r.count("concurrentExecLimit", d.concurrent_exec_limit);
  r.count("cacheTtlSeconds", d.cache_ttl_seconds);
  r.text("cacheKey", d.cache_key);
  r.string_list("inputKeys", d.input_keys);
  r.string_list("outputKeys", d.output_keys);
  r.string_list("secretOutputFields", d.secret_output_fields);
  r.object("inputTemplate", d.input_template);
  read_conductor_task_def_fields(r, d, errs);
  r.finish("a task definition");
  return d;
}

workflow_task read_workflow_task(const boost::json::value& v, const std::string& path,
                                 problems& errs) {
  workflow_task t;
  read_task_into(v, path, errs, t);
  return t;
}

bool looks_like_workflow(const boost::json::object& obj) {
  for (auto key : {"tasks", "version", "schemaVersion", "outputParameters", "inputParameters",
                   "variables", "failureWorkflow", "restartable"})
    if (obj.contains(key))
      return true;
  return false;
}

workflow_def read_workflow_def(const boost::json::value& v, const std::string& path,
                               problems& errs) {
  workflow_def d;
  const auto* obj = expect_object(v, path, "a workflow definition", errs);
  if (obj == nullptr)
    return d;
  object_reader r(*obj, path, errs);
  r.text("name", d.name, true);
  r.count("version", d.version);
  r.text("description", d.description);
  // Missing and empty are one problem, reported by validate().
  if (const auto* v = r.get("tasks"))
    d.tasks = read_task_list(v, r.field_path("tasks"), errs);
  r.string_list("inputParameters", d.input_parameters);
  r.object("outputParameters", d.output_parameters);
  r.object("variables", d.variables);
  r.count("timeoutSeconds", d.timeout_seconds);
  if (int i = r.choice("timeoutPolicy", {"TIME_OUT_WF", "ALERT_ONLY"}); i >= 0)
    d.policy = i == 0 ? timeout_policy::time_out_wf : timeout_policy::alert_only;
  r.text("failureWorkflow", d.failure_workflow);
  r.flag("restartable", d.restartable);
  r.text("ownerEmail", d.owner_email);
  if (r.get("schemaVersion") != nullptr) {
    r.count("schemaVersion", d.schema_version);
    if (d.schema_version != 2)
      errs.push_back({r.field_path("schemaVersion"),
                      "expected 2 (the only schema version supported), got "
                        + std::to_string(d.schema_version)});
  }
  read_conductor_workflow_fields(r, d, errs);
  r.finish("a workflow definition");
  return d;
}

} // namespace nf::flow
