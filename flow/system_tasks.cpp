#include "flow/system_tasks.hpp"

#include <set>

#include "flow/def_index.hpp"
#include "flow/json_read.hpp"
#include "flow/json_transform.hpp"
#include "flow/parse.hpp"
#include "flow/safe_expr.hpp"
#include "flow/validate.hpp"
#include "flow/wait_time.hpp"

namespace nf::flow {

namespace {

task_result failed(std::string reason) {
  return {task_status::failed, {}, std::move(reason)};
}

}  // namespace

task_result run_switch(const workflow_task& t, const boost::json::object& input) {
  boost::json::value v;
  if (t.evaluator_type == "value-param") {
    if (const auto* p = input.if_contains(t.expression))
      v = *p;
  } else {
    safe_expr e;
    std::string error;
    boost::json::value root = input;
    if (!e.compile(t.expression, error) || !e.evaluate(root, v, error))
      return failed("expression: " + error);
  }
  task_result r;
  r.output["evaluationResult"] = boost::json::array{boost::json::string(case_label(v))};
  return r;
}

const std::vector<workflow_task>& selected_case(const workflow_task& t,
                                                const boost::json::object& output) {
  static const std::vector<workflow_task> none;
  // DECISION, SWITCH's deprecated form, names its result as Conductor does.
  const auto* result =
    output.if_contains(t.type == task_type::decision ? "caseOutput" : "evaluationResult");
  const auto* arr = result == nullptr ? nullptr : result->if_array();
  if (arr == nullptr || arr->empty() || !(*arr)[0].is_string())
    return none;
  const auto& label = (*arr)[0].get_string();
  for (const auto& c : t.decision_cases)
    if (c.value == label)
      return c.tasks;
  return t.default_case;
}

task_result run_json_transform(const boost::json::object& input) {
  const auto* mapping = input.if_contains("mapping");
  if (mapping == nullptr || mapping->is_null())
    return failed("inputParameters.mapping: expected a mapping, got null");
  boost::json::object source = input;
  source.erase("mapping");
  task_result r;
  r.output["result"] = apply_mapping(*mapping, source);
  return r;
}

termination run_terminate(const boost::json::object& input) {
  termination out;
  const auto* status = input.if_contains("terminationStatus");
  const auto* label = status == nullptr ? nullptr : status->if_string();
  if (label != nullptr && *label == "COMPLETED")
    out.status = workflow_status::completed;
  else if (label != nullptr && *label == "FAILED")
    out.status = workflow_status::failed;
  else if (label != nullptr && *label == "TERMINATED")
    out.status = workflow_status::terminated;
  else {
    out.task = failed("inputParameters.terminationStatus: expected COMPLETED, FAILED or "
                      "TERMINATED, got "
                      + (status == nullptr ? std::string("null") : describe(*status)));
    return out;
  }
  if (const auto* reason = input.if_contains("terminationReason"); reason && reason->is_string())
    out.reason = std::string(reason->get_string());
  if (const auto* output = input.if_contains("workflowOutput"); output && output->is_object())
    out.workflow_output = output->get_object();
  out.task.output["terminationStatus"] = *label;
  if (out.workflow_output)
    out.task.output["workflowOutput"] = *out.workflow_output;
  return out;
}

dynamic_fork read_dynamic_fork(const workflow_task& t, const boost::json::object& input,
                               const def_index& static_refs) {
  dynamic_fork out;
  const auto* tasks = input.if_contains(t.dynamic_fork_tasks_param);
  const auto* arr = tasks == nullptr ? nullptr : tasks->if_array();
  auto tasks_path = path_key("inputParameters", t.dynamic_fork_tasks_param);
  if (arr == nullptr) {
    out.error = tasks_path + ": expected an array of tasks, got "
                + (tasks == nullptr ? std::string("null") : describe(*tasks));
    return out;
  }
  const auto* inputs = input.if_contains(t.dynamic_fork_tasks_input_param_name);
  if (inputs != nullptr && inputs->is_object()) {
    out.inputs = inputs->get_object();
  } else if (inputs != nullptr && !inputs->is_null()) {
    out.error = path_key("inputParameters", t.dynamic_fork_tasks_input_param_name)
                + ": expected an object of inputs by taskReferenceName, got " + describe(*inputs);
    return out;
  }
  problems errs;
  std::set<std::string_view> seen;
  out.tasks.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    auto p = path_index(tasks_path, i);
    out.tasks.push_back(read_workflow_task((*arr)[i], p, errs));
    auto more = validate_dynamic_task(out.tasks.back(), p);
    errs.insert(errs.end(), more.begin(), more.end());
    const auto& ref = out.tasks.back().task_reference_name;
    if (!ref.empty() && (static_refs.find(ref) != nullptr || !seen.insert(ref).second))
      errs.push_back({path_key(p, "taskReferenceName"),
                      "duplicate reference name " + quoted(ref)});
  }
  if (!errs.empty()) {
    out.error = to_string(errs.front());
    if (errs.size() > 1)
      out.error += " (and " + std::to_string(errs.size() - 1) + " more)";
    out.tasks.clear();
  }
  return out;
}

wait_plan plan_wait(const boost::json::object& input, time_ms scheduled_time) {
  wait_plan out;
  auto get = [&](std::string_view key) -> const boost::json::value* {
    const auto* v = input.if_contains(key);
    return v == nullptr || v->is_null() ? nullptr : v;
  };
  if (const auto* d = get("duration")) {
    std::optional<std::int64_t> ms;
    std::int64_t seconds = 0;
    problems ignored;
    if (d->is_string())
      ms = parse_duration_ms(d->get_string());
    else if (read_count(*d, "", seconds, ignored))
      ms = seconds * 1000;
    if (!ms)
      out.error = "inputParameters.duration: expected a duration, got " + describe(*d);
    else
      out.wake = scheduled_time + *ms;
  } else if (const auto* u = get("until")) {
    auto at = u->is_string() ? parse_time(u->get_string()) : std::nullopt;
    if (!at)
      out.error = "inputParameters.until: expected a time, got " + describe(*u);
    else
      out.wake = *at;
  } else if (const auto* s = get("signal")) {
    if (s->is_string() && !s->get_string().empty())
      out.signal = std::string(s->get_string());
    else
      out.error = "inputParameters.signal: expected a signal name, got " + describe(*s);
  }
  return out;
}

} // namespace nf::flow
