#include "cmd/serve_config.hpp"

#include <utility>

#include "cmd/cli_args.hpp"

#include <boost/asio/ip/address.hpp>

namespace nf::cmd {

namespace {

bool is_loopback(const std::string& host) {
  if (host == "localhost")
    return true;
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

} // namespace

const char* serve_usage() {
  return "usage: nodeflow serve --dsn DSN [--port N] [--http-port N] [--cluster-port N] "
         "[--config FILE] [--migrate] [--auth on|off] [--<setting> VALUE]...\n"
         "  --auth off (auth.enabled false): every HTTP request is the admin of the default "
         "namespace; allowed only while node.host and http.host are loopback addresses\n"
         "  --cluster-port N (cluster.port): the node-to-node door, mutual TLS with the "
         "cluster.tls_* settings; -1 picks a free one\n"
         "  settings: see `nodeflow config --reference` (e.g. --engine.partitions 16)\n";
}

std::optional<http::egress_policy> read_egress(const config::values& settings,
                                               std::vector<std::string>& errors) {
  std::string error;
  auto p = http::egress_policy::parse(settings.get(config::keys::egress_allow),
                                      settings.get(config::keys::egress_deny), error);
  if (!p)
    errors.push_back(error);
  return p;
}

std::optional<serve_config> load_serve_config(int argc, char** argv,
                                              std::vector<std::string>& errors) {
  std::vector<std::string> value_flags{"dsn",          "port",   "http-port",
                                       "cluster-port", "config", "auth"};
  for (const auto& s : config::all_settings())
    value_flags.emplace_back(s.name);
  std::string error;
  auto args = parse_args(argc, argv, 0, value_flags, {"migrate"}, error);
  if (!args) {
    errors.push_back(error);
    return std::nullopt;
  }
  if (!args->positional.empty()) {
    errors.push_back("unexpected argument " + args->positional.front());
    return std::nullopt;
  }
  serve_config out;
  if (auto file = args->value("config")) {
    auto problems = config::load_file(*file, out.settings);
    errors.insert(errors.end(), problems.begin(), problems.end());
  }
  // Flags last: they override the file. Every --key of a declared setting is one.
  for (const auto& s : config::all_settings())
    for (const auto& raw : args->all(s.name))
      if (auto problem = out.settings.set(s.name, raw, "--" + std::string{s.name}))
        errors.push_back(*problem);
  if (auto port = args->value("port"))
    if (auto problem = out.settings.set(config::keys::node_port.name, *port, "--port"))
      errors.push_back(*problem);
  if (auto port = args->value("http-port"))
    if (auto problem = out.settings.set(config::keys::http_port.name, *port, "--http-port"))
      errors.push_back(*problem);
  if (auto port = args->value("cluster-port"))
    if (auto problem = out.settings.set(config::keys::cluster_port.name, *port, "--cluster-port"))
      errors.push_back(*problem);
  if (auto auth = args->value("auth")) {
    if (*auth == "on" || *auth == "off") {
      if (auto problem = out.settings.set(config::keys::auth_enabled.name,
                                          *auth == "on" ? "true" : "false", "--auth"))
        errors.push_back(*problem);
    } else {
      errors.push_back("--auth: expected on or off, got '" + *auth + "'");
    }
  }
  if (!out.settings.get(config::keys::auth_enabled))
    for (const auto* k : {&config::keys::node_host, &config::keys::http_host})
      if (!is_loopback(out.settings.get(*k)))
        errors.push_back(std::string{"auth is off (auth.enabled false) but "} + k->name + " is "
                         + out.settings.get(*k)
                         + ", not a loopback address: anyone who reaches it would be admin; "
                           "turn auth on or listen on 127.0.0.1 / ::1");
  // Half a TLS setup would silently serve plain HTTP: refuse it.
  {
    const auto& cert = out.settings.get(config::keys::http_tls_cert_file);
    const auto& key = out.settings.get(config::keys::http_tls_key_file);
    if (cert.empty() != key.empty())
      errors.push_back(std::string{cert.empty() ? config::keys::http_tls_cert_file.name
                                                : config::keys::http_tls_key_file.name}
                       + " is empty but "
                       + (cert.empty() ? config::keys::http_tls_key_file.name
                                       : config::keys::http_tls_cert_file.name)
                       + " is set: HTTPS needs both the certificate and its key (neither: plain "
                         "HTTP)");
  }
  out.dsn = resolve_dsn(*args);
  if (out.dsn.empty())
    out.dsn = out.settings.get(config::keys::db_dsn);
  if (out.dsn.empty())
    errors.push_back("no database: pass --dsn DSN, set NODEFLOW_DSN or db.dsn in the config file");
  out.migrate = args->has("migrate");
  if (auto egress = read_egress(out.settings, errors))
    out.egress = std::move(*egress);
  out.cluster_tls = net::read_cluster_tls(out.settings, errors);
  net::check_advertise(out.settings, errors);
  if (!errors.empty())
    return std::nullopt;
  return out;
}

store::link_settings link_settings_of(const config::values& settings) {
  store::link_settings s;
  s.connect_timeout_s = settings.get(config::keys::db_connect_timeout_s);
  s.keepalives_idle_s = settings.get(config::keys::db_keepalives_idle_s);
  s.keepalives_interval_s = settings.get(config::keys::db_keepalives_interval_s);
  s.keepalives_count = settings.get(config::keys::db_keepalives_count);
  s.tcp_user_timeout_ms = settings.get(config::keys::db_tcp_user_timeout_ms);
  s.statement_timeout_ms = settings.get(config::keys::db_statement_timeout_ms);
  s.lock_timeout_ms = settings.get(config::keys::db_lock_timeout_ms);
  s.idle_in_transaction_timeout_ms = settings.get(config::keys::db_idle_in_transaction_timeout_ms);
  return s;
}

} // namespace nf::cmd
