#pragma once

// The decide committer of a node (docs/engine.md §1–§3): runs the decider
// transaction for every partition the node serves. A partition's decider stamps
// its starts with ids in its shard and hands its requests here; whatever arrived
// from any partition before a flush shares ONE transaction, which also claims the
// pending "DecideQueues" rows of every served shard. On a 2-core machine sixteen
// partitions committing apart made sixteen small transactions where one larger
// one does the same work for a fraction of the statements (docs/perf/).
// Protocol (dynamically typed):
//   (join_atom, int16_t shard)
//       from a partition's decider: `shard` is the node's until that decider goes down;
//       the committer decides for it while committer_split gives it this committer;
//   (start_atom, int16_t shard, msg::start_request) -> msg::start_reply
//       starts a workflow with an id in `shard`, deciding its first step in the
//       same transaction (fast path a);
//   (complete_atom, msg::task_result)      -> std::string (JSON) | error `lease lost`
//   (command_atom, msg::workflow_command)  -> std::string (JSON)
//   (decide_atom)
//       hint: "DecideQueues" rows of a served shard may be waiting.
// A task it queues where a poll is parked (waiting_polls.hpp) it leases to that
// poll in the same transaction, and hands the poll back to its lessor after the
// commit: (lent_atom, int64_t poll, std::vector<msg::leased_task>).
// After each commit it answers, then sends the node the hints (work_atom queue,
// armed_atom shard ms, outbox_atom shard, decide_atom shard for shards served
// elsewhere). It polls the served shards' "DecideQueues" rows every
// decider.poll_interval_ms (I9).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "engine/decide/decide_batches.hpp"
#include "config/settings.hpp"
#include "store/db_clock.hpp"

namespace nf::engine {
class lease_memory;
class waiting_polls;
} // namespace nf::engine

namespace nf::actors {

class committer_split;
class sink_presence;
struct committer_context;

/// What a committer runs its flushes through (engine/decide/decide_batches.hpp).
using decide_batches_factory =
  std::function<std::unique_ptr<engine::decide_batches>(const committer_context&)>;

/// The real one: a decider_core on its own connection to `ctx.dsn`.
std::unique_ptr<engine::decide_batches> connect_decide_batches(const committer_context& ctx);

struct committer_context {
  int partition_count = 16;  ///< P, equal to ClusterSettings.partitionCount
  /// This committer's place among the node's, and which of them decides for which
  /// joined shard now (null: every joined shard is this committer's).
  size_t index = 0;
  std::shared_ptr<committer_split> split;
  std::string dsn;           ///< for the committer's own connection
  caf::actor node;           ///< receives the hints
  /// The node's parked polls: a task queued where one waits is leased to it in the
  /// same transaction (null: never, lessor.lease_in_decision = false).
  std::shared_ptr<engine::waiting_polls> waiting;
  /// The node's lease memory (lease_memory.hpp; null: one of the committer's own).
  std::shared_ptr<engine::lease_memory> leases;
  /// Whether the node's outbox relay has sinks to deliver to (null: hint it always).
  std::shared_ptr<const sink_presence> sinks;
  config::values settings = config::values::defaults();
  decide_batches_factory batches = connect_decide_batches;
  /// The wall clock the timers a batch arms are compared with (timer hints): Postgres's,
  /// as their fire times are.
  std::function<std::chrono::system_clock::time_point()> wall_clock = [] {
    return db_clock_now();
  };
  /// Whether it runs on a thread of its own, as it blocks on its database; a committer
  /// with a fake `batches` may run on the scheduler (tests drive it deterministically).
  bool detached = true;
};

/// Spawns a node's decide committer (detached unless `ctx.detached` is false).
caf::actor spawn_decide_committer(caf::actor_system& sys, const committer_context& ctx);

} // namespace nf::actors
