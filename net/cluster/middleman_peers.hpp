#pragma once

// The cluster's links over CAF's middleman (or its OpenSSL module with cluster TLS): a
// peer's published client_api actor is reached with a non-blocking connect request to this
// system's middleman, monitored, and forgotten when it goes down.

#include <map>
#include <string>
#include <vector>

#include "actors/node/peer_links.hpp"

namespace nf::net {

class middleman_peers : public actors::peer_links {
public:
  /// With `tls` peers are reached through CAF's OpenSSL module (cluster.tls_*): its
  /// middleman actor connects like the plain one, with a mutual TLS handshake first.
  explicit middleman_peers(bool tls = false) : tls_{tls} {}

  void with(caf::event_based_actor* self, const std::string& address, ready_fn f) override;
  const caf::actor* open_or_start(caf::event_based_actor* self,
                                  const std::string& address) override;
  bool forget(const caf::actor_addr& who) override;

private:
  bool tls_;
  std::map<std::string, caf::actor> open_;
  std::map<std::string, std::vector<ready_fn>> opening_;
};

} // namespace nf::net
