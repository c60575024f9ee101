#pragma once

// The task output cache on the decider's side: a SIMPLE task scheduled with a cache key
// whose key has a live entry ("TaskOutputCache", per namespace and task definition) is
// completed from it in the very decision that would have queued it, so no worker sees it.

#include <cstddef>
#include <functional>
#include <vector>

#include <caf/expected.hpp>

#include "engine/decide/plans.hpp"
#include "flow/decide.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// Decides again, for plan `i`, with the outputs found for its namespace.
using replan_fn = std::function<workflow_plan(std::size_t i, const flow::cached_outputs& found)>;

/// At most this many lookups per batch: a hit lets its workflow go on, and the next task may
/// be a cached one too. A task still unlooked-up after the last is queued for a worker.
constexpr int max_cache_lookups = 4;

/// Looks up the keys of the tasks `plans` insert (task_insert::cache_key) on `conn`, in the
/// transaction that will write the plans, and replaces each plan with a hit by `replan`'s.
/// One statement per round, and none for a batch with no cached task.
caf::expected<void> complete_from_cache(store::connection& conn, std::vector<workflow_plan>& plans,
                                        const replan_fn& replan);

} // namespace nf::engine
