#pragma once

// Links from this node to the other nodes of the cluster (docs/engine.md §2): the
// published client_api actor of each, reached by its "Nodes"."address" (HOST:PORT)
// through CAF's middleman, opened on first use without blocking the node, and
// forgotten when the peer goes down (the next use opens it again).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace nf::actors {

class peer_links {
public:
  /// Called once the link is open (with the peer) or failed (with nullptr).
  using ready_fn = std::function<void(const caf::actor* peer)>;

  /// Calls `f` with the peer at `address`, at once when its link is open, else once
  /// the link opened or failed. `self` (the node) opens it and monitors the peer.
  void with(caf::event_based_actor* self, const std::string& address, ready_fn f);

  /// The peer at `address` if its link is open, else nullptr (and it starts opening).
  const caf::actor* open_or_start(caf::event_based_actor* self, const std::string& address);

  /// A monitored peer went down: true if it was one of ours.
  bool forget(const caf::actor_addr& who);

private:
  std::map<std::string, caf::actor> open_;
  std::map<std::string, std::vector<ready_fn>> opening_;
};

} // namespace nf::actors
