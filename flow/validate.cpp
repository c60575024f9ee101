#include "flow/validate.hpp"

#include <boost/json/monotonic_resource.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory_resource>
#include <set>
#include <unordered_map>

#include "flow/conductor_fields.hpp"
#include "flow/conductor_tasks.hpp"
#include "flow/def_index.hpp"
#include "flow/expression.hpp"
#include "flow/json_read.hpp"
#include "flow/json_transform.hpp"
#include "flow/loop_frame.hpp"
#include "flow/loop_inputs.hpp"
#include "flow/parse.hpp"
#include "flow/safe_expr.hpp"
#include "flow/script_task.hpp"
#include "flow/wait_time.hpp"

namespace nf::flow {

namespace {

bool plain_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_name_char);
}

// The longest name of a definition or task: names are keys of btree indexes, whose rows
// Postgres bounds (a few kB), and of the routes that address a definition by its name.
constexpr std::size_t max_name_bytes = 255;

// A definition's or a task's `name`: within max_name_bytes, without a '/' (a route's path
// could not name it) or a control character. Empty is another check's problem.
void check_name(std::string_view name, const std::string& at, problems& out) {
  if (name.size() > max_name_bytes)
    out.push_back({at, "expected at most " + std::to_string(max_name_bytes) + " bytes, got "
                         + std::to_string(name.size())});
  else if (std::any_of(name.begin(), name.end(),
                       [](unsigned char c) { return c == '/' || c < ' ' || c == 0x7f; }))
    out.push_back({at, "expected no '/' or control character, got " + quoted(name)});
}

void check_email(const std::string& email, const std::string& path, problems& out) {
  auto at = email.find('@');
  if (!email.empty()
      && (at == std::string::npos || at == 0 || email.find('.', at) == std::string::npos))
    out.push_back({path, "expected an email address, got " + quoted(email)});
}

// A secret is resolved only where the system-task runner sends it (the HTTP request);
// anywhere else the placeholder would reach a worker, a variable or the workflow output.
constexpr const char* secret_only_in_http =
  "${secrets.…} may only appear in an HTTP task's inputParameters";

constexpr const char* own_task_id_only_in_tasks =
  "${CPEWF_TASK_ID} is the id of the task whose input it is: it may only appear in a task's "
  "inputParameters";

// Reused by every template check of one validation, so scanning allocates
// only while its vectors grow.
struct template_scan {
  json_path_view scratch;
  std::vector<reference_view> refs;
  std::string error;
};

template <class OnRef>
void check_strings(const boost::json::value& v, const path_chain& at, template_scan& scan,
                   problems& out, OnRef& on_ref) {
  if (const auto* s = v.if_string()) {
    scan.refs.clear();
    bool ok = scan_template(*s, scan.scratch, scan.refs, scan.error);
    for (const auto& r : scan.refs)
      on_ref(r, at);
    if (!ok)
      out.push_back({at.str(), scan.error});
  } else if (const auto* arr = v.if_array()) {
    for (std::size_t i = 0; i < arr->size(); ++i)
      check_strings((*arr)[i], path_chain(at, i), scan, out, on_ref);
  } else if (const auto* obj = v.if_object()) {
    for (const auto& kv : *obj)
      check_strings(kv.value(), path_chain(at, kv.key()), scan, out, on_ref);
  }
}

// Checks the ${…} syntax of every string in `params` (at `at`) once, and hands
// each reference to on_ref(reference_view, path_chain of its string).
template <class OnRef>
void check_template_syntax(const boost::json::object& params, const path_chain& at,
                           template_scan& scan, problems& out, OnRef on_ref) {
  for (const auto& kv : params)
    check_strings(kv.value(), path_chain(at, kv.key()), scan, out, on_ref);
}

const boost::json::value* param(const workflow_task& t, std::string_view key) {
  const auto* v = t.input_parameters.if_contains(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

// LLM_STORE_EMBEDDINGS and LLM_SEARCH_EMBEDDINGS: the documents go to nodeflow's own store,
// so a literal vectorDB naming another is refused when the definition is registered (one
// given by ${…} is checked when the task runs), and the inputs every run needs are there.
void check_vector_task(const workflow_task& t, const std::string& path, problems& out) {
  const auto in = path_key(path, "inputParameters");
  if (const auto* db = param(t, "vectorDB");
      db != nullptr && db->is_string() && db->as_string() != "nodeflow"
      && db->as_string().find("${") == boost::json::string::npos && !db->as_string().empty())
    out.push_back({path_key(in, "vectorDB"),
                   "\"" + std::string{db->as_string()}
                     + "\" is not available; nodeflow keeps embeddings in its own database "
                       "(give \"nodeflow\" or leave vectorDB out)"});
  std::vector<std::string_view> needed{"index", "embeddings"};
  if (t.type == task_type::llm_store_embeddings)
    needed.push_back("id");
  for (auto key : needed)
    if (param(t, key) == nullptr)
      out.push_back({path_key(in, key), "missing required field"});
}

void misplaced(const workflow_task& t, const std::string& path, problems& out) {
  auto only = [&](bool present, std::string_view field, std::string_view owner) {
    if (present)
      out.push_back({path_key(path, field), "only allowed on " + std::string(owner) + " tasks"});
  };
  bool sw = t.type == task_type::switch_;
  bool decision = t.type == task_type::decision;
  only(!sw && !t.evaluator_type.empty(), "evaluatorType", "SWITCH");
  only(!sw && !t.expression.empty(), "expression", "SWITCH");
  only(!sw && !decision && !t.decision_cases.empty(), "decisionCases", "SWITCH and DECISION");
  only(!sw && !decision && !t.default_case.empty(), "defaultCase", "SWITCH and DECISION");
  only(!decision && !t.case_value_param.empty(), "caseValueParam", "DECISION");
  only(!decision && !t.case_expression.empty(), "caseExpression", "DECISION");
  bool exclusive = t.type == task_type::exclusive_join;
  only(!exclusive && !t.default_exclusive_join_task.empty(), "defaultExclusiveJoinTask",
       "EXCLUSIVE_JOIN");
  only(t.type != task_type::dynamic && !t.dynamic_task_name_param.empty(),
       "dynamicTaskNameParam", "DYNAMIC");
  only(t.type != task_type::event && !t.sink.empty(), "sink", "EVENT");
  only(t.type != task_type::fork_join && !t.fork_tasks.empty(), "forkTasks", "FORK_JOIN");
  only(t.type != task_type::join && !exclusive && !t.join_on.empty(), "joinOn",
       "JOIN and EXCLUSIVE_JOIN");
  bool dyn = t.type == task_type::fork_join_dynamic;
  only(!dyn && !t.dynamic_fork_tasks_param.empty(), "dynamicForkTasksParam",
       "FORK_JOIN_DYNAMIC");
  only(!dyn && !t.dynamic_fork_tasks_input_param_name.empty(), "dynamicForkTasksInputParamName",
       "FORK_JOIN_DYNAMIC");
  bool loop = t.type == task_type::do_while;
  only(!loop && !t.loop_condition.empty(), "loopCondition", "DO_WHILE");
  only(!loop && !t.loop_over.empty(), "loopOver", "DO_WHILE");
  only(!loop && !t.items.is_null(), "items", "DO_WHILE");
  only(t.type != task_type::sub_workflow
         && (!t.sub_workflow_name.empty() || t.sub_workflow_version.has_value()),
       "subWorkflowParam", "SUB_WORKFLOW");
}

// `name`, given at `at`, must be one of the task's inputParameters: its value is read there.
void check_names_input(const workflow_task& t, const std::string& at, const std::string& name,
                       problems& out) {
  if (!t.input_parameters.contains(name))
    out.push_back({at, quoted(name) + " is not one of this task's inputParameters"});
}

// A required field naming the input parameter that holds `what`.
void check_input_param_field(const workflow_task& t, const std::string& path,
                             const std::string& name, std::string_view field,
                             std::string_view what, problems& out) {
  if (name.empty())
    out.push_back({path_key(path, field), "missing required field (expected the name of the "
                                            "input parameter holding "
                                            + std::string(what) + ")"});
  else
    check_names_input(t, path_key(path, field), name, out);
}

void check_switch(const workflow_task& t, const std::string& path, problems& out) {
  auto expr_path = path_key(path, "expression");
  if (t.evaluator_type.empty()) {
    out.push_back({path_key(path, "evaluatorType"),
                   "missing required field (expected value-param, javascript or graaljs)"});
  } else if (t.evaluator_type == "value-param") {
    if (t.expression.empty())
      out.push_back({expr_path, "missing required field (expected the name of an input "
                                "parameter holding the case value)"});
    else
      check_names_input(t, expr_path, t.expression, out);
  } else if (t.evaluator_type == "javascript" || t.evaluator_type == "graaljs") {
    safe_expr e;
    std::string error;
    if (t.expression.empty())
      out.push_back({expr_path, "missing required field (expected an expression)"});
    else if (!e.compile(t.expression, error))
      out.push_back({expr_path, "invalid expression: " + error});
  } else {
    out.push_back({path_key(path, "evaluatorType"),
                   "expected one of value-param, javascript, graaljs, got "
                     + quoted(t.evaluator_type)});
  }
  if (t.decision_cases.empty() && t.default_case.empty())
    out.push_back({path, "a SWITCH needs decisionCases or a defaultCase"});
}

void check_wait(const workflow_task& t, const std::string& path, problems& out) {
  auto in = path_key(path, "inputParameters");
  const auto* duration = param(t, "duration");
  const auto* until = param(t, "until");
  const auto* signal = param(t, "signal");
  if ((duration != nullptr) + (until != nullptr) + (signal != nullptr) > 1)
    out.push_back({in, "a WAIT takes only one of duration, until or signal"});
  if (duration != nullptr && !is_expression(*duration)) {
    std::int64_t n;
    problems ignored;
    bool ok = duration->is_string() ? parse_duration_ms(duration->get_string()).has_value()
                                    : read_count(*duration, "", n, ignored);
    if (!ok)
      out.push_back({path_key(in, "duration"),
                     "expected a duration such as 30, \"30s\", \"5m\" or \"1h 30m\", got "
                       + describe(*duration)});
  }
  if (until != nullptr && !is_expression(*until)
      && !(until->is_string() && parse_time(until->get_string())))
    out.push_back({path_key(in, "until"),
                   "expected a time such as \"2025-01-31T10:00:00Z\" or "
                   "\"2025-01-31 10:00 +02:00\", got "
                     + describe(*until)});
  if (signal != nullptr && !(signal->is_string() && !signal->get_string().empty()))
    out.push_back({path_key(in, "signal"), "expected a signal name, got " + describe(*signal)});
}

void check_http(const workflow_task& t, const std::string& path, problems& out) {
  auto req_path = path_key(path_key(path, "inputParameters"), "http_request");
  const auto* req = param(t, "http_request");
  if (req == nullptr) {
    out.push_back({req_path, "missing required field (expected an object with uri and method)"});
    return;
  }
  if (is_expression(*req))
    return;
  const auto* obj = req->if_object();
  if (obj == nullptr) {
    out.push_back({req_path, "expected an object with uri and method, got " + describe(*req)});
    return;
  }
  const auto* uri = obj->if_contains("uri");
  if (uri == nullptr || !uri->is_string() || uri->get_string().empty())
    out.push_back({path_key(req_path, "uri"), "missing required field (expected a URI string)"});
  if (const auto* method = obj->if_contains("method"); method != nullptr && !is_expression(*method)) {
    static constexpr std::string_view methods[] = {"GET",  "POST", "PUT",    "DELETE",
                                                   "PATCH", "HEAD", "OPTIONS"};
    bool ok = method->is_string()
              && std::find(std::begin(methods), std::end(methods),
                           std::string_view(method->get_string()))
                   != std::end(methods);
    if (!ok)
      out.push_back({path_key(req_path, "method"),
                     "expected one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS, got "
                       + describe(*method)});
  }
}

void check_terminate(const workflow_task& t, const std::string& path, problems& out) {
  auto in = path_key(path, "inputParameters");
  const auto* status = param(t, "terminationStatus");
  if (status == nullptr)
    out.push_back({path_key(in, "terminationStatus"),
                   "missing required field (expected COMPLETED, FAILED or TERMINATED)"});
  else if (!is_expression(*status)
           && !(status->is_string()
                && (status->get_string() == "COMPLETED" || status->get_string() == "FAILED"
                    || status->get_string() == "TERMINATED")))
    out.push_back({path_key(in, "terminationStatus"),
                   "expected one of COMPLETED, FAILED, TERMINATED, got " + describe(*status)});
  if (const auto* output = param(t, "workflowOutput");
      output != nullptr && !is_expression(*output) && !output->is_object())
    out.push_back({path_key(in, "workflowOutput"), "expected an object, got " + describe(*output)});
}

// DECISION, SWITCH's deprecated form: the case comes from caseValueParam or caseExpression.
void check_decision(const workflow_task& t, const std::string& path, problems& out) {
  bool by_param = !t.case_value_param.empty();
  bool by_expr = !t.case_expression.empty();
  if (by_param == by_expr)
    out.push_back({path, by_param ? "a DECISION takes caseValueParam or caseExpression, not both"
                                  : "a DECISION needs caseValueParam or caseExpression"});
  if (by_param)
    check_names_input(t, path_key(path, "caseValueParam"), t.case_value_param, out);
  safe_expr e;
  std::string error;
  if (by_expr && !e.compile(t.case_expression, error))
    out.push_back({path_key(path, "caseExpression"), "unsupported expression: " + error});
  if (t.decision_cases.empty() && t.default_case.empty())
    out.push_back({path, "a DECISION needs decisionCases or a defaultCase"});
}

// Rules that depend on a task alone, not on where it stands.
void check_rules(const workflow_task& t, const std::string& path, problems& out) {
  misplaced(t, path, out);
  check_name(t.name, path_key(path, "name"), out);
  check_conductor_task_fields(t, path, out);
  if (!t.task_reference_name.empty() && !plain_name(t.task_reference_name))
    out.push_back({path_key(path, "taskReferenceName"),
                   "expected letters, digits, '_' or '-', got " + quoted(t.task_reference_name)});
  else if (t.task_reference_name == "workflow")
    out.push_back({path_key(path, "taskReferenceName"),
                   "\"workflow\" is reserved for ${workflow.…} expressions"});
  switch (t.type) {
    case task_type::switch_: check_switch(t, path, out); break;
    case task_type::fork_join:
      if (t.fork_tasks.empty())
        out.push_back({path_key(path, "forkTasks"),
                       "expected at least one branch (an array of task arrays)"});
      for (std::size_t b = 0; b < t.fork_tasks.size(); ++b)
        if (t.fork_tasks[b].empty())
          out.push_back({path_index(path_key(path, "forkTasks"), b),
                         "expected at least one task in each branch"});
      break;
    case task_type::fork_join_dynamic:
      check_input_param_field(t, path, t.dynamic_fork_tasks_param, "dynamicForkTasksParam",
                              "the tasks to fork", out);
      check_input_param_field(t, path, t.dynamic_fork_tasks_input_param_name,
                              "dynamicForkTasksInputParamName", "their inputs", out);
      break;
    case task_type::do_while: {
      safe_expr e;
      std::string error;
      if (t.loop_condition.empty() && !iterates_items(t))
        out.push_back({path_key(path, "loopCondition"),
                       "missing required field (expected an expression, or `items` to "
                       "run once per item)"});
      else if (!t.loop_condition.empty() && !e.compile(t.loop_condition, error))
        out.push_back({path_key(path, "loopCondition"), "invalid expression: " + error});
      else if (boost::json::value v; !t.loop_condition.empty() && !iterates_items(t)
                                     && e.is_constant() && e.evaluate(nullptr, v, error)
                                     && truthy(v))
        out.push_back({path_key(path, "loopCondition"), "always true: the loop would never end"});
      if (t.loop_over.empty())
        out.push_back({path_key(path, "loopOver"), "expected at least one task"});
      check_loop_inputs(t, path, out);
      break;
    }
    case task_type::sub_workflow:
      if (t.sub_workflow_name.empty())
        out.push_back({path_key(path_key(path, "subWorkflowParam"), "name"),
                       "missing required field (expected the name of the workflow to start)"});
      break;
    case task_type::wait: check_wait(t, path, out); break;
    case task_type::http: check_http(t, path, out); break;
    case task_type::set_variable:
      if (t.input_parameters.empty())
        out.push_back({path_key(path, "inputParameters"), "expected at least one variable to set"});
      break;
    case task_type::terminate: check_terminate(t, path, out); break;
    case task_type::decision: check_decision(t, path, out); break;
    case task_type::exclusive_join:
      if (t.join_on.empty())
        out.push_back({path_key(path, "joinOn"),
                       "expected the reference names of the tasks it joins (one of them runs)"});
      break;
    case task_type::dynamic:
      check_input_param_field(t, path, t.dynamic_task_name_param, "dynamicTaskNameParam",
                              "the task name", out);
      break;
    case task_type::start_workflow:
      if (const auto* request = param(t, "startWorkflow"))
        check_start_workflow(*request,
                             path_key(path_key(path, "inputParameters"), "startWorkflow"), out);
      else
        out.push_back({path_key(path_key(path, "inputParameters"), "startWorkflow"),
                       "missing required field (expected {name, version, input, "
                       "correlationId})"});
      break;
    case task_type::event:
      if (t.sink.empty())
        out.push_back({path_key(path, "sink"),
                       "missing required field (expected \"conductor\" or "
                       "\"conductor:<queue>\")"});
      else if (t.sink.find("${") == std::string::npos) {  // a ${…} sink: checked once resolved
        if (auto why = sink_refusal(t.sink); !why.empty())
          out.push_back({path_key(path, "sink"), why});
      }
      break;
    case task_type::json_transform:
      if (const auto* mapping = param(t, "mapping"))
        check_mapping(*mapping, path_key(path_key(path, "inputParameters"), "mapping"),
                      [&](const std::string& p, const std::string& m) { out.push_back({p, m}); });
      else
        out.push_back({path_key(path_key(path, "inputParameters"), "mapping"),
                       "missing required field (expected an object describing the output)"});
      break;
    case task_type::inline_:
    case task_type::lambda:
    case task_type::json_jq_transform: check_script_task(t, path, out); break;
    case task_type::llm_store_embeddings:
    case task_type::llm_search_embeddings: check_vector_task(t, path, out); break;
    default: break;
  }
}

class validator {
 public:
  validator(const workflow_def& def, const std::string& root, problems& out)
    : def_(def), root_(root), out_(out), nodes_(node_buffer_, sizeof node_buffer_),
      visible_count_(&nodes_) {
  }

  void run() {
    auto tasks_path = path_key(root_, "tasks");
    if (def_.tasks.empty())
      out_.push_back({tasks_path, "expected a non-empty array of tasks"});
    collect(def_.tasks, tasks_path);
    block(def_.tasks, tasks_path);
    // Tasks of nested loops carry the outer iterations in their stored names
    // ("ref__2"): a name of that shape could then be two executions at once.
    if (nested_loops_)
      for (const auto& [at, ref] : suffixed_)
        out_.push_back({at, "reference name " + quoted(ref) + " ends in \"__<number>\", "
                              "which names the iterations of nested DO_WHILE tasks"});
    // Workflow output may read any task: by the end, every task has had its chance.
    path_chain root(root_);
    check_template_syntax(def_.output_parameters, path_chain(root, "outputParameters"), scan_,
                          out_, [&](const reference_view& r, const path_chain& at) {
                            if (r.root == reference::secret)
                              out_.push_back({at.str(), secret_only_in_http});
                            if (r.root == reference::own_task_id)
                              out_.push_back({at.str(), own_task_id_only_in_tasks});
                            if (!r.task_ref.empty() && !known(r.task_ref))
                              out_.push_back({at.str(),
                                              "unknown task reference " + quoted(r.task_ref)});
                          });
    if (!def_.failure_workflow.empty() && def_.failure_workflow == def_.name)
      out_.push_back({path_key(root_, "failureWorkflow"),
                      "workflow " + quoted(def_.name)
                        + " would start itself when it fails (cyclic)"});
    check_email(def_.owner_email, path_key(root_, "ownerEmail"), out_);
  }

 private:
  const workflow_def& def_;
  const std::string& root_;
  problems& out_;
  // The map's nodes live as long as one validation: a bump allocator, not a
  // malloc and a free per reference name.
  alignas(std::max_align_t) unsigned char node_buffer_[8192];
  std::pmr::monotonic_buffer_resource nodes_;
  // Every reference name in the definition (known), with how many tasks of
  // that name the task being checked can see: one lookup answers both.
  std::pmr::unordered_map<std::string_view, int> visible_count_;
  std::map<std::string_view, std::string, std::less<>> first_path_;
  std::vector<std::string_view> visible_;  // in order, so scopes can be unwound
  int loop_depth_ = 0;
  bool nested_loops_ = false;
  std::vector<std::pair<std::string, std::string_view>> suffixed_;  // refs ending in __<n>
  template_scan scan_;

  bool known(std::string_view ref) const { return visible_count_.count(ref) != 0; }

  // An empty name is in no reference and not counted.
  void show(std::string_view ref) {
    visible_.push_back(ref);
    if (auto it = visible_count_.find(ref); it != visible_count_.end())
      ++it->second;
  }

  void unwind(std::size_t mark) {
    for (std::size_t i = mark; i < visible_.size(); ++i)
      if (auto it = visible_count_.find(visible_[i]); it != visible_count_.end())
        --it->second;
    visible_.resize(mark);
  }

  // Every reference name; paths are worked out only when one repeats.
  void collect(const std::vector<workflow_task>& ts, const std::string& path) {
    std::vector<const workflow_task*> all;
    def_index::subtree(ts, all);
    visible_count_.reserve(all.size());
    visible_.reserve(all.size());  // each task is shown at least once
    bool repeated = false;
    for (const auto* t : all)
      if (!t->task_reference_name.empty())
        repeated |= !visible_count_.emplace(t->task_reference_name, 0).second;
    if (repeated)
      report_duplicates(ts, path);
  }

  void report_duplicates(const std::vector<workflow_task>& ts, const std::string& path) {
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const auto& t = ts[i];
      auto p = path_index(path, i);
      auto ref_path = path_key(p, "taskReferenceName");
      if (!t.task_reference_name.empty()) {
        auto [it, fresh] = first_path_.emplace(t.task_reference_name, ref_path);
        if (!fresh)
          out_.push_back({ref_path, "duplicate reference name " + quoted(t.task_reference_name)
                                      + " (first used at " + it->second + ")"});
      }
      for_each_child_block(t, p, [&](const std::vector<workflow_task>& child,
                                     const std::string& cp) { report_duplicates(child, cp); });
    }
  }

  template <class F>
  static void for_each_child_block(const workflow_task& t, const std::string& p, F&& f) {
    for (const auto& c : t.decision_cases)
      f(c.tasks, path_key(path_key(p, "decisionCases"), c.value));
    if (!t.default_case.empty())
      f(t.default_case, path_key(p, "defaultCase"));
    for (std::size_t b = 0; b < t.fork_tasks.size(); ++b)
      f(t.fork_tasks[b], path_index(path_key(p, "forkTasks"), b));
    if (!t.loop_over.empty())
      f(t.loop_over, path_key(p, "loopOver"));
  }

  void block(const std::vector<workflow_task>& ts, const std::string& path) {
    bool after_terminate = false;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      auto p = path_index(path, i);
      if (after_terminate) {
        out_.push_back({p, "unreachable: it follows a TERMINATE task in the same list"});
        after_terminate = false;  // once per list is enough
      }
      task(ts[i], p, i > 0 ? &ts[i - 1] : nullptr, i + 1 < ts.size() ? &ts[i + 1] : nullptr);
      if (ts[i].type == task_type::terminate && i + 1 < ts.size())
        after_terminate = true;
    }
  }

  void task(const workflow_task& t, const std::string& p, const workflow_task* prev,
            const workflow_task* next) {
    check_rules(t, p, out_);
    path_chain task_at(p);
    check_template_syntax(t.input_parameters, path_chain(task_at, "inputParameters"), scan_, out_,
                          [&](const reference_view& r, const path_chain& at) {
                            if (r.root == reference::secret && t.type != task_type::http)
                              out_.push_back({at.str(), secret_only_in_http});
                            if (r.task_ref.empty())
                              return;
                            auto it = visible_count_.find(r.task_ref);
                            if (it == visible_count_.end())
                              out_.push_back({at.str(),
                                              "unknown task reference " + quoted(r.task_ref)});
                            else if (it->second <= 0)
                              out_.push_back({at.str(), "task reference " + quoted(r.task_ref)
                                                          + " does not run before this task"});
                          });
    bool forks = t.type == task_type::fork_join || t.type == task_type::fork_join_dynamic;
    if (forks && (next == nullptr || next->type != task_type::join))
      out_.push_back({p, "a " + std::string(to_string(t.type)) + " must be followed by a JOIN"});
    if (t.type == task_type::join)
      check_join(t, p, prev);
    if (t.type == task_type::exclusive_join) {
      check_joined(t.join_on, path_key(p, "joinOn"));
      check_joined(t.default_exclusive_join_task, path_key(p, "defaultExclusiveJoinTask"));
    }
    if (t.type == task_type::do_while && loop_depth_ > 0)
      nested_loops_ = true;
    if (has_iteration_suffix(t.task_reference_name))
      suffixed_.emplace_back(path_key(p, "taskReferenceName"), t.task_reference_name);
    if (t.type == task_type::sub_workflow && t.sub_workflow_name == def_.name
        && (!t.sub_workflow_version || *t.sub_workflow_version == def_.version))
      out_.push_back({path_key(path_key(p, "subWorkflowParam"), "name"),
                      "workflow " + quoted(def_.name) + " would start itself (cyclic)"});
    show(t.task_reference_name);
    if (t.type == task_type::do_while) {
      ++loop_depth_;
      block(t.loop_over, path_key(p, "loopOver"));
      --loop_depth_;
      return;
    }
    // Alternatives (cases, branches) cannot see each other, later tasks see all.
    std::vector<std::string_view> added;
    for_each_child_block(t, p, [&](const std::vector<workflow_task>& child,
                                   const std::string& cp) {
      auto mark = visible_.size();
      block(child, cp);
      added.insert(added.end(), visible_.begin() + static_cast<std::ptrdiff_t>(mark),
                   visible_.end());
      unwind(mark);
    });
    for (auto ref : added)
      show(ref);
  }

  // EXCLUSIVE_JOIN: each name is a task that may have run before it.
  void check_joined(const std::vector<std::string>& refs, const std::string& at) {
    for (std::size_t i = 0; i < refs.size(); ++i) {
      auto it = visible_count_.find(refs[i]);
      if (it == visible_count_.end())
        out_.push_back({path_index(at, i), "unknown task reference " + quoted(refs[i])});
      else if (it->second <= 0)
        out_.push_back({path_index(at, i), "task reference " + quoted(refs[i])
                                              + " does not run before this task"});
    }
  }

  static void branch_refs(const std::vector<workflow_task>& ts,
                          std::vector<std::string_view>& out, bool in_loop,
                          std::vector<std::string_view>& looped) {
    for (const auto& t : ts) {
      (in_loop ? looped : out).push_back(t.task_reference_name);
      for (const auto& c : t.decision_cases)
        branch_refs(c.tasks, out, in_loop, looped);
      branch_refs(t.default_case, out, in_loop, looped);
      for (const auto& b : t.fork_tasks)
        branch_refs(b, out, in_loop, looped);
      branch_refs(t.loop_over, out, true, looped);
    }
  }

  void check_join(const workflow_task& t, const std::string& p, const workflow_task* prev) {
    auto join_path = path_key(p, "joinOn");
    if (prev == nullptr
        || (prev->type != task_type::fork_join && prev->type != task_type::fork_join_dynamic)) {
      out_.push_back({p, "a JOIN must directly follow a FORK_JOIN or FORK_JOIN_DYNAMIC"});
      return;
    }
    if (prev->type == task_type::fork_join_dynamic) {
      if (!t.join_on.empty())
        out_.push_back({join_path, "must be empty after a FORK_JOIN_DYNAMIC (it joins every "
                                   "forked task)"});
      return;
    }
    if (t.join_on.empty()) {
      out_.push_back({join_path, "joins nothing (expected references to tasks of the "
                                 "preceding FORK_JOIN)"});
      return;
    }
    std::vector<std::string_view> refs, looped;
    for (const auto& b : prev->fork_tasks)
      branch_refs(b, refs, false, looped);
    for (std::size_t i = 0; i < t.join_on.size(); ++i) {
      const auto& r = t.join_on[i];
      if (std::find(looped.begin(), looped.end(), r) != looped.end())
        out_.push_back({path_index(join_path, i),
                        quoted(r) + " runs inside a DO_WHILE of the fork: join the DO_WHILE"});
      else if (std::find(refs.begin(), refs.end(), r) == refs.end())
        out_.push_back({path_index(join_path, i),
                        quoted(r) + " is not a task of the preceding FORK_JOIN"});
    }
  }
};

template <class Def, class Read>
loaded<Def> load(std::string_view json_text, Read read) {
  loaded<Def> out;
  // The parse tree only lives while it is read into the definition (which
  // copies into default storage), so a bump allocator spares most mallocs.
  unsigned char buffer[16384];
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  boost::json::value v(&arena);
  if (!parse_json(json_text, v, out.errors))
    return out;
  out.def = read(v, "", out.errors);
  auto more = validate(out.def);
  out.errors.insert(out.errors.end(), more.begin(), more.end());
  return out;
}

}  // namespace

problems validate(const workflow_def& def, const std::string& path) {
  problems out;
  check_name(def.name, path_key(path, "name"), out);
  validator(def, path, out).run();
  return out;
}

problems validate(const task_def& def, const std::string& path) {
  problems out;
  auto field = [&](std::string_view f) { return path_key(path, f); };
  check_name(def.name, field("name"), out);
  if (def.timeout_seconds > 0 && def.response_timeout_seconds > def.timeout_seconds)
    out.push_back({field("responseTimeoutSeconds"),
                   "must not exceed timeoutSeconds (" + std::to_string(def.response_timeout_seconds)
                     + " > " + std::to_string(def.timeout_seconds) + ")"});
  if (def.rate_limit_per_frequency > 0 && def.rate_limit_frequency_in_seconds == 0)
    out.push_back({field("rateLimitFrequencyInSeconds"),
                   "expected at least 1 when rateLimitPerFrequency is set"});
  if (def.backoff_scale_factor == 0)
    out.push_back({field("backoffScaleFactor"), "expected at least 1"});
  if (def.cache_ttl_seconds > 0 && def.cache_key.empty())
    out.push_back({field("cacheKey"),
                   "missing required field (expected a key template when cacheTtlSeconds is set)"});
  if (!def.cache_key.empty()) {
    parsed_template t;
    std::string error;
    if (!parse_template(def.cache_key, t, error))
      out.push_back({field("cacheKey"), error});
  }
  if (!def.queue_name.empty() && !plain_name(def.queue_name))
    out.push_back({field("queueName"),
                   "expected letters, digits, '_' or '-', got " + quoted(def.queue_name)});
  check_email(def.owner_email, field("ownerEmail"), out);
  return out;
}

problems validate_dynamic_task(const workflow_task& t, const std::string& path) {
  problems out;
  if (is_composite(t.type) || t.type == task_type::join || t.type == task_type::exclusive_join
      || t.type == task_type::fork_join_dynamic
      || t.type == task_type::terminate) {
    out.push_back({path_key(path, "type"), "a dynamically forked task cannot be "
                                             + std::string(to_string(t.type))});
    return out;
  }
  check_rules(t, path, out);
  path_chain task_at(path);
  template_scan scan;
  check_template_syntax(t.input_parameters, path_chain(task_at, "inputParameters"), scan, out,
                        [](const reference_view&, const path_chain&) {});
  return out;
}

loaded<workflow_def> load_workflow_def(std::string_view json_text) {
  return load<workflow_def>(json_text, read_workflow_def);
}

loaded<task_def> load_task_def(std::string_view json_text) {
  return load<task_def>(json_text, read_task_def);
}

} // namespace nf::flow
