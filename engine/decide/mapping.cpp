#include "engine/decide/mapping.hpp"

#include <algorithm>
#include <cstdint>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "engine/decide/task_domains.hpp"
#include "engine/system_tasks/http_task.hpp"
#include "engine/system_tasks/script_task.hpp"
#include "engine/system_tasks/vector_task.hpp"
#include "proto/namespaces.hpp"
#include "flow/def_index.hpp"
#include "flow/loop_frame.hpp"
#include "flow/effective_def.hpp"
#include "flow/retry.hpp"
#include "store/json.hpp"

namespace nf::engine {

namespace {

std::optional<store::json_text> object_or_none(const boost::json::object& o) {
  if (o.empty())
    return std::nullopt;
  return store::json(o);
}

std::optional<std::string> text_or_none(const std::string& s) {
  if (s.empty())
    return std::nullopt;
  return s;
}

store::timer_kind to_store(flow::timer_kind k) {
  switch (k) {
    case flow::timer_kind::schedule_to_start: return store::timer_kind::schedule_to_start;
    case flow::timer_kind::start_to_close: return store::timer_kind::start_to_close;
    case flow::timer_kind::task_timeout: return store::timer_kind::task_timeout;
    case flow::timer_kind::workflow_timeout: return store::timer_kind::workflow_timeout;
    case flow::timer_kind::wait: return store::timer_kind::wait;
    case flow::timer_kind::delay: return store::timer_kind::delay;
  }
  return store::timer_kind::delay;
}

// The row does not store a start delay; decide() derives it the same way when it
// schedules (startDelay for attempt 0, the retry backoff of the previous attempt
// after), and its poll deadline counts from scheduled + delay (flow/retry.hpp).
int64_t start_delay_of(const store::task_row& t, const flow::def_index& index,
                       const flow::task_def_map& task_defs, const std::string& workflow_id) {
  if (!flow::is_queued(t.type))
    return 0;
  // Inside nested loops the stored ref carries the outer iterations ("ref__2").
  const auto* info = flow::split_stored_ref(t.identity.ref, index).info;
  if (info == nullptr)
    return 0; // a dynamically forked task: no static startDelay
  if (t.identity.attempt == 0)
    return info->task->start_delay * 1000;
  // The row's name: a DYNAMIC task runs as the task its input named.
  auto it = task_defs.find(t.task_def_name);
  const auto def = flow::effective_def(*info->task, it != task_defs.end() ? &it->second : nullptr);
  return flow::retry_delay_ms(def, workflow_id,
                              {t.identity.ref, t.identity.iteration, t.identity.attempt - 1});
}

} // namespace

boost::json::object parse_object(const std::string& text) {
  boost::json::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object())
    return {};
  return std::move(v.get_object());
}

flow::snapshot to_flow(const store::workflow_snapshot& s, const store::history_facts* facts,
                       const flow::workflow_def& def, const flow::task_def_map& task_defs) {
  flow::snapshot out;
  out.workflow_id = s.id.str();
  out.status = s.status;
  out.input = parse_object(s.input);
  out.variables = parse_object(s.variables);
  if (s.output)
    out.output = parse_object(*s.output);
  out.reason_for_incompletion = s.reason_for_incompletion.value_or("");
  out.correlation_id = s.correlation_id.value_or("");
  out.start_time = s.started_at_ms;
  if (facts != nullptr && facts->timeout_reset_ms)
    out.start_time = std::max(out.start_time, *facts->timeout_reset_ms);
  flow::def_index index{def};
  out.tasks.reserve(s.tasks.size());
  for (const auto& t : s.tasks) {
    flow::task_execution e;
    e.id = t.identity;
    e.type = t.type;
    e.task_def_name = t.task_def_name;
    e.status = t.status;
    e.input = parse_object(t.input);
    if (t.output)
      e.output = parse_object(*t.output);
    e.reason_for_incompletion = t.reason_for_incompletion.value_or("");
    e.scheduled_time = t.scheduled_at_ms;
    e.start_delay_ms = start_delay_of(t, index, task_defs, out.workflow_id);
    e.start_time = t.started_at_ms.value_or(0);
    e.end_time = t.ended_at_ms.value_or(0);
    e.poll_count = t.poll_count;
    e.task_id = t.id.str();
    out.tasks.push_back(std::move(e));
  }
  if (facts != nullptr)
    for (const auto& sig : facts->signals) {
      boost::json::error_code ec;
      auto payload = boost::json::parse(sig.payload, ec);
      out.signals.push_back({sig.seq, sig.name, ec ? boost::json::value{} : std::move(payload),
                             sig.at_ms, sig.task_ref, sig.status});
    }
  return out;
}

const char* history_label(const std::string& type, int attempt) {
  if (type == "task.scheduled")
    return attempt > 0 ? "TASK_RETRY_SCHEDULED" : "TASK_SCHEDULED";
  if (type == "task.in_progress" || type == "loop.iteration")
    return "TASK_IN_PROGRESS";
  if (type == "task.completed" || type == "task.completed_with_errors")
    return "TASK_COMPLETED";
  if (type == "task.failed" || type == "task.failed_with_terminal_error")
    return "TASK_FAILED";
  if (type == "task.timed_out")
    return "TASK_TIMED_OUT";
  if (type == "task.canceled")
    return "TASK_CANCELED";
  if (type == "task.skipped")
    return "TASK_SKIPPED";
  if (type == "workflow.completed")
    return "WORKFLOW_COMPLETED";
  if (type == "workflow.failed")
    return "WORKFLOW_FAILED";
  if (type == "workflow.timed_out")
    return "WORKFLOW_TIMED_OUT";
  if (type == "workflow.terminated")
    return "WORKFLOW_TERMINATED";
  if (type == "workflow.paused")
    return "WORKFLOW_PAUSED";
  if (type == "workflow.resumed")
    return "WORKFLOW_RESUMED";
  if (type == "workflow.retried")
    return "WORKFLOW_RETRIED";
  if (type == "workflow.rerun")
    return "WORKFLOW_RERUN";
  if (type == "workflow.restarted")
    return "WORKFLOW_RESTARTED";
  return nullptr; // task.timeout_alert, workflow.timeout_alert: outbox only
}

void add_event(store::decision_write& w, const flow::event& e, const std::string& workflow_id) {
  std::optional<flow::task_identity> identity;
  if (e.type.rfind("task.", 0) == 0) {
    const auto* ref = e.payload.if_contains("ref");
    const auto* it = e.payload.if_contains("iteration");
    const auto* at = e.payload.if_contains("attempt");
    if (ref != nullptr && ref->is_string() && it != nullptr && it->is_int64() && at != nullptr
        && at->is_int64())
      identity = flow::task_identity{std::string{ref->get_string()},
                                     static_cast<int32_t>(it->get_int64()),
                                     static_cast<int32_t>(at->get_int64())};
  }
  if (const char* label = history_label(e.type, identity ? identity->attempt : 0))
    w.events.push_back({label, std::nullopt, identity, store::json(e.payload)});
  auto published = e.payload;
  published["workflowId"] = workflow_id;
  w.outbox.push_back({e.type, store::json(published)});
}

boost::json::object task_to_domain_of(const store::workflow_snapshot& s) {
  return s.task_to_domain ? parse_object(*s.task_to_domain) : boost::json::object{};
}

store::task_insert to_insert(const flow::scheduled_task& t, const namespace_id& ns,
                             const boost::json::object& task_to_domain) {
  store::task_insert out;
  out.identity = t.id;
  if (!t.task_id.empty())
    out.id = task_id{t.task_id};
  out.type = t.type;
  out.task_def_name = t.task_def_name;
  // HTTP tasks wait for the in-process system-task runner (docs/engine.md §4).
  // A queue of another namespace than "default" is stored under its namespace's id
  // (proto/namespaces.hpp), which only that namespace's polls name.
  // INLINE, LAMBDA and JSON_JQ_TRANSFORM wait for the script runner, LLM_STORE_EMBEDDINGS
  // and LLM_SEARCH_EMBEDDINGS for the vector runner. A worker task of a
  // workflow started with taskToDomain goes to its domain's queue (proto/domains.hpp); the
  // namespace qualifies that name like any other.
  if (t.type == flow::task_type::http)
    out.queue = http_task_queue;
  else if (flow::is_script(t.type))
    out.queue = script_task_queue;
  else if (flow::is_vector(t.type))
    out.queue = vector_task_queue;
  else
    out.queue = namespace_queue(
      ns.str(), t.queue.empty() ? std::string{}
                                : domain_queue(domain_of(task_to_domain, t.task_def_name), t.queue));
  out.input = store::json(t.input);
  out.status = t.status;
  // "output" NULL means "no output yet": only a task that decide() ran or started
  // (inline types, an IN_PROGRESS DO_WHILE) carries one.
  if (t.status != flow::task_status::scheduled)
    out.output = store::json(t.output);
  out.reason_for_incompletion = text_or_none(t.reason_for_incompletion);
  out.start_delay_ms = t.start_delay_ms;
  if (t.status == flow::task_status::scheduled && !t.cache_key.empty()) {
    out.cache_key = t.cache_key;
    // The column is an integer: a longer TTL is kept for as long as it can say.
    out.cache_ttl_seconds = std::min<int64_t>(t.cache_ttl_seconds, INT32_MAX);
  }
  return out;
}

std::optional<store::timer_arm> to_arm(const flow::timer& t) {
  if (t.kind == flow::timer_kind::start_to_close)
    return std::nullopt;
  store::timer_arm a;
  a.kind = to_store(t.kind);
  if (t.kind != flow::timer_kind::workflow_timeout)
    a.task = t.task;
  a.fire_at_ms = t.fire_at;
  return a;
}

// `u` laid over the change of its task: its status, and its output and reason when it has them.
void merge_update(store::task_change& c, const flow::task_update& u) {
  c.status = u.status;
  if (u.output)
    c.output = store::json(*u.output);
  if (auto reason = text_or_none(u.reason_for_incompletion))
    c.reason_for_incompletion = std::move(reason);
}

store::decision_write write_for(const store::workflow_snapshot& s, int64_t version) {
  store::decision_write w;
  w.id = s.id;
  w.expected_version = version;
  w.ns = s.ns;
  w.shard = s.shard;
  w.priority = s.priority;
  return w;
}

store::decision_write to_write(const store::workflow_snapshot& s, const flow::decision& d) {
  auto w = write_for(s, s.version);
  w.status = d.status;
  if (d.status && flow::is_terminal(*d.status))
    w.output = store::json(d.output);
  w.reason_for_incompletion = text_or_none(d.reason_for_incompletion);
  if (!d.failed_task_ref.empty())
    w.failed_task_ref = d.failed_task_ref;
  w.variables = object_or_none(d.variables);
  const auto domains = task_to_domain_of(s);
  for (const auto& t : d.schedule)
    w.inserts.push_back(to_insert(t, s.ns, domains));
  // One change per task: an UPDATE joined to two rows for one target applies either. A
  // later update of the same task in the decision wins, field by field.
  std::map<flow::task_identity, size_t> changed;
  std::map<flow::task_identity, flow::task_status> seen;
  if (!d.updates.empty())
    for (const auto& t : s.tasks)
      seen.emplace(t.identity, t.status);
  for (const auto& u : d.updates) {
    auto [at, fresh] = changed.emplace(u.id, w.changes.size());
    if (fresh) {
      store::task_change c;
      c.identity = u.id;
      if (auto was = seen.find(u.id); was != seen.end() && u.status != flow::task_status::canceled)
        c.from = was->second;
      w.changes.push_back(std::move(c));
    }
    merge_update(w.changes[at->second], u);
  }
  for (const auto& t : d.arm)
    if (auto a = to_arm(t))
      w.arm.push_back(*a);
  for (const auto& c : d.cancel)
    if (c.kind != flow::timer_kind::workflow_timeout)
      w.cancel.push_back({to_store(c.kind), c.task});
  w.seen = s.unprocessed();
  for (const auto& e : d.events)
    add_event(w, e, s.id.str());
  // decide() stopped early (max_inline_steps_per_decide): the claimed row stays, so the
  // next flush claims and evaluates the workflow again. Deleted, nothing would: the
  // tasks this evaluation ran are already seen (I3) and no one else wakes it.
  w.dequeue = !d.decide_again;
  return w;
}

store::edit_write to_edit_write(const store::workflow_snapshot& s, const flow::edit& e) {
  store::edit_write w;
  w.id = s.id;
  w.expected_version = s.version;
  w.remove = e.remove;
  for (const auto& u : e.updates)
    w.reopen.push_back({u.id, u.status});
  w.status = e.status;
  if (e.input)
    w.input = store::json(*e.input);
  if (e.variables)
    w.variables = store::json(*e.variables);
  return w;
}

store::decision_write edit_followup(const store::workflow_snapshot& s, const flow::edit& e,
                                    flow::time_ms now_ms, int64_t workflow_timeout_seconds) {
  auto w = write_for(s, s.version + 1);
  const auto domains = task_to_domain_of(s);
  for (const auto& t : e.schedule)
    w.inserts.push_back(to_insert(t, s.ns, domains));
  for (const auto& t : e.arm)
    if (auto a = to_arm(t))
      w.arm.push_back(*a);
  // Tasks the request ends: stale (errc::stale) if the row moved on since the snapshot.
  for (const auto& u : e.finish) {
    store::task_change c;
    c.identity = u.id;
    merge_update(c, u);
    for (const auto& t : s.tasks)
      if (t.identity == u.id)
        c.from = t.status;
    w.changes.push_back(std::move(c));
  }
  for (const auto& c : e.cancel)
    w.cancel.push_back({to_store(c.kind), c.task});
  // A restarted timeout clock needs its timer again (decide() arms one only for a
  // workflow without tasks).
  if (e.start_time && workflow_timeout_seconds > 0)
    w.arm.push_back({store::timer_kind::workflow_timeout, std::nullopt,
                     now_ms + workflow_timeout_seconds * 1000});
  for (const auto& ev : e.events) {
    auto marked = ev;
    // The retry of a TIMED_OUT workflow (and every restart) restarts its timeout
    // clock; "startedAt" is the id's time, so the history carries the new start.
    if (e.start_time && ev.type.rfind("workflow.", 0) == 0)
      marked.payload["timeoutReset"] = true;
    add_event(w, marked, s.id.str());
  }
  w.dequeue = false;
  return w;
}

} // namespace nf::engine
