#include "flow/decision.hpp"

#include <array>
#include <tuple>

#include "flow/ascii.hpp"


namespace nf::flow {

std::string_view to_string(timer_kind k) {
  static constexpr std::array<std::string_view, 6> labels{
    "scheduleToStart", "startToClose", "taskTimeout", "workflowTimeout", "wait", "delay",
  };
  return labels[static_cast<std::size_t>(k)];
}

bool decision::empty() const {
  return schedule.empty() && updates.empty() && arm.empty() && cancel.empty()
         && variables.empty() && events.empty() && !status && sub_workflows.empty()
         && !failure_workflow && !decide_again;
}

event task_event(const task_identity& id, task_type type, task_status status,
                 const std::string& reason) {
  std::string name = "task." + ascii_lower(to_string(status));
  boost::json::object payload{
    {"ref", id.ref},           {"iteration", id.iteration}, {"attempt", id.attempt},
    {"type", to_string(type)}, {"status", to_string(status)},
  };
  if (!reason.empty())
    payload["reason"] = reason;
  return {name, name + '/' + to_string(id), std::move(payload)};
}

bool operator==(const scheduled_task& a, const scheduled_task& b) {
  auto tie = [](const scheduled_task& t) {
    return std::tie(t.id, t.type, t.task_def_name, t.queue, t.input, t.start_delay_ms, t.status,
                    t.output, t.reason_for_incompletion, t.cache_key, t.cache_ttl_seconds);
  };
  return tie(a) == tie(b);
}

bool operator==(const task_update& a, const task_update& b) {
  return a.id == b.id && a.status == b.status && a.output == b.output
         && a.reason_for_incompletion == b.reason_for_incompletion;
}

bool operator==(const timer& a, const timer& b) {
  return a.kind == b.kind && a.task == b.task && a.fire_at == b.fire_at;
}

bool operator==(const timer_ref& a, const timer_ref& b) {
  return a.kind == b.kind && a.task == b.task;
}

bool operator==(const event& a, const event& b) {
  return a.type == b.type && a.key == b.key && a.payload == b.payload;
}

bool operator==(const sub_workflow_start& a, const sub_workflow_start& b) {
  return a.parent == b.parent && a.name == b.name && a.version == b.version
         && a.input == b.input && a.detached == b.detached
         && a.correlation_id == b.correlation_id && a.priority == b.priority
         && a.idempotency_key == b.idempotency_key;
}

bool operator==(const failure_workflow_start& a, const failure_workflow_start& b) {
  return a.name == b.name && a.input == b.input;
}

bool operator==(const decision& a, const decision& b) {
  auto tie = [](const decision& d) {
    return std::tie(d.schedule, d.updates, d.arm, d.cancel, d.variables, d.events, d.status,
                    d.output, d.reason_for_incompletion, d.sub_workflows, d.failure_workflow,
                    d.decide_again);
  };
  return tie(a) == tie(b);
}

} // namespace nf::flow
