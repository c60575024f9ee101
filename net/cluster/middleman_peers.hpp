#pragma once

// The cluster's links over CAF's middleman (or its OpenSSL module with cluster TLS): a
// peer's published client_api actor is reached with a non-blocking connect request to this
// system's middleman, monitored, and forgotten when it goes down.
//
// One link per pair of nodes, opened by the one whose address sorts first: when two nodes
// dial each other at once, each keeps the connection the other opened and closes its own,
// and the pair loses both (the link drops and re-forms, over TLS again and again). The node
// that dials introduces its own api over the new link (`forward_atom, peer_atom`); the other
// waits for that, and the first node opens its links as soon as membership names the owners,
// and again a second after one of them failed or went down.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "actors/node/peer_links.hpp"

namespace nf::net {

class middleman_peers : public actors::peer_links {
public:
  /// With `tls` peers are reached through CAF's OpenSSL module (cluster.tls_*): its
  /// middleman actor connects like the plain one, with a mutual TLS handshake first.
  /// `self_address` is this node's advertised address, `api` its published api and
  /// `credential` the cluster's node credential (what introduces this node to another).
  middleman_peers(bool tls, std::string self_address, caf::actor api, std::string credential)
    : tls_{tls},
      self_address_{std::move(self_address)},
      api_{std::move(api)},
      credential_{std::move(credential)} {
  }

  void with(caf::event_based_actor* self, const std::string& address, ready_fn f) override;
  const caf::actor* open_or_start(caf::event_based_actor* self,
                                  const std::string& address) override;
  bool forget(caf::event_based_actor* self, const caf::actor_addr& who) override;
  void owners_known(caf::event_based_actor* self,
                    const std::vector<std::string>& owners) override;
  void reopen(caf::event_based_actor* self, const std::vector<std::string>& owners) override;
  void adopt(caf::event_based_actor* self, const std::string& address, caf::actor peer) override;

private:
  /// Whether this node opens the link to `address` (else the peer does).
  bool dials(const std::string& address) const { return self_address_ < address; }
  void dial(caf::event_based_actor* self, const std::string& address);
  void settle(const std::string& address, const caf::actor* peer);
  /// Has the node call reopen a moment from now (a link it opens failed or went down),
  /// unless a call is pending already.
  void open_again_soon(caf::event_based_actor* self);

  bool tls_;
  std::string self_address_;
  caf::actor api_;
  std::string credential_;
  bool reopen_pending_ = false;  ///< a (peer_atom) from open_again_soon is on its way
  std::map<std::string, caf::actor> open_;
  std::map<std::string, std::vector<ready_fn>> opening_;
  /// When the wait for a peer that opens the link itself began (past connect_timeout, the
  /// requests waiting for it are failed: it is down or cannot reach this node).
  std::map<std::string, std::chrono::steady_clock::time_point> awaited_since_;
};

} // namespace nf::net
