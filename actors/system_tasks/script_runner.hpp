#pragma once

// The in-process script runner: executes INLINE, LAMBDA and JSON_JQ_TRANSFORM
// tasks. Like the HTTP runner (runner.hpp) it long-polls its queue
// `_system.script` through the node, so its tasks get the same leases, fencing,
// timeouts and retries; each task runs on a detached worker that waits for a
// sandbox process of the pool (engine/script/pool.hpp) and completes the task.

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/settings.hpp"
#include "engine/script/pool.hpp"

namespace nf::actors {

struct script_task_options {
  caf::actor node; ///< routes (poll_atom, …) to the queue's lessor and (complete_atom, …) on
  config::values settings = config::values::defaults();
  /// The sandbox processes; null = a pool made from the scripts.* settings.
  std::shared_ptr<engine::script::pool> scripts;
  std::string worker_id = "nodeflow.scripts"; ///< "workerId" on the leased tasks
};

/// Spawns the runner; it stops with its parent (link it) like every node actor.
caf::actor spawn_script_task_runner(caf::actor_system& sys, const script_task_options& opt);

/// The pool the scripts.* settings describe, re-executing this binary as `nodeflow sandbox`.
std::shared_ptr<engine::script::pool> make_script_pool(const config::values& settings);

} // namespace nf::actors
