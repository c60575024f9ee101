#pragma once

// The polling loop both system-task runners share: long-polls one internal queue through
// the node for as many tasks as there are free slots, hands each leased task to `start`
// (which spawns a detached, monitored worker) and polls again when a worker ends.

#include <chrono>
#include <functional>
#include <string>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/fwd.hpp>

#include "proto/messages.hpp"

namespace nf::actors {

struct queue_runner_options {
  caf::actor node;          ///< routes (poll_atom, …) to the queue's lessor
  std::string queue;        ///< the internal queue polled
  std::string worker_id;    ///< "workerId" on the leased tasks
  std::string log_name;     ///< what its log lines say it runs ("system_task", "script_task")
  int concurrency = 1;      ///< tasks in flight at most
  std::chrono::milliseconds poll_timeout{10000};
  /// Spawns the worker of one leased task with caf::detached + caf::monitored.
  std::function<void(caf::event_based_actor* self, msg::leased_task task)> start;
};

/// Spawns the runner; it stops with its parent (link it) like every node actor.
caf::actor spawn_queue_runner(caf::actor_system& sys, queue_runner_options opt);

} // namespace nf::actors
