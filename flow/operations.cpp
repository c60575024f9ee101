#include "flow/operations.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "flow/conductor_tasks.hpp"
#include "flow/def_index.hpp"
#include "flow/loop_frame.hpp"
#include "flow/own_task_id.hpp"
#include "flow/problem.hpp"

namespace nf::flow {

namespace {

using row_key = std::pair<std::string, std::int32_t>;

std::map<row_key, const task_execution*> latest_rows(const snapshot& s) {
  std::map<row_key, const task_execution*> out;
  for (const auto& e : s.tasks) {
    auto& slot = out[{e.id.ref, e.id.iteration}];
    if (slot == nullptr || slot->id.attempt < e.id.attempt)
      slot = &e;
  }
  return out;
}

bool needs_retry(task_status s) {
  return s == task_status::failed || s == task_status::failed_with_terminal_error
         || s == task_status::timed_out || s == task_status::canceled;
}

edit_result refuse(std::string why) {
  edit_result r;
  r.error = std::move(why);
  return r;
}

class editor {
 public:
  editor(const workflow_def& def, const task_def_map& defs, const snapshot& snap, time_ms now,
         const task_id_source* ids)
    : defs_(defs), snap_(snap), now_(now), index_(def), ids_(ids) {
  }

  const def_index& index() const { return index_; }
  edit& result() { return edit_; }

  // A new execution of `e`'s task; decide() runs or activates it.
  void schedule(const task_execution& e, std::int32_t attempt, boost::json::object input) {
    scheduled_task st;
    st.id = {e.id.ref, e.id.iteration, attempt};
    st.type = e.type;
    st.task_def_name = e.task_def_name;
    st.input = std::move(input);
    st.task_id = carry_own_task_id(st.input, e.task_id, ids_);
    const task_def* d = nullptr;
    if (auto it = defs_.find(e.task_def_name); it != defs_.end())
      d = &it->second;
    if (e.type == task_type::simple) {
      const auto* info = split_stored_ref(e.id.ref, index_).info;
      // A DYNAMIC task's row holds the name it resolved to, not the written one.
      bool written = info != nullptr && info->task->type != task_type::dynamic;
      st.queue = written ? queue_of(*info->task, d)
                 : d != nullptr && !d->queue_name.empty() ? d->queue_name
                                                          : e.task_def_name;
    }
    if (is_queued(e.type)
        && d != nullptr
        && d->poll_timeout_seconds > 0)
      edit_.arm.push_back(
        {timer_kind::schedule_to_start, st.id, now_ + d->poll_timeout_seconds * 1000});
    if (e.type == task_type::sub_workflow) {
      const auto* info = split_stored_ref(e.id.ref, index_).info;
      sub_workflow_start sub{st.id, e.task_def_name, std::nullopt, st.input};
      if (info != nullptr) {
        sub.name = info->task->sub_workflow_name;
        sub.version = info->task->sub_workflow_version;
      }
      edit_.sub_workflows.push_back(std::move(sub));
    }
    if (e.type == task_type::start_workflow)
      if (auto plan = plan_start_workflow(st.input); plan.error.empty())
        edit_.sub_workflows.push_back(
          detached_start(st.id, std::move(plan), snap_.correlation_id));
    edit_.events.push_back(task_event(st.id, st.type, task_status::scheduled));
    edit_.schedule.push_back(std::move(st));
  }

  // Retries what failed or was canceled, among executions not removed.
  std::size_t retry_failed(const std::set<task_identity>& removed) {
    std::size_t n = 0;
    for (const auto& [k, e] : latest_rows(snap_)) {
      if (!needs_retry(e->status) || removed.count(e->id) != 0)
        continue;
      ++n;
      if (e->type == task_type::do_while)
        reopen(*e);
      else
        schedule(*e, e->id.attempt + 1, e->input);
    }
    return n;
  }

  void reopen(const task_execution& e) {
    edit_.updates.push_back({e.id, task_status::in_progress, std::nullopt, {}});
  }

  void finish(std::string_view what) {
    edit_.status = workflow_status::running;
    if (snap_.status == workflow_status::timed_out)
      edit_.start_time = now_;
    std::string name = "workflow." + std::string(what);
    edit_.events.push_back({name, name + '/' + std::to_string(now_), {{"status", "RUNNING"}}});
  }

 private:
  const task_def_map& defs_;
  const snapshot& snap_;
  const time_ms now_;
  const def_index index_;
  const task_id_source* ids_;
  edit edit_;
};

std::string not_ended(const snapshot& s, std::string_view action) {
  return "workflow is " + std::string(to_string(s.status)) + ": only an ended workflow can be "
         + std::string(action);
}

}  // namespace

edit_result retry_last_failed(const workflow_def& def, const task_def_map& task_defs,
                              const snapshot& snap, time_ms now, const task_id_source* ids) {
  if (snap.status != workflow_status::failed && snap.status != workflow_status::timed_out
      && snap.status != workflow_status::terminated)
    return refuse("workflow is " + std::string(to_string(snap.status))
                  + ": only a FAILED, TIMED_OUT or TERMINATED workflow can be retried");
  editor ed(def, task_defs, snap, now, ids);
  if (ed.retry_failed({}) == 0)
    return refuse("nothing to retry: no task FAILED, TIMED_OUT or was CANCELED");
  ed.finish("retried");
  return {std::move(ed.result()), {}};
}

namespace {

bool same_prefix(const std::vector<std::int32_t>& p, const std::vector<std::int32_t>& q,
                 std::size_t n) {
  return p.size() >= n && q.size() >= n && std::equal(p.begin(), p.begin() + n, q.begin());
}

// Every task in `t`'s content (cases, branches, loop body), at any depth.
void content(const workflow_task& t, std::vector<const workflow_task*>& out) {
  def_index::subtree(t.loop_over, out);
  for (const auto& c : t.decision_cases)
    def_index::subtree(c.tasks, out);
  def_index::subtree(t.default_case, out);
  for (const auto& b : t.fork_tasks)
    def_index::subtree(b, out);
}

}  // namespace

edit_result rerun_from_task(const workflow_def& def, const task_def_map& task_defs,
                            const snapshot& snap, std::string_view ref,
                            std::int32_t iteration, std::optional<boost::json::object> input,
                            time_ms now, const task_id_source* ids) {
  if (!is_terminal(snap.status))
    return refuse(not_ended(snap, "rerun"));
  editor ed(def, task_defs, snap, now, ids);
  // Inside nested loops `ref` is the stored one, with the outer iterations ("ref__2").
  auto split = split_stored_ref(ref, ed.index());
  const task_info* target = split.info;
  if (target == nullptr)
    return refuse("unknown task reference " + quoted(ref));
  const task_execution* first = nullptr;
  for (const auto& e : snap.tasks)
    if (e.id.ref == ref && e.id.iteration == iteration && (first == nullptr
                                                           || e.id.attempt < first->id.attempt))
      first = &e;
  if (first == nullptr)
    return refuse("task " + quoted(ref) + " has no execution in iteration "
                  + std::to_string(iteration));
  const auto q = frame_of(split, iteration).path();

  // What follows the task: its content, later tasks of its list, then of each
  // enclosing list, each only in the iterations of the loops around it that
  // the task's own frame shares: rule = ref → how many leading loop
  // iterations an execution must share with the task to go.
  std::map<std::string_view, std::size_t> rule;
  std::vector<const workflow_task*> tasks{target->task};
  content(*target->task, tasks);
  for (const auto* t : tasks)
    rule[t->task_reference_name] = target->depth;
  for (const task_info* x = target; x != nullptr;) {
    std::vector<const workflow_task*> later;
    for (std::size_t j = x->index + 1; j < x->block->size(); ++j) {
      later.push_back(&(*x->block)[j]);
      content((*x->block)[j], later);
    }
    for (const auto* t : later)
      rule.emplace(t->task_reference_name, x->depth);
    x = x->parent == nullptr ? nullptr : ed.index().find(x->parent->task_reference_name);
  }
  // Later iterations of every loop around the task (the body of the loop at
  // depth d runs at depth d + 1).
  std::vector<std::pair<std::set<std::string_view>, std::size_t>> later_iterations;
  for (const workflow_task* loop = target->loop; loop != nullptr;) {
    const task_info* info = ed.index().find(loop->task_reference_name);
    std::set<std::string_view> refs;
    for (const auto* t : ed.index().body(loop))
      refs.insert(t->task_reference_name);
    later_iterations.emplace_back(std::move(refs), info->depth + 1);
    loop = info->loop;
  }

  std::set<task_identity> removed;
  auto remove = [&](std::string_view base, const std::vector<std::int32_t>& p) {
    if (auto it = rule.find(base); it != rule.end() && same_prefix(p, q, it->second))
      return true;
    for (const auto& [refs, j] : later_iterations)
      if (refs.count(base) != 0 && same_prefix(p, q, j - 1) && p.size() >= j
          && p[j - 1] > q[j - 1])
        return true;
    return false;
  };
  // Children of a removed dynamic fork go with it (named in the fork's frame).
  std::set<std::pair<std::string, std::int32_t>> dynamic_children;
  for (const auto& e : snap.tasks) {
    auto s = split_stored_ref(e.id.ref, ed.index());
    std::string_view base = s.info != nullptr ? std::string_view(s.info->task->task_reference_name)
                                              : std::string_view(e.id.ref);
    if (!remove(base, frame_of(s, e.id.iteration).path()))
      continue;
    removed.insert(e.id);
    std::string suffix = e.id.ref.substr(base.size());
    if (const auto* forked = e.output.if_contains("forkedTasks"); forked && forked->is_array())
      for (const auto& c : forked->get_array())
        if (c.is_string())
          dynamic_children.emplace(std::string(c.get_string()) + suffix, e.id.iteration);
  }
  for (const auto& e : snap.tasks)
    if (dynamic_children.count({e.id.ref, e.id.iteration}) != 0)
      removed.insert(e.id);
  ed.result().remove.assign(removed.begin(), removed.end());

  // Reopen each loop around the task, in the frame the task runs in.
  loop_frame fr = frame_of(split, iteration);
  for (const workflow_task* loop = target->loop; loop != nullptr;) {
    const task_info* info = ed.index().find(loop->task_reference_name);
    auto around = fr.outer(info->depth);
    auto loop_ref = around.ref(loop->task_reference_name);
    for (const auto& e : snap.tasks)
      if (e.id.ref == loop_ref && e.id.iteration == around.iteration() && is_terminal(e.status)
          && !removed.count(e.id) && !needs_retry(e.status))
        ed.reopen(e);
    loop = info->loop;
  }
  ed.retry_failed(removed);
  if (input)
    ed.schedule(*first, 0, std::move(*input));
  ed.finish("rerun");
  return {std::move(ed.result()), {}};
}

edit_result restart(const workflow_def& def, const snapshot& snap,
                    std::optional<boost::json::object> input, time_ms now) {
  if (!is_terminal(snap.status))
    return refuse(not_ended(snap, "restarted"));
  if (!def.restartable)
    return refuse("workflow definition " + quoted(def.name) + " is not restartable");
  edit e;
  for (const auto& t : snap.tasks)
    e.remove.push_back(t.id);
  e.input = input ? std::move(*input) : snap.input;
  e.variables = def.variables;
  e.start_time = now;
  e.events.push_back({"workflow.restarted", "workflow.restarted/" + std::to_string(now),
                      {{"status", "RUNNING"}}});
  return {std::move(e), {}};
}

edit_result update_variables(const snapshot& snap, const boost::json::object& variables) {
  if (snap.status != workflow_status::running && snap.status != workflow_status::paused)
    return refuse("workflow is " + std::string(to_string(snap.status))
                  + ": only a RUNNING or PAUSED workflow's variables can be updated");
  edit e;
  e.status = snap.status;
  auto merged = snap.variables;
  for (const auto& kv : variables)
    merged[kv.key()] = kv.value();
  e.variables = std::move(merged);
  return {std::move(e), {}};
}

namespace {

// The latest attempt that `ref` names: of its latest iteration, or, for a loop's iteration as
// Conductor names it ("ref__2"), of that iteration when no task has the whole name.
const task_execution* latest_at_ref(const snapshot& snap, std::string_view ref) {
  auto rows = latest_rows(snap);  // ordered by ref, then iteration
  auto last = rows.upper_bound({std::string{ref}, INT32_MAX});
  if (last != rows.begin() && std::prev(last)->first.first == ref)
    return std::prev(last)->second;
  if (auto split = split_iteration_suffix(ref))
    if (auto at = rows.find({std::string{split->first}, split->second}); at != rows.end())
      return at->second;
  return nullptr;
}

} // namespace

edit_result update_state(const snapshot& snap, const boost::json::object* variables,
                         const state_task_result* result) {
  if (snap.status != workflow_status::running && snap.status != workflow_status::paused)
    return refuse("workflow is " + std::string(to_string(snap.status))
                  + ": only a RUNNING or PAUSED workflow's state can be updated");
  edit e;
  if (variables != nullptr) {
    auto vars = update_variables(snap, *variables);
    if (!vars)
      return vars;
    e = std::move(vars.value);
  }
  e.status = snap.status;
  if (result == nullptr)
    return {std::move(e), {}};
  if (result->status != task_status::completed && result->status != task_status::failed
      && result->status != task_status::failed_with_terminal_error)
    return refuse("taskResult.status: expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, "
                  "got " + std::string(to_string(result->status)));
  const auto* t = latest_at_ref(snap, result->ref);
  if (t == nullptr)
    return refuse("taskReferenceName: no task " + quoted(result->ref) + " has been scheduled");
  if ((t->type != task_type::wait && t->type != task_type::human)
      || (t->status != task_status::in_progress && t->status != task_status::scheduled))
    return refuse("taskReferenceName: task " + quoted(result->ref) + " is a "
                  + std::string(to_string(t->type)) + " task, "
                  + std::string(to_string(t->status))
                  + ": only a WAIT or HUMAN task still waiting is updated by its reference "
                    "name (workers report theirs with the taskId a poll gave them)");
  if (!result->task_id.empty() && result->task_id != t->task_id)
    return refuse("taskResult.taskId: " + quoted(result->task_id) + " is not the id of task "
                  + quoted(result->ref) + " (" + t->task_id + ")");
  std::string reason = result->reason_for_incompletion;
  if (reason.empty() && result->status != task_status::completed)
    reason = "set to " + std::string(to_string(result->status)) + " by an update of state";
  e.events.push_back(task_event(t->id, t->type, result->status, reason));
  e.finish.push_back({t->id, result->status, result->output, std::move(reason)});
  if (t->type == task_type::wait)
    e.cancel.push_back({timer_kind::wait, t->id});
  return {std::move(e), {}};
}

edit_result skip_task(const workflow_def& def, const snapshot& snap, std::string_view ref,
                      std::optional<boost::json::object> input,
                      std::optional<boost::json::object> output) {
  if (snap.status != workflow_status::running)
    return refuse("workflow is " + std::string(to_string(snap.status))
                  + ": only a RUNNING workflow can have a task skipped");
  def_index index(def);
  const task_info* info = index.find(ref);
  if (info == nullptr)
    return refuse("task_ref: " + quoted(ref) + " is not a task of workflow definition "
                  + quoted(def.name));
  if (info->loop != nullptr)
    return refuse("task_ref: " + quoted(ref) + " is inside DO_WHILE "
                  + quoted(info->loop->task_reference_name)
                  + ": which iteration to skip would be ambiguous");
  const auto type = info->task->type;
  if (type == task_type::fork_join || type == task_type::fork_join_dynamic)
    return refuse("task_ref: " + quoted(ref) + " is a " + std::string(to_string(type))
                  + ": its JOIN would wait for branches that never run; skip their tasks");
  for (const auto& e : snap.tasks)
    if (e.id.ref == ref)
      return refuse("task_ref: " + quoted(ref) + " has already been scheduled ("
                    + std::string(to_string(e.status)) + "): only a task not reached yet "
                    + "can be skipped");
  edit e;
  scheduled_task st;
  st.id = {std::string(ref), 0, 0};
  st.type = type == task_type::dynamic ? task_type::simple : type;
  st.task_def_name = info->task->name;
  st.status = task_status::skipped;
  st.input = input ? std::move(*input) : boost::json::object{};
  st.output = output ? std::move(*output) : boost::json::object{};
  st.reason_for_incompletion = "skipped by an operator";
  e.events.push_back(task_event(st.id, st.type, task_status::skipped, st.reason_for_incompletion));
  e.schedule.push_back(std::move(st));
  return {std::move(e), {}};
}

} // namespace nf::flow
