#pragma once

// The in-process vector runner: executes LLM_STORE_EMBEDDINGS and LLM_SEARCH_EMBEDDINGS.
// Like the HTTP and script runners it long-polls its queue `_system.vectors` through the
// node, so its tasks get the same leases, fencing, timeouts and retries; each task runs on
// a detached worker that borrows one of the runner's database connections (at most
// `concurrency`, opened on first use), runs engine/system_tasks/vector_task.hpp and
// completes the task.

#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/settings.hpp"

namespace nf::actors {

struct vector_task_options {
  caf::actor node; ///< routes (poll_atom, …) to the queue's lessor and (complete_atom, …) on
  std::string dsn;
  config::values settings = config::values::defaults();
  int concurrency = 2;
  std::string worker_id = "nodeflow.vectors"; ///< "workerId" on the leased tasks
};

/// Spawns the runner; it stops with its parent (link it) like every node actor.
caf::actor spawn_vector_task_runner(caf::actor_system& sys, const vector_task_options& opt);

} // namespace nf::actors
