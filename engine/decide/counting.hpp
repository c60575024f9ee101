#pragma once

// The decider's part of the node's metrics (engine/metrics/node_metrics.hpp): workflows
// started and ended, task attempts ended, counted from the transactions that committed
// (decider_core::run), so a rolled-back attempt or a stale retry counts nothing twice.
// Every workflow's end and every task's end passes through one committed decision (I3), so
// this is the one place they are counted. One per decider_core, on its thread: the
// children it counts are cached by label, a count is a hash lookup and an atomic add.

#include <string_view>

#include "engine/decide/plans.hpp"
#include "engine/metrics/registry.hpp"

namespace nf::engine {

class decide_counting {
public:
  decide_counting();
  void started(std::string_view workflow);
  void record(const decided_counts& c);

private:
  metrics::label_cache<metrics::counter> started_;
  metrics::label_cache<metrics::counter> ended_;
  metrics::label_cache<metrics::counter> task_ends_;
};

} // namespace nf::engine
