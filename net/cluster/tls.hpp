#pragma once

// Mutual TLS between nodes (cluster.tls_*): which files a node uses, checked before the
// actor system starts, and handed to CAF's OpenSSL module. CAF reads the files again on
// every connection and throws on its I/O thread when one does not load, so a node refuses
// to start instead of failing later at its first peer.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "config/settings.hpp"
#include "proto/client_api.hpp"

namespace nf::net {

struct cluster_tls {
  std::string ca_file;   ///< PEM: the CA every node's certificate is signed by
  std::string cert_file; ///< PEM: this node's certificate
  std::string key_file;  ///< PEM: its private key, unencrypted
};

/// The cluster.tls_* files, or nullopt when none is set (TLS off). A partial set, a
/// cluster.port missing with TLS or given without it, a file that cannot be read or does
/// not hold what it should each add an error naming the setting; the result is nullopt then.
std::optional<cluster_tls> read_cluster_tls(const config::values& settings,
                                            std::vector<std::string>& errors);

/// Loads CAF's OpenSSL module into `cfg` with `tls`'s files: each connection through it
/// presents this node's certificate and requires the peer's, signed by the cluster CA.
void use_cluster_tls(caf::actor_system_config& cfg, const cluster_tls& tls);

/// Publishes `api` through the OpenSSL module on `host`:`port` (-1 or 0: a free port);
/// the bound port.
caf::expected<uint16_t> open_cluster_door(const client_api& api, const std::string& host,
                                          int64_t port);

/// Stops publishing `api` on the cluster door `port` (waits up to a second).
void close_cluster_door(caf::actor_system& sys, const client_api& api, uint16_t port);

} // namespace nf::net
