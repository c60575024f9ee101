#include "flow/decide.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "flow/ascii.hpp"
#include "flow/conductor_fields.hpp"
#include "flow/conductor_tasks.hpp"
#include "flow/def_index.hpp"
#include "flow/effective_def.hpp"
#include "flow/expression.hpp"
#include "flow/loop_frame.hpp"
#include "flow/loop_inputs.hpp"
#include "flow/json_read.hpp"
#include "flow/own_task_id.hpp"
#include "flow/problem.hpp"
#include "flow/retry.hpp"
#include "flow/safe_expr.hpp"
#include "flow/system_tasks.hpp"

namespace nf::flow {

namespace {

enum class outcome { pending, done, failed };

// One execution as this evaluation sees it: a snapshot row, or a row this
// decision inserts, with whatever this decision already changed on it.
struct row {
  task_identity id;
  task_type type;
  task_status status;
  const task_execution* src = nullptr;  // null when inserted by this decision
  int sched = -1;                       // index into decision::schedule
  int update = -1;                      // last index into decision::updates with an output
  std::string base;                     // the definition's ref (stored refs carry outer iterations)
  std::vector<std::int32_t> path;       // its loop frame: the iterations of its loops
};

struct key {
  std::string ref;
  std::int32_t iteration;
};

struct key_view {
  std::string_view ref;
  std::int32_t iteration;
};

struct key_less {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    int c = std::string_view(a.ref).compare(std::string_view(b.ref));
    return c != 0 ? c < 0 : a.iteration < b.iteration;
  }
};

bool retriable_type(task_type t) {
  return is_queued(t) || t == task_type::sub_workflow;
}

class evaluation {
 public:
  evaluation(const workflow_def& def, const task_def_map& defs, const snapshot& snap, time_ms now,
             const cached_outputs* cached, const task_id_source* ids)
    : def_(def), defs_(defs), snap_(snap), now_(now), index_(def), cached_(cached), ids_(ids) {
  }

  decision run() {
    if (snap_.status != workflow_status::running)
      return std::move(out_);
    load_rows();
    if (def_.timeout_seconds > 0) {
      time_ms deadline = snap_.start_time + def_.timeout_seconds * 1000;
      if (snap_.tasks.empty())
        out_.arm.push_back({timer_kind::workflow_timeout, {}, deadline});
      if (now_ >= deadline) {
        std::string reason = "workflow timed out after timeoutSeconds ("
                             + std::to_string(def_.timeout_seconds) + ")";
        if (def_.policy == timeout_policy::alert_only) {
          add_event("workflow.timeout_alert", "workflow.timeout_alert", {{"reason", reason}});
        } else {
          end_workflow(workflow_status::timed_out, reason, {}, {});
          return std::move(out_);
        }
      }
    }
    auto result = block(def_.tasks, loop_frame{});
    if (ended_)
      return std::move(out_);
    if (result == outcome::failed)
      end_workflow(workflow_status::failed, failure_reason_, {}, failed_ref_);
    else if (result == outcome::done && !any_active() && failed_permissively())
      end_workflow(workflow_status::failed, permissive_reason_, {}, permissive_ref_);
    else if (result == outcome::done && !any_active()) {
      std::string error;
      auto output = workflow_output(&error);
      if (error.empty())
        end_workflow(workflow_status::completed, {}, std::move(output), {});
      else
        end_workflow(workflow_status::failed, "outputParameters: " + error, {}, {});
    }
    return std::move(out_);
  }

 private:
  const workflow_def& def_;
  const task_def_map& defs_;
  const snapshot& snap_;
  const time_ms now_;
  const def_index index_;
  const cached_outputs* cached_;
  const task_id_source* ids_;
  decision out_;
  std::vector<row> rows_;
  std::map<key, std::vector<int>, key_less> by_key_;  // row indices, by attempt
  std::map<key, std::int32_t, key_less> max_iteration_;  // by loop execution (ref, iteration)
  std::map<std::string, std::vector<int>, std::less<>> by_base_;  // rows by the definition's ref
  boost::json::object variables_;
  bool variables_changed_ = false;
  bool ended_ = false;
  int steps_ = 0;
  std::string failure_reason_;
  std::string failed_ref_;
  std::map<const workflow_task*, std::vector<outcome>> branch_outcomes_;
  std::map<int, dynamic_fork> dynamic_;  // by fork row
  std::set<std::int64_t> consumed_signals_;
  bool signals_loaded_ = false;
  std::deque<task_def> fallback_defs_;
  std::map<const workflow_task*, task_def> effective_defs_;  // tasks with overrides
  // Permissive tasks that failed for good: the workflow goes on, and fails at its end.
  std::string permissive_reason_;
  std::string permissive_ref_;
  std::deque<workflow_task> dynamic_tasks_;  // DYNAMIC tasks as the SIMPLE tasks they run as

  // -- rows -----------------------------------------------------------------

  void load_rows() {
    rows_.reserve(snap_.tasks.size() + 8);
    for (const auto& e : snap_.tasks)
      add_row({e.id, e.type, e.status, &e, -1, -1, {}, {}});
    for (auto& [k, list] : by_key_)
      std::sort(list.begin(), list.end(), [&](int a, int b) {
        return rows_[static_cast<std::size_t>(a)].id.attempt
               < rows_[static_cast<std::size_t>(b)].id.attempt;
      });
  }

  int add_row(row r) {
    int i = static_cast<int>(rows_.size());
    auto [it, fresh] = by_key_.try_emplace(key{r.id.ref, r.id.iteration});
    it->second.push_back(i);
    auto split = split_stored_ref(r.id.ref, index_);
    auto frame = frame_of(split, r.id.iteration);
    r.base = split.info != nullptr ? split.info->task->task_reference_name : r.id.ref;
    r.path = frame.path();
    by_base_[r.base].push_back(i);
    if (split.info != nullptr && split.info->loop != nullptr) {
      // The loop runs in the frame around its body's.
      auto around = frame.outer(split.info->depth - 1);
      auto& m = max_iteration_[key{around.ref(split.info->loop->task_reference_name),
                                   around.iteration()}];
      m = std::max(m, r.id.iteration);
    }
    rows_.push_back(std::move(r));
    return i;
  }

  row& at(int i) { return rows_[static_cast<std::size_t>(i)]; }

  int latest(std::string_view ref, std::int32_t iteration) const {
    auto it = by_key_.find(key_view{ref, iteration});
    return it == by_key_.end() || it->second.empty() ? -1 : it->second.back();
  }

  int first_attempt(std::string_view ref, std::int32_t iteration) const {
    auto it = by_key_.find(key_view{ref, iteration});
    return it == by_key_.end() || it->second.empty() ? -1 : it->second.front();
  }

  int latest(std::string_view base, const loop_frame& fr) const {
    return fr.suffix().empty() ? latest(base, fr.iteration())
                               : latest(fr.ref(base), fr.iteration());
  }

  int first_attempt(std::string_view base, const loop_frame& fr) const {
    return fr.suffix().empty() ? first_attempt(base, fr.iteration())
                               : first_attempt(fr.ref(base), fr.iteration());
  }

  // The execution of `ref` an expression of a task in frame `fr` sees: the one
  // in the same iteration of the innermost loop holding both, else the latest.
  int visible_row(std::string_view ref, const loop_frame& fr) const {
    if (int r = latest(ref, fr); r >= 0)
      return r;
    for (std::size_t d = fr.path().size(); d-- > 0;)
      if (int r = latest(ref, fr.outer(d)); r >= 0)
        return r;
    auto it = by_base_.find(ref);
    if (it == by_base_.end())
      return -1;
    int best = -1;
    for (int i : it->second) {
      const row& x = rows_[static_cast<std::size_t>(i)];
      if (best < 0)
        best = i;
      const row& b = rows_[static_cast<std::size_t>(best)];
      if (std::tie(x.path, x.id.attempt) > std::tie(b.path, b.id.attempt))
        best = i;
    }
    return best;
  }

  // The row's id, when known: a stored row's, or the one this decision made for it.
  const std::string& task_id_of(const row& r) const {
    return r.src != nullptr ? r.src->task_id
                            : out_.schedule[static_cast<std::size_t>(r.sched)].task_id;
  }

  const boost::json::object& input_of(const row& r) const {
    return r.src != nullptr ? r.src->input
                            : out_.schedule[static_cast<std::size_t>(r.sched)].input;
  }

  const boost::json::object& output_of(const row& r) const {
    if (r.update >= 0)
      return *out_.updates[static_cast<std::size_t>(r.update)].output;
    return r.src != nullptr ? r.src->output
                            : out_.schedule[static_cast<std::size_t>(r.sched)].output;
  }

  std::string reason_of(const row& r) const {
    for (auto it = out_.updates.rbegin(); it != out_.updates.rend(); ++it)
      if (it->id == r.id)
        return it->reason_for_incompletion;
    return r.src != nullptr ? r.src->reason_for_incompletion
                            : out_.schedule[static_cast<std::size_t>(r.sched)]
                                .reason_for_incompletion;
  }

  time_ms scheduled_time_of(const row& r) const {
    return r.src != nullptr ? r.src->scheduled_time : now_;
  }

  // "task "ref" ended FAILED: why", what a workflow failed by this execution says.
  std::string ended_reason(const row& x) const {
    std::string reason = "task " + quoted(x.id.ref) + " ended " + std::string(to_string(x.status));
    if (auto why = reason_of(x); !why.empty())
      reason += ": " + why;
    return reason;
  }

  // Whether a permissive task failed for good: the workflow then fails at its end, also
  // when the failure is in a loop iteration this evaluation did not walk again.
  bool failed_permissively() {
    if (!permissive_ref_.empty())
      return true;
    for (const auto& [k, list] : by_key_) {
      if (list.empty())
        continue;
      const row& x = rows_[static_cast<std::size_t>(list.back())];
      const auto* info = index_.find(x.base);
      bool failed = x.status == task_status::failed
                    || x.status == task_status::failed_with_terminal_error
                    || x.status == task_status::timed_out;
      if (!failed || info == nullptr || !info->task->permissive || info->task->optional)
        continue;
      permissive_ref_ = x.id.ref;
      permissive_reason_ = ended_reason(x);
      return true;
    }
    return false;
  }

  bool any_active() const {
    for (const auto& [k, list] : by_key_)
      if (!list.empty() && !is_terminal(rows_[static_cast<std::size_t>(list.back())].status))
        return true;
    return false;
  }

  // -- output: events, updates, timers --------------------------------------

  void add_event(std::string type, std::string key, boost::json::object payload) {
    out_.events.push_back({std::move(type), std::move(key), std::move(payload)});
  }

  void task_event(const task_identity& id, task_type type, task_status status,
                  const std::string& reason) {
    out_.events.push_back(flow::task_event(id, type, status, reason));
  }

  void update(int i, task_status status, std::optional<boost::json::object> output,
              std::string reason, bool emit_event = true) {
    row& r = at(i);
    r.status = status;
    if (emit_event)
      task_event(r.id, r.type, status, reason);
    out_.updates.push_back({r.id, status, std::move(output), std::move(reason)});
    if (out_.updates.back().output)
      r.update = static_cast<int>(out_.updates.size()) - 1;
    if (is_terminal(status))
      cancel_timers(r);
  }

  void cancel_timers(const row& r) {
    switch (r.type) {
      case task_type::simple:
      case task_type::http:
      case task_type::inline_:
      case task_type::lambda:
      case task_type::json_jq_transform:
      case task_type::llm_store_embeddings:
      case task_type::llm_search_embeddings:
        out_.cancel.push_back({timer_kind::schedule_to_start, r.id});
        out_.cancel.push_back({timer_kind::start_to_close, r.id});
        out_.cancel.push_back({timer_kind::delay, r.id});
        break;
      case task_type::wait: out_.cancel.push_back({timer_kind::wait, r.id}); break;
      default: break;
    }
  }

  const task_def* def_for(const workflow_task& t) {
    auto it = defs_.find(t.name);
    if (has_overrides(t)) {
      auto e = effective_defs_.find(&t);
      if (e == effective_defs_.end())
        e = effective_defs_
              .emplace(&t, effective_def(t, it != defs_.end() ? &it->second : nullptr))
              .first;
      return &e->second;
    }
    if (it != defs_.end())
      return &it->second;
    fallback_defs_.push_back(task_def::unregistered(t.name));
    return &fallback_defs_.back();
  }

  // -- expressions ----------------------------------------------------------

  scope scope_for(const loop_frame& fr) const {
    scope s;
    s.workflow_id = snap_.workflow_id;
    s.workflow_type = def_.name;
    s.workflow_version = def_.version;
    s.correlation_id = snap_.correlation_id;
    s.input = &snap_.input;
    s.variables = variables_changed_ ? &variables_ : &snap_.variables;
    // A scope lives only in the expression that resolves with it, within `fr`'s lifetime:
    // the frame is held by pointer, so neither function allocates.
    const loop_frame* frame = &fr;
    s.task = [this, frame](std::string_view ref, bool output) -> const boost::json::object* {
      int r = visible_row(ref, *frame);
      if (r < 0)
        return nullptr;
      const row& x = rows_[static_cast<std::size_t>(r)];
      return output ? &output_of(x) : &input_of(x);
    };
    s.task_field = [this, frame](std::string_view ref, task_field_name field) {
      int r = visible_row(ref, *frame);
      if (r < 0)
        return boost::json::value(nullptr);
      return task_field_of(rows_[static_cast<std::size_t>(r)], field);
    };
    return s;
  }

  // Conductor's task fields of an execution as this decision sees it: a row it inserted was
  // scheduled now; one it ended, ended now.
  boost::json::value task_field_of(const row& x, task_field_name field) const {
    const std::string& def_name = x.src != nullptr
                                    ? x.src->task_def_name
                                    : out_.schedule[static_cast<std::size_t>(x.sched)].task_def_name;
    switch (field) {
      case task_field_name::status: return boost::json::string(to_string(x.status));
      case task_field_name::reason_for_incompletion: {
        auto why = reason_of(x);
        return why.empty() ? boost::json::value(nullptr) : boost::json::value(why);
      }
      case task_field_name::retry_count: return x.id.attempt;
      case task_field_name::iteration: return x.id.iteration;
      case task_field_name::task_type:
        return boost::json::string(x.type == task_type::simple ? std::string_view(def_name)
                                                               : to_string(x.type));
      case task_field_name::task_def_name: return boost::json::string(def_name);
      case task_field_name::reference_task_name: return boost::json::string(x.id.ref);
      case task_field_name::scheduled_time: return scheduled_time_of(x);
      case task_field_name::start_time: return x.src != nullptr ? x.src->start_time : 0;
      case task_field_name::end_time:
        if (!is_terminal(x.status))
          return 0;
        return x.src != nullptr && x.src->end_time != 0 ? x.src->end_time : now_;
      case task_field_name::poll_count: return x.src != nullptr ? x.src->poll_count : 0;
      case task_field_name::workflow_instance_id: return boost::json::string(snap_.workflow_id);
      case task_field_name::correlation_id:
        return snap_.correlation_id.empty() ? boost::json::value(nullptr)
                                            : boost::json::value(snap_.correlation_id);
    }
    return nullptr;
  }

  // `error`: the first ${…} whose function failed (the task then fails with it).
  // `own_id`: the id made for the task when its input names it (${CPEWF_TASK_ID}).
  boost::json::object resolve_input(const workflow_task& t, const loop_frame& fr,
                                    const task_def* d, const boost::json::object* extra,
                                    std::string& error, std::string& own_id) {
    auto s = scope_for(fr);
    if (ids_ != nullptr && *ids_)
      s.own_task_id = [this, &own_id]() -> std::string_view {
        if (own_id.empty())
          own_id = (*ids_)();
        return own_id;
      };
    auto input = resolve(t.input_parameters, s, &error);
    if (t.type == task_type::do_while && !t.items.is_null())
      input["items"] = resolve(t.items, s, &error);
    if (extra != nullptr)
      for (const auto& kv : *extra)
        input[kv.key()] = kv.value();
    if (t.type == task_type::simple && d != nullptr)
      for (const auto& kv : d->input_template)
        if (!input.contains(kv.key()))
          input.emplace(kv.key(), kv.value());
    return input;
  }

  // `error`, when given: the first ${…} whose function failed.
  boost::json::object workflow_output(std::string* error = nullptr) {
    if (!def_.output_parameters.empty())
      return resolve(def_.output_parameters, scope_for(loop_frame{}), error);
    int r = def_.tasks.empty() ? -1 : latest(def_.tasks.back().task_reference_name, 0);
    return r < 0 ? boost::json::object{} : output_of(at(r));
  }

  // -- ending the workflow --------------------------------------------------

  void end_workflow(workflow_status status, std::string reason, boost::json::object output,
                    const std::string& failed_ref) {
    ended_ = true;
    for (auto& [k, list] : by_key_)
      if (!list.empty() && !is_terminal(at(list.back()).status))
        update(list.back(), task_status::canceled, std::nullopt,
               "workflow ended " + std::string(to_string(status)));
    if (def_.timeout_seconds > 0)
      out_.cancel.push_back({timer_kind::workflow_timeout, {}});
    std::string name = "workflow." + ascii_lower(to_string(status));
    boost::json::object payload{{"status", to_string(status)}};
    if (!reason.empty())
      payload["reason"] = reason;
    add_event(name, name, std::move(payload));
    if (def_.status_listener_enabled)
      add_event("workflow.status_listener", "workflow.status_listener",
                status_summary(status, reason, output));
    if ((status == workflow_status::failed || status == workflow_status::timed_out)
        && !def_.failure_workflow.empty()) {
      // Conductor's shape: the failed workflow's input at the top, then what says why
      // (over an input key of the same name); nodeflow adds its type, version and the
      // failed task's reference, and the input once more as it was.
      boost::json::object input = snap_.input;
      input["workflowId"] = snap_.workflow_id;
      input["workflowType"] = def_.name;
      input["version"] = def_.version;
      input["reason"] = reason;
      input["failureStatus"] = to_string(status);
      input["failedTaskRef"] = failed_ref;
      input["workflowInput"] = snap_.input;
      out_.failure_workflow = failure_workflow_start{def_.failure_workflow, std::move(input)};
    }
    if (status == workflow_status::failed || status == workflow_status::timed_out)
      out_.failed_task_ref = failed_ref;
    out_.status = status;
    out_.output = std::move(output);
    out_.reason_for_incompletion = std::move(reason);
  }

  // What Conductor's workflow status listener is handed: a summary of the ended run.
  boost::json::object status_summary(workflow_status status, const std::string& reason,
                                     const boost::json::object& output) const {
    boost::json::object summary{
      {"workflowType", def_.name},
      {"version", def_.version},
      {"status", to_string(status)},
      {"input", snap_.input},
      {"output", output},
    };
    if (!reason.empty())
      summary["reasonForIncompletion"] = reason;
    return summary;
  }

  // -- evaluation -----------------------------------------------------------

  outcome block(const std::vector<workflow_task>& tasks, const loop_frame& fr) {
    const workflow_task* prev = nullptr;
    for (const auto& t : tasks) {
      auto o = task(t, fr, prev, nullptr);
      if (ended_)
        return outcome::pending;
      if (o != outcome::done)
        return o;
      prev = &t;
    }
    return outcome::done;
  }

  bool spend_step() {
    if (steps_ >= max_inline_steps_per_decide) {
      out_.decide_again = true;
      return false;
    }
    ++steps_;
    return true;
  }

  outcome task(const workflow_task& written, const loop_frame& fr, const workflow_task* prev,
               const boost::json::object* extra) {
    const workflow_task& t = written.type == task_type::dynamic
                               ? as_dynamic(written, fr, extra)
                               : written;
    int r = latest(t.task_reference_name, fr);
    if (r < 0) {
      if (is_inline(t.type) && !spend_step())
        return outcome::pending;
      const task_def* d = def_for(t);
      std::string error, own_id;
      auto input = resolve_input(t, fr, d, extra, error, own_id);
      r = start(t, fr, fr.id(t.task_reference_name), std::move(input), t.start_delay * 1000, d,
                error, std::move(own_id));
      if (ended_)
        return outcome::pending;
    }
    return settle(t, r, fr, prev);
  }

  // DYNAMIC runs as the SIMPLE task its input names (queue, definition, retries): the
  // name is read once, when it is scheduled, and kept in the row's task definition name.
  // An unusable name fails the DYNAMIC task itself.
  const workflow_task& as_dynamic(const workflow_task& t, const loop_frame& fr,
                                  const boost::json::object* extra) {
    std::string name;
    if (int r = latest(t.task_reference_name, fr); r >= 0) {
      const row& x = at(r);
      if (x.type == task_type::dynamic)
        return t;
      name = x.src != nullptr ? x.src->task_def_name
                              : out_.schedule[static_cast<std::size_t>(x.sched)].task_def_name;
    } else {
      std::string error, own_id;
      auto input = resolve_input(t, fr, nullptr, extra, error, own_id);
      if (error.empty())
        name = dynamic_task_name(t, input, error);
      else
        error = "inputParameters: " + error;
      if (name.empty()) {
        scheduled_task st;
        st.id = fr.id(t.task_reference_name);
        st.type = task_type::dynamic;
        st.task_def_name = t.name;
        st.input = std::move(input);
        st.task_id = std::move(own_id);
        st.status = task_status::failed;
        st.reason_for_incompletion = std::move(error);
        task_event(st.id, st.type, st.status, st.reason_for_incompletion);
        out_.schedule.push_back(std::move(st));
        add_row({out_.schedule.back().id, task_type::dynamic, task_status::failed, nullptr,
                 static_cast<int>(out_.schedule.size()) - 1, -1});
        return t;
      }
    }
    auto& simple = dynamic_tasks_.emplace_back(t);
    simple.type = task_type::simple;
    simple.name = std::move(name);
    simple.dynamic_task_name_param.clear();
    return simple;
  }

  outcome settle(const workflow_task& t, int r, const loop_frame& fr,
                 const workflow_task* prev) {
    task_status s = at(r).status;
    if (!is_terminal(s))
      return active(t, r, fr, prev);
    if (is_successful(s))
      return finished(t, r, fr);
    return unsuccessful(t, r, fr);
  }

  // Inserts a new execution; inline types are executed on the spot. A task whose input
  // failed to resolve (`input_error`) is inserted FAILED_WITH_TERMINAL_ERROR: a retry
  // would resolve the same input again.
  int start(const workflow_task& t, const loop_frame& fr, task_identity id,
            boost::json::object input, std::int64_t delay_ms, const task_def* d,
            const std::string& input_error = {}, std::string task_id = {}) {
    scheduled_task st;
    st.id = std::move(id);
    st.task_id = std::move(task_id);
    st.type = t.type;
    st.task_def_name = t.name;
    st.start_delay_ms = delay_ms;
    const bool worker = is_queued(t.type);
    if (t.type == task_type::simple)
      st.queue = queue_of(t, d);
    if (t.type == task_type::simple && t.cache_ttl_seconds > 0) {
      st.cache_key = cache_key_of(t.cache_key, input);
      st.cache_ttl_seconds = t.cache_ttl_seconds;
    } else if (t.type == task_type::simple && d->cache_ttl_seconds > 0
               && !d->cache_key.empty()) {
      auto key = resolve(boost::json::value(boost::json::string(d->cache_key)),
                         scope_for(fr));
      st.cache_key = key.is_string() ? std::string(key.get_string()) : case_label(key);
      st.cache_ttl_seconds = d->cache_ttl_seconds;
    }
    st.input = std::move(input);
    std::optional<termination> term;
    const boost::json::object* hit = input_error.empty() ? cached_output(st) : nullptr;
    if (!input_error.empty()) {
      st.status = task_status::failed_with_terminal_error;
      st.reason_for_incompletion = "inputParameters: " + input_error;
      st.cache_key.clear();
    } else if (hit != nullptr) {
      // No worker runs it: no queue row, no timers. The row keeps no key, as its output
      // is not to be written back to the cache it came from.
      st.status = task_status::completed;
      st.output = *hit;
    } else {
      if (worker) {
        if (d->poll_timeout_seconds > 0)
          out_.arm.push_back({timer_kind::schedule_to_start, st.id,
                              now_ + delay_ms + d->poll_timeout_seconds * 1000});
        if (d->total_timeout_seconds > 0 && st.id.attempt == 0)
          out_.arm.push_back(
            {timer_kind::task_timeout, st.id, now_ + d->total_timeout_seconds * 1000});
      }
      if (delay_ms > 0 && worker)
        out_.arm.push_back({timer_kind::delay, st.id, now_ + delay_ms});
      switch (t.type) {
        case task_type::sub_workflow:
          out_.sub_workflows.push_back({st.id, t.sub_workflow_name, t.sub_workflow_version,
                                        st.input});
          break;
        case task_type::wait: {
          st.status = task_status::in_progress;
          auto plan = plan_wait(st.input, now_);
          if (!plan.error.empty()) {
            st.status = task_status::failed;
            st.reason_for_incompletion = plan.error;
          } else if (plan.wake) {
            out_.arm.push_back({timer_kind::wait, st.id, *plan.wake});
          }
          break;
        }
        case task_type::join:
        case task_type::human:
        case task_type::exclusive_join: st.status = task_status::in_progress; break;
        case task_type::start_workflow: {
          auto plan = plan_start_workflow(st.input);
          if (!plan.error.empty()) {
            st.status = task_status::failed;
            st.reason_for_incompletion = std::move(plan.error);
          } else {
            st.status = task_status::in_progress;
            out_.sub_workflows.push_back(detached_start(st.id, std::move(plan),
                                                        snap_.correlation_id));
          }
          break;
        }
        case task_type::do_while: {
          // The body may read ${loop.output.iteration} (and the item) from its first
          // iteration on. An empty list runs no iteration at all.
          std::string error;
          const auto* items = iterates_items(t) ? loop_items(st.input, error) : nullptr;
          if (error.empty())
            keep_last_n(st.input, error);
          if (!error.empty()) {
            st.status = task_status::failed;
            st.reason_for_incompletion = std::move(error);
          } else if (items != nullptr && items->empty()) {
            st.status = task_status::completed;
            st.output["iteration"] = 0;
          } else {
            st.status = task_status::in_progress;
            st.output = iteration_output(items, 1);
          }
          break;
        }
        case task_type::terminate: {
          term = run_terminate(st.input);
          st.status = term->task.status;
          st.output = std::move(term->task.output);
          st.reason_for_incompletion = std::move(term->task.reason);
          break;
        }
        default:
          if (is_inline(t.type)) {
            auto res = execute_inline(t, fr, st.input);
            st.status = res.status;
            st.output = std::move(res.output);
            st.reason_for_incompletion = std::move(res.reason);
            // Conductor's DECISION also records the case it picked in its input.
            if (t.type == task_type::decision && st.status == task_status::completed)
              st.input["case"] = st.output.at("caseOutput").at(0);
          }
          break;
      }
    }
    task_event(st.id, st.type, st.status, st.reason_for_incompletion);
    if (hit != nullptr) {
      auto& payload = out_.events.back().payload;
      payload["cached"] = true;
      payload["cacheKey"] = st.cache_key;
      st.cache_key.clear();
      st.cache_ttl_seconds = 0;
    }
    if (st.type == task_type::event && st.status == task_status::completed)
      publish(st.id, st.output);
    out_.schedule.push_back(std::move(st));
    const auto& added = out_.schedule.back();
    int r = add_row({added.id, added.type, added.status, nullptr,
                     static_cast<int>(out_.schedule.size()) - 1, -1, {}, {}});
    if (term && term->task.status == task_status::completed)
      end_workflow(term->status, term->reason,
                   term->workflow_output ? *term->workflow_output : workflow_output(),
                   t.task_reference_name);
    return r;
  }

  // The output the engine found in the cache for `st`'s key, if any (decide()'s `cached`).
  const boost::json::object* cached_output(const scheduled_task& st) const {
    if (cached_ == nullptr || st.cache_key.empty())
      return nullptr;
    auto it = cached_->find({st.task_def_name, st.cache_key});
    return it == cached_->end() ? nullptr : &it->second;
  }

  task_result execute_inline(const workflow_task& t, const loop_frame& fr,
                             const boost::json::object& input) {
    switch (t.type) {
      case task_type::switch_: return run_switch(t, input);
      case task_type::decision: return run_decision(t, input);
      case task_type::noop: return {};
      case task_type::event: {
        auto sink = resolve(boost::json::value(boost::json::string(t.sink)),
                            scope_for(fr));
        if (!sink.is_string())
          return {task_status::failed, {}, "sink: expected a string, got " + describe(sink)};
        auto with_sink = input;  // Conductor hands the sink to the task in its input
        with_sink["sink"] = sink;
        return run_event(sink.get_string(), with_sink,
                         {snap_.workflow_id, def_.name, def_.version, snap_.correlation_id,
                          t.task_reference_name});
      }
      case task_type::json_transform: return run_json_transform(input);
      case task_type::set_variable:
        if (!variables_changed_) {
          variables_ = snap_.variables;
          variables_changed_ = true;
        }
        for (const auto& kv : input) {
          variables_[kv.key()] = kv.value();
          out_.variables[kv.key()] = kv.value();
        }
        return {};
      case task_type::fork_join_dynamic: {
        // Checked again when the fork is reached; here only whether it can run.
        auto fork = read_dynamic_fork(t, input, index_);
        if (!fork.error.empty())
          return {task_status::failed, {}, fork.error};
        boost::json::array refs;
        for (const auto& c : fork.tasks)
          refs.emplace_back(c.task_reference_name);
        return {task_status::completed, {{"forkedTasks", std::move(refs)}}, {}};
      }
      default: return {};  // FORK_JOIN: its branches are evaluated by finished()
    }
  }

  outcome active(const workflow_task& t, int r, const loop_frame& fr,
                 const workflow_task* prev) {
    switch (t.type) {
      case task_type::wait: return active_wait(t, r, fr);
      case task_type::join: return active_join(t, r, fr, prev);
      case task_type::do_while: return loop(t, r, fr);
      case task_type::simple:
      case task_type::http:
      case task_type::inline_:
      case task_type::lambda:
      case task_type::json_jq_transform:
      case task_type::llm_store_embeddings:
      case task_type::llm_search_embeddings: return active_worker(t, r, fr, prev);
      case task_type::sub_workflow: return outcome::pending;
      case task_type::human: return active_human(t, r, fr);
      case task_type::exclusive_join: return active_exclusive_join(t, r, fr);
      case task_type::start_workflow:
        // Left SCHEDULED by a retry or rerun, whose edit asked for the start: only an
        // unusable request is left to fail here.
        if (at(r).status == task_status::scheduled) {
          auto plan = plan_start_workflow(input_of(at(r)));
          if (!plan.error.empty()) {
            update(r, task_status::failed, std::nullopt, plan.error);
            return unsuccessful(t, r, fr);
          }
        }
        return outcome::pending;
      default: break;
    }
    // An inline task left SCHEDULED (by retry or rerun): execute it now.
    if (!spend_step())
      return outcome::pending;
    if (t.type == task_type::terminate) {
      auto term = run_terminate(input_of(at(r)));
      update(r, term.task.status, std::move(term.task.output), term.task.reason);
      if (term.task.status == task_status::completed) {
        end_workflow(term.status, term.reason,
                     term.workflow_output ? *term.workflow_output : workflow_output(),
                     t.task_reference_name);
        return outcome::pending;
      }
    } else {
      auto res = execute_inline(t, fr, input_of(at(r)));
      bool published = t.type == task_type::event && res.status == task_status::completed;
      auto output = published ? res.output : boost::json::object{};
      update(r, res.status, std::move(res.output), res.reason);
      if (published)
        publish(at(r).id, output);
    }
    return settle(t, r, fr, prev);
  }

  outcome active_worker(const workflow_task& t, int r, const loop_frame& fr,
                        const workflow_task* prev) {
    const row& x = at(r);
    if (x.src == nullptr)
      return outcome::pending;  // inserted by this decision: no deadline can have passed
    const task_def* d = def_for(t);
    int first = first_attempt(t.task_reference_name, fr);
    auto dl = next_deadline(*d, *x.src, scheduled_time_of(at(first)));
    if (!dl || now_ < dl->at)
      return outcome::pending;
    std::string field(field_of(dl->kind));
    std::string reason = field + " exceeded";
    if (d->policy == timeout_policy::alert_only && dl->kind != deadline_kind::total) {
      add_event("task.timeout_alert", "task.timeout_alert/" + to_string(x.id) + '/' + field,
                {{"ref", x.id.ref},
                 {"iteration", x.id.iteration},
                 {"attempt", x.id.attempt},
                 {"reason", reason}});
      return outcome::pending;
    }
    update(r, task_status::timed_out, std::nullopt, reason);
    return settle(t, r, fr, prev);
  }

  outcome active_wait(const workflow_task& t, int r, const loop_frame& fr) {
    auto plan = plan_wait(input_of(at(r)), scheduled_time_of(at(r)));
    if (at(r).status == task_status::scheduled) {  // a retry left it for us to start
      if (!plan.error.empty()) {
        update(r, task_status::failed, std::nullopt, plan.error);
        return unsuccessful(t, r, fr);
      }
      update(r, task_status::in_progress, std::nullopt, {});
      if (plan.wake)
        out_.arm.push_back({timer_kind::wait, at(r).id, *plan.wake});
    }
    if (auto o = by_reference(t, r, fr))
      return *o;
    if (plan.wake && now_ >= *plan.wake) {
      update(r, task_status::completed, boost::json::object{}, {});
      return finished(t, r, fr);
    }
    if (plan.signal.empty())
      return outcome::pending;
    load_consumed_signals();
    for (const auto& s : snap_.signals) {
      if (!s.task_ref.empty() || s.name != plan.signal || consumed_signals_.count(s.seq) != 0)
        continue;
      consumed_signals_.insert(s.seq);
      update(r, task_status::completed,
             boost::json::object{{"signal", s.name}, {"signalSeq", s.seq}, {"payload", s.payload}},
             {});
      return finished(t, r, fr);
    }
    return outcome::pending;
  }

  // HUMAN: in progress until completed or failed through the API by its reference name.
  outcome active_human(const workflow_task& t, int r, const loop_frame& fr) {
    if (at(r).status == task_status::scheduled)  // a retry left it for us to start
      update(r, task_status::in_progress, std::nullopt, {});
    if (auto o = by_reference(t, r, fr))
      return *o;
    return outcome::pending;
  }

  // A WAIT or HUMAN completed or failed through the API by its reference name: the
  // update arrives as a signal addressed to the ref; its output is the update's body.
  std::optional<outcome> by_reference(const workflow_task& t, int r, const loop_frame& fr) {
    const signal* s = signal_to_ref(t.task_reference_name, r);
    if (s == nullptr)
      return std::nullopt;
    consumed_signals_.insert(s->seq);
    boost::json::object output;
    if (const auto* o = s->payload.if_object())
      output = *o;
    output["signalSeq"] = s->seq;
    if (s->status == "COMPLETED") {
      update(r, task_status::completed, std::move(output), {});
      return finished(t, r, fr);
    }
    auto status = s->status == "FAILED" ? task_status::failed
                                        : task_status::failed_with_terminal_error;
    update(r, status, std::move(output), "set to " + s->status + " by reference name");
    return unsuccessful(t, r, fr);
  }

  // EXCLUSIVE_JOIN, as Conductor's: the first task of joinOn that was scheduled (not
  // skipped) decides; when it has not ended, or none was, the first scheduled task of
  // defaultExclusiveJoinTask that has ended does. It ends as that task ended, with its
  // output. Reached only once the tasks before it are done, so when none of them ran it
  // fails instead of waiting for nothing.
  outcome active_exclusive_join(const workflow_task& t, int r, const loop_frame& fr) {
    auto pick = [&](const std::vector<std::string>& refs) {
      for (const auto& ref : refs)
        if (int x = latest(ref, fr); x >= 0 && at(x).status != task_status::skipped)
          return x;
      return -1;
    };
    int x = pick(t.join_on);
    if (x < 0 || !is_terminal(at(x).status)) {
      int d = pick(t.default_exclusive_join_task);
      if (d >= 0 && (x < 0 || is_terminal(at(d).status)))
        x = d;
    }
    if (x < 0) {
      update(r, task_status::failed, std::nullopt,
             "none of the tasks in joinOn or defaultExclusiveJoinTask ran");
      return unsuccessful(t, r, fr);
    }
    if (!is_terminal(at(x).status))
      return outcome::pending;
    if (!is_successful(at(x).status)) {
      update(r, task_status::failed, std::nullopt, reason_of(at(x)));
      return unsuccessful(t, r, fr);
    }
    update(r, task_status::completed, output_of(at(x)), {});
    return outcome::done;
  }

  // EVENT: the message goes to the outbox as "event.published" (webhook sinks receive
  // it); the task's TASK_COMPLETED history entry names the queue and carries the message,
  // so a workflow's event stream shows it too.
  void publish(const task_identity& id, const boost::json::object& output) {
    boost::json::object message = output;
    auto queue = message.contains("event_produced") ? message["event_produced"]
                                                    : boost::json::value{};
    message.erase("event_produced");
    auto completed_key = "task.completed/" + to_string(id);
    for (auto it = out_.events.rbegin(); it != out_.events.rend(); ++it)
      if (it->key == completed_key) {
        it->payload["event_produced"] = queue;
        it->payload["message"] = message;
        break;
      }
    add_event("event.published", "event.published/" + to_string(id),
              {{"ref", id.ref},
               {"iteration", id.iteration},
               {"attempt", id.attempt},
               {"queue", queue},
               {"message", std::move(message)}});
  }

  // The first unconsumed signal addressed to this WAIT by its ref, received after the
  // attempt was scheduled (one sent to an earlier attempt or loop iteration is not its).
  const signal* signal_to_ref(const std::string& ref, int r) {
    load_consumed_signals();
    for (const auto& s : snap_.signals)
      if ((s.task_ref == ref || s.task_ref == at(r).id.ref)
          && consumed_signals_.count(s.seq) == 0
          && s.received_time >= scheduled_time_of(at(r)))
        return &s;
    return nullptr;
  }

  void load_consumed_signals() {
    if (signals_loaded_)
      return;
    signals_loaded_ = true;
    for (const auto& x : rows_) {
      if (x.type != task_type::wait && x.type != task_type::human)
        continue;
      const auto* seq = output_of(x).if_contains("signalSeq");
      if (seq != nullptr && seq->is_int64())
        consumed_signals_.insert(seq->get_int64());
    }
  }

  // The refs a JOIN waits for, and whether each may be skipped because the
  // branch holding it is finished without it (a SWITCH took another case).
  outcome active_join(const workflow_task& t, int r, const loop_frame& fr,
                      const workflow_task* prev) {
    boost::json::object output;
    bool joined = true;
    auto check = [&](std::string_view ref, bool branch_done) {
      int x = latest(ref, fr);
      if (x >= 0 && is_terminal(at(x).status))
        output[ref] = output_of(at(x));
      else if (x >= 0 || !branch_done)
        joined = false;
    };
    if (prev != nullptr && prev->type == task_type::fork_join_dynamic) {
      int f = latest(prev->task_reference_name, fr);
      const auto* fork = f < 0 ? nullptr : &dynamic_children(*prev, f);
      if (fork != nullptr)
        for (const auto& c : fork->tasks)
          check(c.task_reference_name, false);
    } else if (prev != nullptr) {
      const auto& outcomes = branch_outcomes_[prev];
      for (const auto& ref : t.join_on) {
        auto b = branch_of(ref, prev);
        check(ref, b < outcomes.size() && outcomes[b] == outcome::done);
      }
    }
    if (!joined)
      return outcome::pending;
    if (auto failed = failed_permissive(t, prev, fr); !failed.empty()) {
      update(r, task_status::failed, std::move(output),
             "joined task " + quoted(failed) + " failed");
      return settle(t, r, fr, prev);
    }
    update(r, task_status::completed, std::move(output), {});
    return outcome::done;
  }

  // The first task a JOIN waits for that ended unsuccessfully and let its branch go on
  // (a permissive task): the JOIN fails once every branch is done, as in Conductor.
  std::string failed_permissive(const workflow_task& t, const workflow_task* prev,
                                const loop_frame& fr) {
    if (prev == nullptr || prev->type == task_type::fork_join_dynamic)
      return {};
    for (const auto& ref : t.join_on) {
      const task_info* info = index_.find(ref);
      int x = latest(ref, fr);
      if (info != nullptr && info->task->permissive && !info->task->optional && x >= 0
          && is_terminal(at(x).status) && !is_successful(at(x).status))
        return ref;
    }
    return {};
  }

  std::size_t branch_of(std::string_view ref, const workflow_task* fork) const {
    const task_info* info = index_.find(ref);
    while (info != nullptr && info->parent != nullptr && info->parent != fork)
      info = index_.find(info->parent->task_reference_name);
    return info == nullptr ? SIZE_MAX : info->branch;
  }

  const dynamic_fork& dynamic_children(const workflow_task& t, int fork_row) {
    auto it = dynamic_.find(fork_row);
    if (it == dynamic_.end())
      it = dynamic_.emplace(fork_row, read_dynamic_fork(t, input_of(at(fork_row)), index_)).first;
    return it->second;
  }

  outcome finished(const workflow_task& t, int r, const loop_frame& fr) {
    if (at(r).status != task_status::completed)
      return outcome::done;  // COMPLETED_WITH_ERRORS / SKIPPED: its content does not run
    switch (t.type) {
      case task_type::switch_:
      case task_type::decision: {
        // Like a loop body, a case has ended only when nothing in it runs
        // (a fork with a partial joinOn may leave a branch running).
        const auto& tasks = selected_case(t, output_of(at(r)));
        auto o = block(tasks, fr);
        return o == outcome::done && still_running(tasks, fr) ? outcome::pending : o;
      }
      case task_type::fork_join: {
        std::vector<outcome> outcomes;
        for (const auto& branch : t.fork_tasks) {
          outcomes.push_back(block(branch, fr));
          if (ended_)
            return outcome::pending;
          if (outcomes.back() == outcome::failed)
            return outcome::failed;
        }
        branch_outcomes_[&t] = std::move(outcomes);
        return outcome::done;
      }
      case task_type::fork_join_dynamic: {
        const auto& fork = dynamic_children(t, r);
        for (const auto& c : fork.tasks) {
          const auto* in = fork.inputs.if_contains(c.task_reference_name);
          auto o = task(c, fr, nullptr, in != nullptr ? in->if_object() : nullptr);
          if (ended_)
            return outcome::pending;
          if (o == outcome::failed)
            return outcome::failed;
        }
        return outcome::done;
      }
      default: return outcome::done;
    }
  }

  outcome unsuccessful(const workflow_task& t, int r, const loop_frame& fr) {
    const row& x = at(r);
    const task_def* d = def_for(t);
    bool timed_out = x.status == task_status::timed_out;
    // A response timeout is retried under any policy (Conductor's); TIME_OUT_WF ends the
    // workflow at once for the other timeouts, and for a response timeout with no retry left.
    bool response_timeout = timed_out && reason_of(x) == response_timeout_reason;
    if (retriable_type(t.type)
        && (x.status == task_status::failed
            || (timed_out && (d->policy != timeout_policy::time_out_wf || response_timeout)))
        && x.id.attempt < d->retry_count && within_total_timeout(t, *d, fr)) {
      task_identity next{x.id.ref, x.id.iteration, x.id.attempt + 1};
      auto delay = retry_delay_ms(*d, snap_.workflow_id, x.id);
      boost::json::object input = input_of(x);
      auto own_id = carry_own_task_id(input, task_id_of(x), ids_);
      start(t, fr, std::move(next), std::move(input), delay, d, {}, std::move(own_id));
      return outcome::pending;
    }
    std::string reason = ended_reason(x);
    if (t.optional) {
      update(r, task_status::completed_with_errors, std::nullopt, reason_of(x));
      return outcome::done;
    }
    if (t.permissive && !(timed_out && d->policy == timeout_policy::time_out_wf)) {
      if (permissive_ref_.empty()) {
        permissive_reason_ = reason;
        permissive_ref_ = x.id.ref;
      }
      return outcome::done;
    }
    if (timed_out && retriable_type(t.type) && d->policy == timeout_policy::time_out_wf) {
      end_workflow(workflow_status::timed_out, reason, {}, x.id.ref);
      return outcome::pending;
    }
    failure_reason_ = std::move(reason);
    failed_ref_ = x.id.ref;
    return outcome::failed;
  }

  bool within_total_timeout(const workflow_task& t, const task_def& d, const loop_frame& fr) {
    if (d.total_timeout_seconds <= 0)
      return true;
    int first = first_attempt(t.task_reference_name, fr);
    return now_ < scheduled_time_of(at(first)) + d.total_timeout_seconds * 1000;
  }

  // DO_WHILE: run the body as iteration 1, 2, …; after each complete
  // iteration evaluate loopCondition (do-while: the body runs at least once).
  // With `items` the loop also ends after the last item. The body runs in
  // the loop's frame plus its iteration, so a loop nested in another keeps
  // one set of executions per outer iteration (loop_frame.hpp).
  outcome loop(const workflow_task& t, int r, const loop_frame& fr) {
    auto found = max_iteration_.find(key_view{at(r).id.ref, at(r).id.iteration});
    std::int32_t cur = found == max_iteration_.end() ? 1 : std::max(found->second, 1);
    const auto& body = index_.frame_body(&t);
    std::string unused;
    const boost::json::array* items =
      iterates_items(t) ? loop_items(input_of(at(r)), unused) : nullptr;
    std::int64_t keep = keep_last_n(input_of(at(r)), unused);
    for (;;) {
      auto inner = fr.inner(cur);
      auto o = block(t.loop_over, inner);
      if (ended_ || o == outcome::pending)
        return outcome::pending;
      if (o == outcome::failed) {
        // If the loop is optional the workflow goes on: nothing in it may keep running.
        cancel_body(t, index_.body(&t));
        update(r, task_status::failed, std::nullopt, failure_reason_);
        return unsuccessful(t, r, fr);
      }
      if (still_running(t.loop_over, inner))
        return outcome::pending;  // an unjoined branch still runs
      bool more = items == nullptr || static_cast<std::size_t>(cur) < items->size();
      if (more && !t.loop_condition.empty()) {
        boost::json::object ctx = input_of(at(r));
        for (const auto* b : body)
          if (int x = latest(b->task_reference_name, inner); x >= 0)
            ctx[b->task_reference_name] = output_of(at(x));
        ctx[t.task_reference_name] = iteration_output(items, cur);
        if (!ctx.contains("iteration"))
          ctx["iteration"] = cur;
        safe_expr cond;
        std::string error;
        boost::json::value v;
        if (!cond.compile(t.loop_condition, error) || !cond.evaluate(ctx, v, error)) {
          update(r, task_status::failed, std::nullopt, "loopCondition: " + error);
          return unsuccessful(t, r, fr);
        }
        more = truthy(v);
      }
      if (!more) {
        update(r, task_status::completed, loop_output(t, fr, cur, keep), {});
        return outcome::done;
      }
      if (!spend_step())
        return outcome::pending;
      ++cur;
      // One event per iteration: the generic "task.in_progress" key would repeat.
      update(r, task_status::in_progress, iteration_output(items, cur), {}, false);
      add_event("loop.iteration", "loop.iteration/" + to_string(at(r).id) + '/'
                                    + std::to_string(cur),
                {{"ref", at(r).id.ref}, {"iteration", cur}});
    }
  }

  // What the body reads as ${loop.output…} during iteration `it`: Conductor's
  // `iteration`, and with `items` the item (`loopItem`) and its 0-based `loopIndex`.
  static boost::json::object iteration_output(const boost::json::array* items, std::int32_t it) {
    boost::json::object out{{"iteration", it}};
    if (items != nullptr && it >= 1 && static_cast<std::size_t>(it) <= items->size()) {
      out["loopItem"] = (*items)[static_cast<std::size_t>(it) - 1];
      out["loopIndex"] = it - 1;
    }
    return out;
  }

  // Whether a task of `tasks` in this frame still runs. A loop nested in them
  // runs until its own execution (in this frame) has ended.
  bool still_running(const std::vector<workflow_task>& tasks, const loop_frame& fr) const {
    std::vector<const workflow_task*> inside;
    def_index::frame_subtree(tasks, inside);
    for (const auto* x : inside)
      if (int i = latest(x->task_reference_name, fr); i >= 0
          && !is_terminal(rows_[static_cast<std::size_t>(i)].status))
        return true;
    return false;
  }

  void cancel_body(const workflow_task& t, const std::vector<const workflow_task*>& body) {
    std::set<std::string, std::less<>> refs;
    for (const auto* b : body)
      refs.insert(b->task_reference_name);
    for (std::size_t i = 0; i < rows_.size(); ++i)  // dynamically forked tasks of the body
      if (rows_[i].type == task_type::fork_join_dynamic && refs.count(rows_[i].base) != 0)
        if (const auto* f = output_of(rows_[i]).if_contains("forkedTasks"); f && f->is_array())
          for (const auto& c : f->get_array())
            if (c.is_string())  // stored as the fork is: with its outer iterations
              refs.insert(std::string(c.get_string())
                          + rows_[i].id.ref.substr(rows_[i].base.size()));
    std::string reason = "DO_WHILE " + quoted(t.task_reference_name) + " failed";
    for (auto& [k, list] : by_key_)
      if (!list.empty() && !is_terminal(at(list.back()).status)
          && (refs.count(at(list.back()).base) != 0 || refs.count(k.ref) != 0))
        update(list.back(), task_status::canceled, std::nullopt, reason);
  }

  // Conductor's output of a finished loop: {"iteration": n, "1": {ref: output,
  // …}, …} over the tasks of the body's frame (a nested loop appears as its own
  // output), only the last `keep` iterations when keepLastN is given.
  boost::json::object loop_output(const workflow_task& t, const loop_frame& fr, std::int32_t last,
                                  std::int64_t keep) {
    boost::json::object out{{"iteration", last}};
    const auto& body = index_.frame_body(&t);
    std::int32_t first = keep > 0 && keep < last ? static_cast<std::int32_t>(last - keep + 1) : 1;
    for (std::int32_t i = first; i <= last; ++i) {
      auto inner = fr.inner(i);
      boost::json::object iter;
      for (const auto* b : body)
        if (int x = latest(b->task_reference_name, inner); x >= 0)
          iter[b->task_reference_name] = output_of(at(x));
      out[std::to_string(i)] = std::move(iter);
    }
    return out;
  }
};

}  // namespace

decision decide(const workflow_def& def, const task_def_map& task_defs, const snapshot& snap,
                time_ms now, const cached_outputs* cached, const task_id_source* ids) {
  return evaluation(def, task_defs, snap, now, cached, ids).run();
}

} // namespace nf::flow
