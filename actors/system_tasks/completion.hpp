#pragma once

// Reporting a system task's result through the node, shared by the HTTP and the
// script runners' task workers: a few attempts on transient errors, none after
// `lease lost`, then the worker quits (the lease expiring retries the task).

#include <memory>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <spdlog/logger.h>

#include "proto/messages.hpp"

namespace nf::actors {

/// Sends `result` (complete_atom) to `node`; on a transient failure asks the worker to
/// try again by sending itself (tick_atom, attempt + 1), which its behavior hands back here.
void complete_system_task(caf::event_based_actor* self, const caf::actor& node,
                          const msg::task_result& result, int attempt,
                          const std::shared_ptr<spdlog::logger>& log);

} // namespace nf::actors
