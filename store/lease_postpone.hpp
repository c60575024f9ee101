#pragma once

// A worker that reports a task IN_PROGRESS with `callbackAfterSeconds` gives the task back
// for now (Conductor's callback): its lease ends, the task is SCHEDULED again as the same
// attempt, and a `delay` timer puts it back in its queue when the seconds have passed
// (store/timers.cpp), where the next poll takes it with a fresh lease token. Meanwhile no
// lease runs out and no worker holds it; the poll timeout, which waits for a first poll,
// does not apply to a task polled before (flow/retry.hpp).

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "proto/limits.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct postponed_lease {
  workflow_id workflow;
  task_id task;
  lease_token token;
  int64_t after_seconds = 1;  ///< 1 … nf::max_callback_after_seconds
};

/// Ends the lease (only while `token` still holds it, I5: `lease_lost` otherwise), and arms
/// the timer that queues the task again, in one transaction. Returns when the task is due
/// back in its queue (server clock, ms since the epoch).
caf::expected<int64_t> postpone_lease(connection& conn, const postponed_lease& p);

/// Conductor's resetcallbacks: each task of `workflow` waiting out a `delay` timer (a
/// callback, a retry's delay or a start delay) is queued now instead. Its timer stays and
/// finds the task queued or gone when it fires, which enqueues nothing twice. Answers the
/// queues that received a task.
caf::expected<std::vector<std::string>> queue_delayed_now(connection& conn,
                                                          const workflow_id& workflow);

} // namespace nf::store
