#pragma once

// The HTTP door of `nodeflow serve`: the route table, the gateway to the api actor, the hub
// of the live history streams (its LISTEN connection to `dsn`) and the Beast server, built
// from the settings (http.*) and stopped before the actor system.

#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "config/settings.hpp"
#include "proto/client_api.hpp"

namespace nf::net::web {
class authenticator;
}
namespace boost::asio::ssl {
class context;
} // namespace boost::asio::ssl

namespace nf::cmd {

class http_door {
public:
  /// Off (no server) when http.port is 0. `auth` (started, shared with the client
  /// protocol's door; null = auth off) checks every request's credentials; HTTPS only with
  /// `tls` (net/web/tls.hpp).
  http_door(caf::actor_system& sys, const config::values& settings, client_api api,
            const std::string& dsn, std::shared_ptr<net::web::authenticator> auth,
            std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~http_door();

  bool enabled() const;
  /// Checks http.ui_dir and binds the port without serving yet, so that a node that
  /// could not serve HTTP never joins the cluster; answers the bound port.
  caf::expected<uint16_t> bind();
  /// Binds unless bound, starts the history streams' hub and serves; answers the port.
  caf::expected<uint16_t> start();
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace nf::cmd
