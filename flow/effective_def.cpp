#include "flow/effective_def.hpp"

namespace nf::flow {

bool has_overrides(const workflow_task& t) {
  return t.task_definition.has_value() || t.retry_count.has_value();
}

task_def effective_def(const workflow_task& t, const task_def* registered) {
  task_def d = t.task_definition ? *t.task_definition
               : registered != nullptr ? *registered
                                       : task_def::unregistered(t.name);
  if (t.retry_count)
    d.retry_count = *t.retry_count;
  return d;
}

} // namespace nf::flow
