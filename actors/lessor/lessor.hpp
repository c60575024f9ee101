#pragma once

// The lessor of one partition: hands out the tasks of the queues it owns
// (queue_shard(queue) == shard). Protocol (docs/engine.md §2):
//   (poll_atom, msg::poll_request) -> std::vector<msg::leased_task>
//       batched with every other pending poll into one lease transaction; with
//       nothing to lease the poll is parked until a work hint, a retry tick or
//       its timeout (at most lessor.max_poll_timeout_ms), then answered empty.
//   (work_atom, std::string queue)
//       hint: the queue got work; its parked polls are retried at once.
//   (lent_atom, int64_t poll, std::vector<msg::leased_task>)
//       a committer hands back a parked poll it was lent (waiting_polls.hpp), with
//       the tasks it leased to it in its own transaction: answered with them, or
//       retried like any poll when there are none.
// It also retries parked polls every lessor.poll_interval_ms, so no hint is
// needed for progress (I9). It sends the node (outbox_atom, int16_t shard) for
// the events its transactions wrote. Expired leases are swept by the node's
// timer (timer/node_timer.hpp).

#include <functional>
#include <memory>

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the lessor of `ctx.shard` (detached: it owns a database connection).
caf::actor spawn_lessor(caf::actor_system& sys, const partition_context& ctx);

class lease_store;

/// Builds a lessor's database (lessor/lease_store.hpp); empty: its own connection to ctx.dsn.
using lease_store_factory = std::function<std::unique_ptr<lease_store>()>;

/// The same with its database given: a lessor with a fake one may run on the scheduler
/// (`detached` false), where tests drive it deterministically.
caf::actor spawn_lessor(caf::actor_system& sys, const partition_context& ctx,
                        lease_store_factory db, bool detached);

} // namespace nf::actors
