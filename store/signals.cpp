#include "store/signals.hpp"

#include <boost/json.hpp>

#include "store/api_reads.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// The workflow's header while it has not ended; `invalid` saying what `needs` otherwise.
caf::expected<execution_header> unended_header(connection& conn, const workflow_id& id,
                                               const char* needs) {
  auto h = read_execution_header(conn, id);
  if (h && flow::is_terminal(h->status))
    return make_error(errc::invalid, "workflow " + id.str() + " is "
                                       + std::string{flow::to_string(h->status)} + ": " + needs);
  return h;
}

// The workflow's namespace, known once its row is read.
audit_event in_namespace(audit_event e, const namespace_id& ns) {
  if (!e.ns)
    e.ns = ns;
  return e;
}

// The task an update by reference answered (its stored answer, {"taskId"}).
task_id answered_task(const std::string& answer) {
  return task_id{std::string{boost::json::parse(answer).as_object().at("taskId").as_string()}};
}

// What `claim` says of this request before it is applied: nullopt to apply it (claimed, or no
// request id), else the earlier answer (stored in `claim->earlier`). `refused`: the request
// cannot be applied now (the workflow ended): an earlier request with its id is its answer,
// otherwise the refusal.
// `ns`: the workflow's namespace when its header was read (otherwise read here).
caf::expected<std::optional<std::string>> replay_of(connection& conn, const request_claim* claim,
                                                    std::optional<namespace_id> ns,
                                                    const workflow_id& id,
                                                    const caf::error* refused,
                                                    const boost::json::object& answer) {
  if (claim == nullptr) {
    if (refused != nullptr)
      return *refused;
    return std::optional<std::string>{};
  }
  if (!ns) {
    auto h = read_execution_header(conn, id);
    if (!h)
      return std::move(h.error());
    ns = h->ns;
  }
  request_use use{*ns, claim->id, claim->kind, id.str()};
  auto earlier = refused != nullptr ? earlier_request(conn, use)
                                    : claim_request(conn, use, json(answer));
  if (!earlier)
    return std::move(earlier.error());
  if (!*earlier && refused != nullptr)
    return *refused;
  if (*earlier && claim->earlier != nullptr)
    *claim->earlier = **earlier;
  return earlier;
}

} // namespace

caf::expected<void> deliver_signal(connection& conn, const workflow_id& id,
                                   const std::string& name, const boost::json::value& payload,
                                   const audit_event* audit, const request_claim* claim) {
  auto event_payload = json(boost::json::object{{"name", name}, {"payload", payload}});
  return perform_replanning(conn, [&](transaction&) -> caf::expected<void> {
    auto h = unended_header(conn, id, "signals go only to running or paused workflows");
    if (!h && (claim == nullptr || code_of(h.error()) != errc::invalid))
      return std::move(h.error());
    if (claim != nullptr) {
      auto ns = h ? std::optional<namespace_id>{h->ns} : std::nullopt;
      auto replay = replay_of(conn, claim, ns, id, h ? nullptr : &h.error(), claim->answer);
      if (!replay)
        return std::move(replay.error());
      if (*replay)
        return {};
    }
    transition_plan plan;
    plan.wakes.push_back({id, h->ns, h->shard, "signal"});
    plan.events.push_back({id, h->ns, h->shard, "SIGNAL_RECEIVED", std::nullopt, std::nullopt,
                           event_payload});
    if (auto a = apply_transition(conn, plan); !a)
      return a;
    return audit != nullptr ? append_audit(conn, in_namespace(*audit, h->ns))
                            : caf::expected<void>{};
  });
}

caf::expected<task_id> deliver_task_update(connection& conn, const workflow_id& id,
                                        const std::string& ref, const std::string& status,
                                        const boost::json::value& output,
                                        const std::string& worker_id,
                                        const audit_event* audit,
                                        const request_claim* claim) {
  boost::json::object fields{{"taskRef", ref}, {"status", status}, {"payload", output}};
  if (!worker_id.empty())
    fields["workerId"] = worker_id;
  auto event_payload = json(std::move(fields));
  return perform_replanning(conn, [&](transaction&) -> caf::expected<task_id> {
    auto h = unended_header(conn, id, "only a running workflow's tasks can be updated");
    if (!h && (claim == nullptr || code_of(h.error()) != errc::invalid))
      return std::move(h.error());
    // A retry of an update that ended the task (or the workflow) is answered as it was.
    auto replayed = [&](const caf::error& refused) -> caf::expected<task_id> {
      auto ns = h ? std::optional<namespace_id>{h->ns} : std::nullopt;
      auto replay = replay_of(conn, claim, ns, id, &refused, {});
      if (!replay)
        return std::move(replay.error());
      return answered_task(**replay);
    };
    if (!h)
      return replayed(h.error());
    auto t = latest_task_at_ref(conn, id, ref);
    if (!t)
      return std::move(t.error());
    if ((t->type != "WAIT" && t->type != "HUMAN")
        || (t->status != "IN_PROGRESS" && t->status != "SCHEDULED")) {
      auto refused = make_error(errc::invalid, "taskRefName: task " + ref + " is a " + t->type
                                                 + " task, " + t->status
                                                 + ": only a WAIT or HUMAN task still waiting is "
                                                   "completed by its reference name (workers "
                                                   "report theirs with the taskId a poll gave "
                                                   "them)");
      if (claim == nullptr)
        return refused;
      return replayed(refused);
    }
    if (claim != nullptr) {
      auto replay = replay_of(conn, claim, h->ns, id, nullptr,
                              boost::json::object{{"taskId", t->id.str()}});
      if (!replay)
        return std::move(replay.error());
      if (*replay)
        return answered_task(**replay);
    }
    transition_plan plan;
    plan.wakes.push_back({id, h->ns, h->shard, "task update"});
    plan.events.push_back({id, h->ns, h->shard, "SIGNAL_RECEIVED", t->id, ref, event_payload});
    if (auto a = apply_transition(conn, plan); !a)
      return std::move(a.error());
    if (audit != nullptr)
      if (auto a = append_audit(conn, in_namespace(*audit, h->ns)); !a)
        return std::move(a.error());
    return t->id;
  });
}

} // namespace nf::store
