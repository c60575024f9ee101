#pragma once

// The in-process system-task runner (docs/engine.md §4): executes HTTP tasks.
// It long-polls the queue `_system.http` through the node like any worker, so
// its tasks get the same leases, fencing (I5), timeouts and retries, performs
// each task's request (http_task.hpp) and completes it through the node
// (complete_atom, msg::task_result). At most `concurrency` tasks run at once.

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/settings.hpp"
#include "engine/http/request.hpp"
#include "engine/secrets/source.hpp"

namespace nf::actors {

struct system_task_options {
  std::shared_ptr<http::port> http; ///< where the tasks' requests go out
  caf::actor node; ///< routes (poll_atom, …) to the queue's lessor and (complete_atom, …) on
  config::values settings = config::values::defaults();
  int concurrency = 0;                    ///< 0 = system_tasks.concurrency
  std::string worker_id = "nodeflow.system"; ///< "workerId" on the leased tasks
  /// Values of the `${secrets.NAME}` in a request; null = a request naming one fails.
  std::shared_ptr<engine::secrets::source> secrets;
};

/// Spawns the runner; it stops with its parent (link it) like every node actor.
caf::actor spawn_system_task_runner(caf::actor_system& sys, const system_task_options& opt);

} // namespace nf::actors
