#pragma once

// The task definition a workflow task runs with: its inline `taskDefinition` in place
// of the registered one, then its own `retryCount` over either (as Conductor does).
// (Its `cacheConfig` keys the cache by the task's input instead: see cache_key_of.) decide() and the engine's reading of a row both go through it, so
// a retry's delay is computed from the same definition that scheduled it.

#include "flow/definitions.hpp"

namespace nf::flow {

/// Whether `t` changes the definition it runs with at all.
bool has_overrides(const workflow_task& t);

/// `registered` is the definition registered under t.name, or nullptr (then a task
/// runs with task_def::unregistered's defaults).
task_def effective_def(const workflow_task& t, const task_def* registered);

} // namespace nf::flow
