#pragma once

// Links from this node to the other nodes of the cluster (docs/engine.md §2): the
// published client_api actor of each, reached by its "Nodes"."address" (HOST:PORT),
// opened on first use without blocking the node, and forgotten when the peer goes down
// (the next use opens it again). The node routes through this interface; the wire
// behind it lives in net/cluster/.

#include <functional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace nf::actors {

class peer_links {
public:
  /// Called once the link is open (with the peer) or failed (with nullptr).
  using ready_fn = std::function<void(const caf::actor* peer)>;

  virtual ~peer_links() = default;

  /// Calls `f` with the peer at `address`, at once when its link is open, else once
  /// the link opened or failed. `self` (the node) opens it and monitors the peer.
  virtual void with(caf::event_based_actor* self, const std::string& address, ready_fn f) = 0;

  /// The peer at `address` if its link is open, else nullptr (and it starts opening).
  virtual const caf::actor* open_or_start(caf::event_based_actor* self,
                                          const std::string& address) = 0;

  /// A monitored peer went down: true if it was one of ours.
  virtual bool forget(caf::event_based_actor* self, const caf::actor_addr& who) = 0;

  /// The owners of the partitions as membership last said (addresses, "" = none): the links
  /// this node is the one to open are opened now. A link of those that fails or goes down
  /// has the node told `(peer_atom)` a moment later, to call this again.
  virtual void owners_known(caf::event_based_actor* self, const std::vector<std::string>& owners) {
    (void)self;
    (void)owners;
  }

  /// The `(peer_atom)` that owners_known asked for came: as owners_known.
  virtual void reopen(caf::event_based_actor* self, const std::vector<std::string>& owners) {
    owners_known(self, owners);
  }

  /// The node at `address` opened the link between the two and introduced its api, `peer`.
  virtual void adopt(caf::event_based_actor* self, const std::string& address, caf::actor peer) {
    (void)self;
    (void)address;
    (void)peer;
  }
};

/// A node that links to no other (one process alone, tests): every link fails at once, so
/// forwarded requests are answered `unavailable` and hints are dropped (I9).
class no_peer_links : public peer_links {
public:
  void with(caf::event_based_actor*, const std::string&, ready_fn f) override { f(nullptr); }
  const caf::actor* open_or_start(caf::event_based_actor*, const std::string&) override {
    return nullptr;
  }
  bool forget(caf::event_based_actor*, const caf::actor_addr&) override { return false; }
};

} // namespace nf::actors
