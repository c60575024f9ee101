#pragma once

// The node supervisor (docs/engine.md §1–§2): spawns membership, maintenance, the
// scheduler (workflow schedules; (schedules_atom) from the api is passed on to it), the
// system-task runner, and one partition supervisor (decider, lessor, timer, relay)
// per partition membership says it owns; it is the router of every request and
// hint to the actor that owns its partition:
//   (start_atom, msg::start_request)      -> msg::start_reply   to a decider it owns
//                                            (the decider makes the id in its shard)
//   (complete_atom, msg::task_result)     -> std::string        to the decider of shard_of(workflow)
//   (command_atom, msg::workflow_command) -> std::string        to the decider of shard_of(workflow)
//   (poll_atom, msg::poll_request)        -> vector<leased_task> to the lessor of queue_shard(queue)
//   (status_atom)                         -> std::string        JSON: node, owned partitions, epochs
// Requests are delegated (the owner answers the requester directly). A request for a
// partition another node owns (membership's (owners_atom, std::vector<std::string>))
// is forwarded to that node's api as (forward_atom, msg), which the node there serves
// or answers `unavailable: partition N is not owned by this node`, never forwarding it
// again; so is a request nobody is known to own. Hints — (work_atom, queue),
// (decide_atom, int16_t shard), (decide_atom, std::string workflow: its shard's),
// (armed_atom, int16_t shard, int64_t fire_at_ms), (outbox_atom, int16_t shard) — go to
// the owning actor; work and decide hints for
// another node's partition go to that node while a link to it is open. Hints are
// dropped when engine.nudges = false or nobody here or linked can take them (the
// owner's poll finds the work, I9).
// Stopping it (exit_reason::user_shutdown from `nodeflow serve` on SIGTERM) stops the
// partitions, and membership releases the leases and marks the node stopped.

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/node/peer_links.hpp"
#include "config/settings.hpp"
#include "engine/http/request.hpp"
#include "engine/script/pool.hpp"

namespace nf::actors {

struct node_options {
  std::string dsn;
  config::values settings = config::values::defaults();
  /// HOST:PORT other nodes and clients reach this node at (stored in "Nodes").
  std::string advertise;
  /// Links to the other nodes (net/cluster/; null: this node links to none).
  std::shared_ptr<peer_links> peers;
  /// What this node's forwarded requests carry as their `credential`: the cluster's node
  /// credential, without which another node that checks credentials refuses them.
  std::string peer_credential;
  /// Where HTTP tasks and webhooks go out (net/http/; null: they fail with a clear error).
  std::shared_ptr<http::port> http;
  /// The sandbox processes INLINE, LAMBDA and JSON_JQ_TRANSFORM tasks run in
  /// (actors/system_tasks/script_runner.hpp; null: no script runner, those tasks wait).
  std::shared_ptr<engine::script::pool> scripts;
};

caf::actor spawn_node(caf::actor_system& sys, node_options opt);

} // namespace nf::actors
