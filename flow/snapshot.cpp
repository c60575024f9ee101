#include "flow/snapshot.hpp"

#include <tuple>

#include "flow/definitions.hpp"

namespace nf::flow {

bool operator==(const task_execution& a, const task_execution& b) {
  auto tie = [](const task_execution& e) {
    return std::tie(e.id, e.type, e.task_def_name, e.status, e.input, e.output,
                    e.reason_for_incompletion, e.scheduled_time, e.start_delay_ms,
                    e.start_time, e.end_time, e.poll_count, e.task_id);
  };
  return tie(a) == tie(b);
}

bool operator==(const snapshot& a, const snapshot& b) {
  auto tie = [](const snapshot& s) {
    return std::tie(s.workflow_id, s.status, s.input, s.variables, s.output,
                    s.reason_for_incompletion, s.correlation_id, s.start_time, s.tasks,
                    s.signals);
  };
  return tie(a) == tie(b);
}

snapshot start_snapshot(const workflow_def& def, std::string workflow_id,
                        boost::json::object input, time_ms now) {
  snapshot s;
  s.workflow_id = std::move(workflow_id);
  s.input = std::move(input);
  s.variables = def.variables;
  s.start_time = now;
  return s;
}

} // namespace nf::flow
