#include "engine/decide/counting.hpp"

#include "engine/metrics/node_metrics.hpp"

namespace nf::engine {

decide_counting::decide_counting()
  : started_(metrics::node_metrics().workflows_started),
    ended_(metrics::node_metrics().workflows_ended),
    task_ends_(metrics::node_metrics().tasks_ended) {}

void decide_counting::started(std::string_view workflow) {
  started_.with(workflow).inc();
}

void decide_counting::record(const decided_counts& c) {
  for (const auto& name : c.started)
    started_.with(name).inc();
  for (const auto& [name, status] : c.ended)
    ended_.with(name, metrics::status_label(status)).inc();
  for (const auto& [name, status] : c.task_ends)
    task_ends_.with(name, metrics::status_label(status)).inc();
}

} // namespace nf::engine
