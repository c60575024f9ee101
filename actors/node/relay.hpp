#pragma once

// Requests for a partition another node owns, relayed to it (docs/engine.md §2): each as
// `(forward_atom, m)`, completions for one owner together, and done here through the
// database when the owner cannot be reached, refuses or does not answer in time (DESIGN I9).

#include <cstdint>
#include <string>

#include <caf/response_promise.hpp>

#include "actors/node/node_state.hpp"

namespace nf::actors::node_impl {

/// Forwards a request to the node that owns `shard`, as `(forward_atom, m)` (which
/// that node never forwards again, so two nodes that disagree about an owner cannot
/// pass a request back and forth); its answer goes straight to the requester. When that
/// node cannot be reached, does not answer in time, or is suspect or full
/// (peer_health.hpp), the work is done here instead. A completion waits for the others
/// queued for the same owner (forward_reports).
void forward(node_actor* self, int16_t shard, caf::response_promise rp, const msg::task_result& m);
void forward(node_actor* self, int16_t shard, caf::response_promise rp,
             const msg::workflow_command& m);
void forward(node_actor* self, int16_t shard, caf::response_promise rp, const msg::poll_request& m);

/// From a node that owns no partition (cluster.deciding_nodes) to the deciding node at
/// `address`, as above: a start there decides the new workflow, a poll parks where that
/// node's decisions lend new tasks. When it cannot be reached, the start is committed here
/// into `shard` for its owner to decide, and the poll leased here.
void forward_to(node_actor* self, const std::string& address, int16_t shard,
                caf::response_promise rp, const msg::start_request& m);
void forward_to(node_actor* self, const std::string& address, int16_t shard,
                caf::response_promise rp, const msg::poll_request& m);

/// How a relayed request ended: answered by the peer; refused by it as `unavailable` (it
/// does not own the partition now, or its database is away: the work is done here); or
/// not answered at all (the peer is suspect, and the work is done here).
enum class relay_end { answered, refused, silent };

/// Ends relayed request `id` (the answer, if any, is the caller's to deliver).
void end_relay(node_actor* self, uint64_t id, relay_end how, const std::string& why);

/// Relays the completions queued for `address` as one request (the flush queue_report asked for).
void forward_reports(node_actor* self, const std::string& address);

} // namespace nf::actors::node_impl
