#pragma once

// The in-memory twin of what the store writes: a snapshot with a decision or
// an edit applied. Used by tests, benchmarks and any cache of snapshots.

#include "flow/decision.hpp"
#include "flow/operations.hpp"
#include "flow/snapshot.hpp"

namespace nf::flow {

/// Inserts scheduled tasks (scheduled_time = now), applies updates (end_time
/// = now when terminal), merges variables and sets the workflow's end.
snapshot apply(snapshot s, const decision& d, time_ms now);
snapshot apply(snapshot s, const edit& e, time_ms now);

} // namespace nf::flow
