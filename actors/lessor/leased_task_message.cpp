#include "actors/lessor/leased_task_message.hpp"

namespace nf::actors {

msg::leased_task to_message(const store::leased_task& t) {
  msg::leased_task m;
  m.task_id = t.task.str();
  m.workflow_id = t.workflow.str();
  m.ref = t.ref_name;
  m.iteration = t.iteration;
  m.attempt = t.attempt;
  m.task_type = t.task_type;
  m.task_def_name = t.task_def_name;
  m.input_json = t.input;
  m.lease_token = t.token.str();
  m.lease_expires_at_ms = t.lease_expires_at_ms;
  m.poll_count = t.poll_count;
  m.output_json = t.output;
  return m;
}

} // namespace nf::actors
