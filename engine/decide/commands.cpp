// Operator commands in the decider's transaction (pause, resume, terminate, retry, rerun,
// restart, skip, variables, decide, resetcallbacks), each decided on its workflow's snapshot
// before the claim.

#include "engine/decide/attempt_state.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "config/folder_logger.hpp"
#include "engine/audit_trail.hpp"
#include "store/decide_reads.hpp"
#include "store/index_scans.hpp"
#include "store/json.hpp"
#include "store/lease_postpone.hpp"
#include "store/request_ids.hpp"
#include "store/sharding.hpp"

namespace nf::engine {

namespace {

boost::json::object command_json(const command_request& c, flow::workflow_status status) {
  return {{"workflowId", c.id.str()}, {"op", c.op}, {"status", flow::to_string(status)}};
}

store::request_use request_of(const command_request& c, const namespace_id& ns) {
  return {ns, c.request_id, "command " + c.op, c.id.str()};
}

/// What a request id's row says of a command (`earlier`, from store/request_ids.hpp): true
/// when the command is answered without being applied, its answer added to `answers` (the
/// earlier request's, or the refusal of an id reused for another request); false when it is
/// to be applied; an error of the database fails the attempt.
caf::expected<bool> answered_earlier(caf::expected<std::optional<std::string>> earlier,
                                     std::vector<caf::expected<std::string>>& answers) {
  if (!earlier) {
    const auto& err = earlier.error();
    if (nf::code_of(err) != nf::errc::invalid || !nf::sqlstate_of(err).empty())
      return err;
    answers.emplace_back(err);
    return true;
  }
  if (!*earlier)
    return false;
  answers.emplace_back(std::move(**earlier));
  return true;
}


/// A terminated workflow's running children are terminated with it, in the same
/// transaction, down the tree (Conductor's behaviour). Each child's end finds its
/// parent task already CANCELED and leaves it alone.
caf::expected<void> terminate_children(store::transaction& tx, const store::workflow_snapshot& s,
                                       const std::set<int16_t>& served, int partition_count,
                                       plan_effects& fx,
                                       int depth = 0) {
  constexpr int max_depth = 32;
  std::vector<workflow_id> children;
  for (const auto& t : s.tasks)
    if (t.type == flow::task_type::sub_workflow && !flow::is_terminal(t.status)
        && t.sub_workflow_id)
      children.push_back(*t.sub_workflow_id);
  if (children.empty() || depth >= max_depth)
    return {};
  auto snaps = store::load_snapshots(tx, children);
  if (!snaps)
    return std::move(snaps.error());
  for (const auto& child : *snaps) {
    command_request c;
    c.op = "terminate";
    c.id = child.id;
    c.reason = "parent workflow " + s.id.str() + " was terminated";
    auto plan = plan_state_command(c, child);
    if (!plan || !*plan)
      continue; // already ended
    if (auto r = apply_plans(tx, {**plan}, served, partition_count, fx); !r)
      return r;
    if (auto r = terminate_children(tx, child, served, partition_count, fx, depth + 1); !r)
      return r;
  }
  return {};
}

// decide and resetcallbacks: no plan, no write to the workflow itself. decide requeues a RUNNING
// workflow for the decider's next claim, as a resume does; resetcallbacks queues the tasks that
// wait out a delay, and the lessors hear of them after the commit. Both change nothing when
// repeated, so neither claims a request id. Answers the refusal, nullopt when applied.
caf::expected<std::optional<caf::error>> requeue_command(store::transaction& tx,
                                                         const command_request& c,
                                                         const store::workflow_snapshot& s,
                                                         plan_effects& fx) {
  if (c.op == "decide") {
    if (s.status == flow::workflow_status::running) {
      if (auto r = store::requeue(tx.conn(), {s.id}, "command"); !r)
        return std::move(r.error());
      fx.more_here = true;
    }
    return std::optional<caf::error>{};
  }
  // Conductor refuses resetcallbacks for an ended workflow.
  if (flow::is_terminal(s.status))
    return std::optional<caf::error>{nf::make_error(
      nf::errc::invalid, "workflow " + s.id.str() + " is " + std::string{flow::to_string(s.status)}
                           + ": an ended workflow has no callbacks to reset")};
  auto queues = store::queue_delayed_now(tx.conn(), s.id);
  if (!queues)
    return std::move(queues.error());
  fx.hints.queues.insert(queues->begin(), queues->end());
  return std::optional<caf::error>{};
}

// The command's audit record: what identifies it, never its new input or variables' values
// (they may carry secrets), only that there was one, or the variables' names.
store::audit_event command_audit(const command_request& c, const namespace_id& ns) {
  boost::json::object details;
  if (!c.reason.empty())
    details["reason"] = c.reason;
  if (!c.task_ref.empty()) {
    details["taskRef"] = c.task_ref;
    details["iteration"] = c.iteration;
  }
  if (c.task_status)
    details["taskStatus"] = flow::to_string(*c.task_status);
  if ((c.op == "variables" || c.op == "state") && c.input) {
    boost::json::array names;
    for (const auto& kv : *c.input)
      names.emplace_back(kv.key());
    details["variablesSet"] = std::move(names);
  } else if (c.input) {
    details["inputReplaced"] = true;
  }
  auto e = audit_event(c.actor, c.origin, "workflow." + c.op, c.id.str(), std::move(details));
  e.ns = ns;
  return e;
}

} // namespace

caf::expected<void> decider_core::run_commands(store::transaction& tx, const batch_input& in,
                                               attempt_state& st) {
  // decide() runs with the server's clock in milliseconds: a clock in whole
  // seconds leaves a WAIT that is due later in the same second pending after
  // its timer fired, with nothing to wake it again.
  auto now = store::server_now_ms(tx.conn());
  if (!now)
    return std::move(now.error());
  auto now_ms = *now;
  // Each accepted command's record, written in this transaction after the loop in one
  // statement: a refused command (st.commands holds its error) has none, and a rolled-back
  // attempt takes its records with it.
  std::vector<store::audit_event> audits;
  // One at a time: commands are rare, and two on the same workflow must see each other.
  for (const auto& c : in.commands) {
    auto snaps = store::load_snapshots(tx, {c.id});
    if (!snaps)
      return std::move(snaps.error());
    if (snaps->empty() || (c.ns && snaps->front().ns != *c.ns)) {
      st.commands.emplace_back(
        nf::make_error(nf::errc::not_found, "workflow " + c.id.str() + " not found"));
      continue;
    }
    const auto& s = snaps->front();
    if (c.op == "decide" || c.op == "resetcallbacks") {
      auto refused = requeue_command(tx, c, s, st.fx);
      if (!refused)
        return std::move(refused.error());
      if (*refused) {
        st.commands.emplace_back(std::move(**refused));
        continue;
      }
      st.commands.emplace_back(boost::json::serialize(command_json(c, s.status)));
      audits.push_back(command_audit(c, s.ns));
      continue;
    }
    caf::expected<std::optional<workflow_plan>> plan{std::nullopt};
    if (c.op == "pause" || c.op == "resume" || c.op == "terminate") {
      plan = plan_state_command(c, s);
    } else {
      if (auto r = defs_.refresh(tx.conn(), {s.ns}); !r)
        return r;
      auto def = defs_.workflow_def(tx.conn(), s.ns, s.workflow_name, s.workflow_version);
      auto tdefs = defs_.task_defs(tx.conn(), s.ns);
      if (!tdefs)
        return std::move(tdefs.error());
      if (!def) {
        if (nf::code_of(def.error()) != nf::errc::not_found)
          return std::move(def.error());
        plan = def.error();
      } else {
        auto facts = store::load_history_facts(tx, {s.id});
        if (!facts)
          return std::move(facts.error());
        auto f = facts->find(s.id.str());
        auto p = plan_edit_command(c, s, **def, **tdefs, f == facts->end() ? nullptr : &f->second,
                                   now_ms);
        if (p)
          plan = std::optional<workflow_plan>{std::move(*p)};
        else
          plan = p.error();
      }
    }
    if (!plan) {
      // A retry of the command that made this one impossible (a second pause) is answered as
      // that one was.
      if (!c.request_id.empty()) {
        auto answered = answered_earlier(store::earlier_request(tx.conn(), request_of(c, s.ns)),
                                         st.commands);
        if (!answered)
          return std::move(answered.error());
        if (*answered)
          continue;
      }
      st.commands.emplace_back(plan.error());
      continue;
    }
    auto status = s.status;
    if (*plan) {
      const auto& p = **plan;
      if (p.edit)
        status = p.edit->status;
      if (p.write.status)
        status = *p.write.status;
    }
    auto answer = command_json(c, status);
    if (!c.request_id.empty()) {
      // One statement more, in this transaction: the command and its id commit together.
      auto answered = answered_earlier(
        store::claim_request(tx.conn(), request_of(c, s.ns), store::json(answer)), st.commands);
      if (!answered)
        return std::move(answered.error());
      if (*answered)
        continue;
    }
    if (*plan) {
      const auto& p = **plan;
      if (auto r = apply_plans(tx, {p}, shards_, partition_count_, st.fx); !r)
        return r;
      if (c.op == "terminate")
        if (auto r = terminate_children(tx, s, shards_, partition_count_, st.fx); !r)
          return r;
    }
    st.commands.emplace_back(boost::json::serialize(answer));
    audits.push_back(command_audit(c, s.ns));
  }
  return store::append_audits(tx.conn(), audits);
}

} // namespace nf::engine
