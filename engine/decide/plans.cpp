#include "engine/decide/plans.hpp"

#include <map>

#include <spdlog/logger.h>

#include "engine/decide/mapping.hpp"
#include "config/folder_logger.hpp"
#include "flow/decide.hpp"
#include "flow/operations.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/sharding.hpp"

namespace nf::engine {

namespace {

/// The ids of tasks whose input names `${CPEWF_TASK_ID}`: made before the row is written,
/// as a lease's are.
const flow::task_id_source own_task_ids = [] { return new_uuidv7(); };

caf::error refused(const workflow_id& id, const std::string& why) {
  return nf::make_error(nf::errc::invalid, "workflow " + id.str() + ": " + why);
}

/// A child's end, as its parent task's end (DESIGN: SUB_WORKFLOW).
std::optional<store::sub_workflow_end> parent_end_of(const store::workflow_snapshot& s,
                                                     flow::workflow_status status,
                                                     const boost::json::object& output,
                                                     const std::string& reason) {
  if (!s.parent_workflow_id || !s.parent_task_id)
    return std::nullopt;
  store::sub_workflow_end e;
  e.parent = *s.parent_workflow_id;
  e.task = *s.parent_task_id;
  e.child = s.id;
  if (status == flow::workflow_status::completed) {
    // As Conductor's: the child's output, and the child's id beside it.
    e.status = flow::task_status::completed;
    auto with_id = output;
    with_id.emplace("subWorkflowId", s.id.str());
    e.output = store::json(with_id);
  } else {
    e.status = flow::task_status::failed;
    std::string why = "sub workflow " + s.id.str() + " ended "
                      + std::string{flow::to_string(status)};
    if (!reason.empty())
      why += ": " + reason;
    e.reason = std::move(why);
    e.output = store::json(boost::json::object{{"subWorkflowId", s.id.str()}});
  }
  return e;
}

workflow_plan base_plan(const store::workflow_snapshot& s) {
  workflow_plan p;
  p.id = s.id;
  p.ns = s.ns;
  p.priority = s.priority;
  p.task_to_domain = task_to_domain_of(s);
  p.correlation_id = s.correlation_id;
  p.workflow_name = s.workflow_name;
  p.write = write_for(s, s.version);
  return p;
}

/// The task ends `p`'s write takes in or makes (decided_counts::task_ends): the rows it
/// stamps seen (exactly those read unprocessed, I3), the tasks decide() ran inline, and
/// those it ends itself (a terminate's cancels).
void note_task_ends(const store::workflow_snapshot& s, workflow_plan& p) {
  const auto& w = p.write;
  if (!w.seen.empty())
    for (const auto& t : s.tasks)
      if (t.unprocessed && flow::is_terminal(t.status))
        p.task_ends.emplace_back(t.task_def_name, t.status);
  for (const auto& t : w.inserts)
    if (flow::is_terminal(t.status))
      p.task_ends.emplace_back(t.task_def_name, t.status);
  if (w.changes.empty())
    return;
  std::map<flow::task_identity, const std::string*> names;
  for (const auto& t : s.tasks)
    names[t.identity] = &t.task_def_name;
  for (const auto& t : w.inserts)
    names[t.identity] = &t.task_def_name;
  for (const auto& c : w.changes)
    if (flow::is_terminal(c.status))
      if (auto it = names.find(c.identity); it != names.end())
        p.task_ends.emplace_back(*it->second, c.status);
}

flow::event workflow_event(const std::string& what, flow::workflow_status status,
                           const std::string& reason) {
  boost::json::object payload{{"status", flow::to_string(status)}};
  if (!reason.empty())
    payload["reason"] = reason;
  return {"workflow." + what, "workflow." + what, std::move(payload)};
}

/// Terminate: every open task is CANCELED (its queue row goes with it in
/// apply_decisions, so a worker still holding it gets `lease lost`) and its timers
/// cancelled, as decide() does when a workflow ends.
void cancel_open_tasks(const store::workflow_snapshot& s, const std::string& reason,
                       store::decision_write& w) {
  for (const auto& t : s.tasks) {
    if (flow::is_terminal(t.status))
      continue;
    store::task_change c;
    c.identity = t.identity;
    c.status = flow::task_status::canceled;
    c.reason_for_incompletion = reason;
    w.changes.push_back(std::move(c));
    switch (t.type) {
      case flow::task_type::simple:
      case flow::task_type::http:
      case flow::task_type::inline_:
      case flow::task_type::lambda:
      case flow::task_type::json_jq_transform:
      case flow::task_type::llm_store_embeddings:
      case flow::task_type::llm_search_embeddings:
        w.cancel.push_back({store::timer_kind::schedule_to_start, t.identity});
        w.cancel.push_back({store::timer_kind::start_to_close, t.identity});
        w.cancel.push_back({store::timer_kind::delay, t.identity});
        break;
      case flow::task_type::wait: w.cancel.push_back({store::timer_kind::wait, t.identity}); break;
      default: break;
    }
    boost::json::object payload{{"ref", t.identity.ref},
                                {"iteration", t.identity.iteration},
                                {"attempt", t.identity.attempt},
                                {"type", flow::to_string(t.type)},
                                {"status", "CANCELED"},
                                {"reason", reason}};
    add_event(w, {"task.canceled", "task.canceled/" + flow::to_string(t.identity), payload},
              s.id.str());
  }
}

/// The ids named in a `stale` message of apply_decisions (it lists them).
std::vector<workflow_id> stale_ids(const caf::error& err, const std::vector<workflow_plan>& ps) {
  auto msg = nf::message_of(err);
  std::vector<workflow_id> out;
  for (const auto& p : ps)
    if (msg.find(p.id.str()) != std::string::npos)
      out.push_back(p.id);
  return out;
}

} // namespace

workflow_plan plan_evaluation(const store::workflow_snapshot& s, const flow::workflow_def* def,
                              const std::string& def_error, const flow::task_def_map& task_defs,
                              const store::history_facts* facts, int64_t now_ms,
                              const flow::cached_outputs* cached) {
  workflow_plan p = base_plan(s);
  if (def == nullptr) {
    // Definitions are never deleted, so this does not heal by waiting: fail the
    // workflow with the reason instead of re-claiming it on every poll.
    p.write.seen = s.unprocessed();
    if (!flow::is_terminal(s.status)) {
      p.write.status = flow::workflow_status::failed;
      p.write.reason_for_incompletion = def_error;
      p.write.output = store::json(boost::json::object{});
      add_event(p.write, workflow_event("failed", flow::workflow_status::failed, def_error),
                s.id.str());
      p.parent_end = parent_end_of(s, flow::workflow_status::failed, {}, def_error);
    }
    note_task_ends(s, p);
    return p;
  }
  auto snap = to_flow(s, facts, *def, task_defs);
  auto d = flow::decide(*def, task_defs, snap, now_ms, cached, &own_task_ids);
  p.write = to_write(s, d);
  p.children = std::move(d.sub_workflows);
  p.failure = std::move(d.failure_workflow);
  p.decide_again = d.decide_again;
  if (d.status && flow::is_terminal(*d.status))
    p.parent_end = parent_end_of(s, *d.status, d.output, d.reason_for_incompletion);
  note_task_ends(s, p);
  return p;
}

caf::expected<std::optional<workflow_plan>> plan_state_command(const command_request& c,
                                                               const store::workflow_snapshot& s) {
  using flow::workflow_status;
  auto status_label = std::string{flow::to_string(s.status)};
  workflow_plan p = base_plan(s);
  p.write.dequeue = false; // this transaction did not claim its DecideQueues row (I2)
  if (c.op == "pause" || c.op == "resume") {
    // pause: RUNNING → PAUSED; resume: PAUSED → RUNNING and evaluate what arrived
    // meanwhile. Asking for the status it already has changes nothing.
    bool pause = c.op == "pause";
    auto from = pause ? workflow_status::running : workflow_status::paused;
    auto to = pause ? workflow_status::paused : workflow_status::running;
    if (s.status == to)
      return std::nullopt;
    if (s.status != from)
      return refused(s.id, "is " + status_label + ": only a "
                             + std::string{flow::to_string(from)} + " workflow can be "
                             + (pause ? "paused" : "resumed"));
    p.write.status = to;
    add_event(p.write, workflow_event(pause ? "paused" : "resumed", to, c.reason), s.id.str());
    p.requeue = !pause;
    return p;
  }
  // terminate
  if (flow::is_terminal(s.status))
    return refused(s.id, "is already " + status_label + ": nothing to terminate");
  std::string reason = c.reason.empty() ? "terminated by an operator" : c.reason;
  p.write.status = workflow_status::terminated;
  p.write.reason_for_incompletion = reason;
  p.write.output = store::json(boost::json::object{});
  p.write.seen = s.unprocessed();
  cancel_open_tasks(s, "workflow terminated: " + reason, p.write);
  add_event(p.write, workflow_event("terminated", workflow_status::terminated, reason), s.id.str());
  p.parent_end = parent_end_of(s, workflow_status::terminated, {}, reason);
  note_task_ends(s, p);
  return p;
}

caf::expected<workflow_plan> plan_edit_command(const command_request& c,
                                               const store::workflow_snapshot& s,
                                               const flow::workflow_def& def,
                                               const flow::task_def_map& task_defs,
                                               const store::history_facts* facts, int64_t now_ms) {
  auto snap = to_flow(s, facts, def, task_defs);
  flow::state_task_result state_result;
  if (c.task_status)
    state_result = {c.task_ref, *c.task_status, c.output.value_or(boost::json::object{}),
                    c.reason, c.task_id};
  flow::edit_result r;
  if (c.op == "retry")
    r = flow::retry_last_failed(def, task_defs, snap, now_ms, &own_task_ids);
  else if (c.op == "rerun")
    r = flow::rerun_from_task(def, task_defs, snap, c.task_ref, c.iteration, c.input, now_ms,
                              &own_task_ids);
  else if (c.op == "skip")
    r = flow::skip_task(def, snap, c.task_ref, c.input, c.output);
  else if (c.op == "variables")
    r = flow::update_variables(snap, c.input ? *c.input : boost::json::object{});
  else if (c.op == "state")
    r = flow::update_state(snap, c.input ? &*c.input : nullptr,
                           c.task_status ? &state_result : nullptr);
  else
    r = flow::restart(def, snap, c.input, now_ms);
  if (!r)
    return refused(s.id, r.error);
  workflow_plan p = base_plan(s);
  p.edit = to_edit_write(s, r.value);
  p.write = edit_followup(s, r.value, now_ms, def.timeout_seconds);
  p.children = std::move(r.value.sub_workflows);
  p.requeue = true;
  note_task_ends(s, p);
  return p;
}

namespace {

/// What the completion of a task leased in its decision needs to know (lease_memory). Its
/// timers are the ones this decision arms for it and the lease's start-to-close: a
/// taskTimeout is armed for the first attempt only, in the decision that schedules it.
/// The lease is made at the clock read after the claim (`now_ms`).
store::lease_facts completion_facts(const store::decision_write& w, const store::task_insert& t,
                                    const store::task_lease& lease, int64_t now_ms) {
  int64_t within_ms = int64_t{lease.start_to_close_seconds} * 1000;
  for (const auto& a : w.arm)
    if (a.task && *a.task == t.identity)
      within_ms = std::max(within_ms, a.fire_at_ms - now_ms);
  return store::lease_facts{w.id,
                            lease.id,
                            lease.token,
                            w.ns,
                            w.shard.value(),
                            t.queue,
                            t.identity,
                            store::scheduled_bound_of_lease(now_ms),
                            (within_ms + 999) / 1000 + 1,
                            lease.expires_at_ms};
}

/// Leases the queued tasks of `writes` to the polls waiting on their queues, oldest poll
/// first, each up to its max_tasks: marks each task_insert with its lease and notes the
/// task against its poll in `lend.lent`.
void lend_to_waiting(std::vector<store::decision_write>& writes, const lending& lend) {
  std::map<std::string, std::vector<std::pair<store::decision_write*, store::task_insert*>>>
    by_queue;
  for (auto& w : writes)
    for (auto& t : w.inserts)
      if (store::is_queued(w, t))
        by_queue[t.queue].emplace_back(&w, &t);
  for (auto& [queue, tasks] : by_queue) {
    size_t next = 0;
    for (auto& poll : lend.polls->lend(queue, tasks.size())) {
      lent_poll l{std::move(poll), {}, {}};
      const auto& req = l.poll.request;
      for (int k = 0; k < req.max_tasks && next < tasks.size(); ++k, ++next) {
        auto& [w, t] = tasks[next];
        store::task_lease lease;
        // A task whose input holds its id (`${CPEWF_TASK_ID}`) is leased under that id.
        lease.id = t->id ? *t->id : task_id{new_uuidv7()};
        lease.worker_id = req.worker_id;
        lease.token = lease_token{new_uuidv7()};
        lease.expires_at_ms = lend.now_ms + int64_t{req.lease_seconds} * 1000;
        lease.start_to_close_seconds = req.start_to_close_seconds;
        store::leased_task m;
        m.queue = queue;
        m.task = lease.id;
        m.workflow = w->id;
        m.ref_name = t->identity.ref;
        m.iteration = t->identity.iteration;
        m.attempt = t->identity.attempt;
        m.task_type = std::string{flow::to_string(t->type)};
        m.task_def_name = t->task_def_name;
        m.input = t->input ? t->input->str() : "{}";
        m.token = lease.token;
        m.lease_expires_at_ms = lease.expires_at_ms;
        l.facts.push_back(completion_facts(*w, *t, lease, lend.now_ms));
        t->lease = std::move(lease);
        l.tasks.push_back(std::move(m));
      }
      lend.lent->push_back(std::move(l));
    }
  }
}

} // namespace

caf::expected<void> apply_plans(store::transaction& tx, const std::vector<workflow_plan>& plans,
                                const std::set<int16_t>& served, int partition_count,
                                plan_effects& fx, const lending* lend,
                                bool commit_if_last) {
  if (plans.empty())
    return {};
  // Requeues first: "DecideQueues" comes before "WorkflowExecutions" in the lock order.
  std::vector<workflow_id> requeue;
  for (const auto& p : plans)
    if (p.requeue)
      requeue.push_back(p.id);
  if (!requeue.empty()) {
    if (auto r = store::requeue(tx.conn(), requeue, "command"); !r)
      return r;
    fx.more_here = true;
  }
  for (const auto& p : plans)
    if (p.edit)
      if (auto r = store::apply_edit(tx, *p.edit); !r) {
        if (nf::code_of(r.error()) == nf::errc::stale)
          fx.stale.push_back(p.id);
        return r;
      }
  std::vector<store::decision_write> writes;
  writes.reserve(plans.size());
  for (const auto& p : plans)
    writes.push_back(p.write);
  if (lend != nullptr && lend->polls != nullptr)
    lend_to_waiting(writes, *lend);
  // Children and parent tasks are written after the decisions (the children need the ids of
  // the SUB_WORKFLOW rows inserted): only without them is the decisions' round trip the last.
  bool last = commit_if_last && std::none_of(plans.begin(), plans.end(), [](const auto& p) {
                return !p.children.empty() || p.failure || p.parent_end;
              });
  auto applied = store::apply_decisions(tx, writes, last);
  if (!applied) {
    if (nf::code_of(applied.error()) == nf::errc::stale)
      fx.stale = stale_ids(applied.error(), plans);
    return std::move(applied.error());
  }
  fx.workflows += plans.size();
  for (const auto& p : plans) {
    if (p.write.status && flow::is_terminal(*p.write.status))
      fx.counts.ended.emplace_back(p.workflow_name, *p.write.status);
    fx.counts.task_ends.insert(fx.counts.task_ends.end(), p.task_ends.begin(), p.task_ends.end());
  }
  fx.tasks_scheduled += applied->inserted.size();
  for (const auto& t : applied->inserted) {
    auto [at, fresh] = fx.first_inserted.emplace(t.workflow.str(), t.id);
    if (!fresh && t.id < at->second)
      at->second = t.id;
  }
  fx.hints.queues.insert(applied->queues.begin(), applied->queues.end());
  fx.hints.note_timer(applied->earliest_timer_ms);
  for (const auto& w : writes) {
    auto shard = shard_of(w.id.str(), partition_count);
    if (!w.events.empty() || !w.outbox.empty())
      fx.hints.outbox_shards.insert(shard);
    if (!w.arm.empty())
      fx.hints.timer_shards.insert(shard);
  }

  // Children start only for SUB_WORKFLOW rows this write inserted: an identity the
  // insert absorbed (I1) already has its child.
  std::map<std::pair<std::string, std::string>, task_id> inserted;
  for (const auto& t : applied->inserted)
    if (t.type == flow::task_type::sub_workflow || t.type == flow::task_type::start_workflow)
      inserted.emplace(std::make_pair(t.workflow.str(), flow::to_string(t.identity)), t.id);
  std::vector<store::start_request> starts;
  std::vector<std::optional<store::parent_ref>> parents;  // per start: nullopt = failure wf
  // Per start: the START_WORKFLOW task that completes once it has started (no parent).
  std::vector<std::optional<store::parent_ref>> starters;
  std::vector<store::sub_workflow_end> ends;
  for (const auto& p : plans) {
    for (const auto& c : p.children) {
      auto it = inserted.find({p.id.str(), flow::to_string(c.parent)});
      if (it == inserted.end())
        continue;
      store::start_request r;
      r.ns = p.ns;
      r.name = c.name;
      r.version = c.version;
      r.input = c.input;
      r.priority = c.priority.value_or(p.priority);
      r.id = workflow_id{new_uuidv7()};
      if (c.detached) {
        if (!c.correlation_id.empty())
          r.correlation_id = c.correlation_id;
        if (!c.idempotency_key.empty())
          r.idempotency_key = c.idempotency_key;
        parents.push_back(std::nullopt);
        starters.push_back(store::parent_ref{p.id, it->second});
      } else {
        r.parent = store::parent_ref{p.id, it->second};
        r.task_to_domain = p.task_to_domain;  // as Conductor: a child routes like its parent
        r.correlation_id = p.correlation_id;  // and is found by the parent's correlation id
        parents.push_back(store::parent_ref{p.id, it->second});
        starters.push_back(std::nullopt);
      }
      starts.push_back(std::move(r));
    }
    if (p.failure) {
      store::start_request r;
      r.ns = p.ns;
      r.name = p.failure->name;
      r.input = p.failure->input;
      r.priority = p.priority;
      r.task_to_domain = p.task_to_domain;
      r.correlation_id = p.correlation_id;
      r.id = workflow_id{new_uuidv7()};
      starts.push_back(std::move(r));
      parents.push_back(std::nullopt);
      starters.push_back(std::nullopt);
    }
    if (p.parent_end)
      ends.push_back(*p.parent_end);
  }
  if (!starts.empty()) {
    auto started = store::start_workflows(tx, starts, partition_count);
    if (!started)
      return std::move(started.error());
    std::vector<store::sub_workflow_link> links;
    for (size_t i = 0; i < starts.size(); ++i) {
      const auto& r = (*started)[i];
      if (r) {
        if (r->created)
          fx.counts.started.push_back(starts[i].name);
        auto shard = r->shard.value();
        if (served.count(shard) != 0)
          fx.more_here = true;
        else
          fx.hints.shards.insert(shard);
        fx.hints.outbox_shards.insert(shard);
        if (parents[i])
          links.push_back({parents[i]->workflow, parents[i]->task, r->id});
        if (starters[i]) {
          // START_WORKFLOW does not wait for the workflow it started (Conductor's output).
          store::sub_workflow_end e;
          e.parent = starters[i]->workflow;
          e.task = starters[i]->task;
          e.child = r->id;
          e.status = flow::task_status::completed;
          e.output = store::json(boost::json::object{{"workflowId", r->id.str()}});
          ends.push_back(std::move(e));
        }
      } else if (starters[i] || parents[i]) {
        // The workflow cannot start (its definition is missing): the task that started it
        // fails, and its workflow's decide() applies the task's retry rules.
        const auto& by = starters[i] ? *starters[i] : *parents[i];
        store::sub_workflow_end e;
        e.parent = by.workflow;
        e.task = by.task;
        e.status = flow::task_status::failed;
        e.reason = (starters[i] ? "startWorkflow: workflow " : "sub workflow ")
                   + flow::quoted(starts[i].name) + " could not start: "
                   + nf::message_of(r.error());
        ends.push_back(std::move(e));
      }
      else
        folder_logger("decider")->warn("failure_workflow_not_started name={} reason=\"{}\"",
                                     starts[i].name, nf::message_of(r.error()));
    }
    if (auto r = store::link_sub_workflows(tx, links); !r)
      return r;
  }
  if (!ends.empty()) {
    if (auto r = store::finish_sub_workflow_tasks(tx, ends); !r)
      return r;
    for (const auto& e : ends) {
      auto shard = shard_of(e.parent.str(), partition_count);
      if (served.count(shard) != 0)
        fx.more_here = true;
      else
        fx.hints.shards.insert(shard);
      fx.hints.outbox_shards.insert(shard);
    }
  }
  return {};
}

} // namespace nf::engine

namespace nf::engine {

void decided_counts::merge(decided_counts&& o) {
  auto append = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()),
              std::make_move_iterator(from.end()));
  };
  append(started, o.started);
  append(ended, o.ended);
  append(task_ends, o.task_ends);
}

} // namespace nf::engine
