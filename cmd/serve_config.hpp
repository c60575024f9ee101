#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "engine/http/egress.hpp"
#include "net/cluster/peer_address.hpp"
#include "net/cluster/tls.hpp"
#include "store/pg/link_settings.hpp"

namespace nf::cmd {

/// What `nodeflow serve` runs with: settings from defaults, then `--config
/// FILE`, then flags (`--port N`, `--http-port N`, `--cluster-port N`, `--dsn DSN`, and any declared setting as
/// `--key value`), each validated.
struct serve_config {
  config::values settings = config::values::defaults();
  std::string dsn;       ///< --dsn, else NODEFLOW_DSN, else db.dsn
  bool migrate = false;  ///< --migrate: apply pending migrations first
  http::egress_policy egress = http::egress_policy::defaults(); ///< egress.allow, egress.deny
  std::optional<net::cluster_tls> cluster_tls; ///< cluster.tls_*: set when nodes talk over mutual TLS
};

/// On a problem returns nullopt and fills `errors`, each naming the flag or
/// key and what was expected (the caller exits 2).
std::optional<serve_config> load_serve_config(int argc, char** argv,
                                              std::vector<std::string>& errors);

/// The egress policy `settings` name; nullopt with a problem added to `errors` when an
/// entry does not read (`nodeflow config --check` reports it too).
std::optional<http::egress_policy> read_egress(const config::values& settings,
                                               std::vector<std::string>& errors);

/// The database link's timeouts and keepalives the `db.` settings name.
store::link_settings link_settings_of(const config::values& settings);

/// `nodeflow serve`'s usage text.
const char* serve_usage();

} // namespace nf::cmd
