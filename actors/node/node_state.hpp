#pragma once

// What the node supervisor (node.cpp) keeps, shared with the files that act for it: the
// relay of requests to other nodes (relay.cpp) and the lessors it runs for partitions it
// does not own (guest_lessors.cpp). Lookups into it are below.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/logger.h>

#include "actors/decider/committer_split.hpp"
#include "actors/node/node.hpp"
#include "actors/node/peer_health.hpp"
#include "actors/partition/context.hpp"
#include "actors/partition/partition.hpp"
#include "engine/lease/lease_memory.hpp"
#include "engine/lease/waiting_polls.hpp"
#include "proto/messages.hpp"

namespace nf::actors::node_impl {

struct node_state {
  node_options opt;
  int partitions = 16;
  bool nudges = true;
  std::string address;
  caf::actor membership;
  caf::actor maintenance;
  caf::actor scheduler;
  caf::actor runner;  ///< started once membership first reports (start_runner)
  caf::actor script_runner; ///< likewise, when the node has a sandbox pool
  caf::actor vector_runner; ///< likewise (LLM_STORE_EMBEDDINGS, LLM_SEARCH_EMBEDDINGS)
  /// Decide for the partitions of this node: at low load committers[0] for all of them,
  /// under load partition p goes to committers[p mod N] (committer_split).
  std::vector<caf::actor> committers;
  std::shared_ptr<committer_split> split;
  /// The lessors' parked polls, lent to the committers (null: lessor.lease_in_decision off).
  std::shared_ptr<engine::waiting_polls> waiting;
  /// The leases this node's lessors and committers made, for their completions.
  std::shared_ptr<engine::lease_memory> leases = std::make_shared<engine::lease_memory>();
  caf::actor outbox_relay;  ///< delivers the outbox of every partition of this node
  caf::actor node_timer;    ///< fires the timers of every partition of this node
  std::vector<int16_t> owned;  ///< what membership last said
  /// The epoch membership holds each owned partition at, and this node's id: what the
  /// partition's writes are fenced by (store/partition_fence.hpp).
  std::map<int16_t, int64_t> epochs;
  std::string node_id;
  std::vector<std::string> owners;  ///< every partition's owner address ("" = none), ditto
  std::map<int16_t, partition_handles> parts;
  /// Requests relayed to the owner of their partition and not yet answered, by id: what to
  /// do when the owner does not answer in time (write_through), and its address.
  struct relayed {
    std::string address;
    std::function<void()> here;
  };
  std::map<uint64_t, relayed> relays;
  uint64_t next_relay = 1;
  /// Reports for the owners of their workflows' partitions, by owner address, gathered
  /// until the node reaches the flush it queued behind the first (forward_reports).
  struct queued_report {
    int16_t shard;
    caf::response_promise rp;
    msg::task_result m;
    std::chrono::steady_clock::time_point since;
  };
  std::map<std::string, std::vector<queued_report>> outgoing_reports;
  std::optional<peer_health> health;
  std::chrono::milliseconds peer_answer{2000};
  /// Lessors of partitions owned by a peer this node cannot reach, by shard: the polls for
  /// their queues lease from the database here meanwhile (write_through).
  std::map<int16_t, caf::actor> stand_ins;
  /// cluster.lease_locally: polls for the queues of partitions another node owns are leased
  /// here, by these lessors (by shard), which offer them to this node's committers.
  bool lease_locally = true;
  std::map<int16_t, caf::actor> local_lessors;
  /// The other nodes that own partitions (from `owners`): where work hints go when polls
  /// are leased locally, since any of them may hold a parked poll for the queue.
  std::vector<std::string> peer_addresses;
  size_t next_start = 0;
  size_t next_peer = 0; ///< the deciding node the next start or poll goes to (deciding_peer)
  bool stopping = false;
  std::shared_ptr<spdlog::logger> log;

  static inline const char* name = "nf.node";
};

using node_actor = caf::stateful_actor<node_state>;

/// The handles of `shard`'s partition when this node owns it, else null.
const partition_handles* owner(node_actor* self, int16_t shard);

/// `unavailable: partition N is not owned by this node`.
caf::error not_owned(int16_t shard);

/// The address of the node that owns `shard` by membership's last word, or "" when
/// that is nobody, unknown or this node itself.
std::string owner_elsewhere(node_actor* self, int16_t shard);

/// What a partition's actors (or a guest lessor of it) are started with.
partition_context context_of(node_actor* self, int16_t shard);

} // namespace nf::actors::node_impl
