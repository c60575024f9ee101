#include "net/cluster/tls.hpp"

#include <chrono>
#include <fstream>
#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/scoped_actor.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace nf::net {

namespace {

std::string openssl_error() {
  std::string out;
  while (auto e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    out += out.empty() ? buf : std::string{"; "} + buf;
  }
  return out.empty() ? "not PEM" : out;
}

// An encrypted key would make OpenSSL prompt on the terminal: refuse it instead.
int no_passphrase(char*, int, int, void*) {
  return 0;
}

// Loads the three files the way CAF's OpenSSL session does, so what passes here also
// loads there; returns the problem naming the setting.
std::optional<std::string> check_files(const cluster_tls& t) {
  using ctx_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
  ctx_ptr ctx{SSL_CTX_new(TLS_method()), &SSL_CTX_free};
  if (!ctx)
    return "cluster TLS: cannot create an OpenSSL context: " + openssl_error();
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  ERR_clear_error();
  if (SSL_CTX_load_verify_locations(ctx.get(), t.ca_file.c_str(), nullptr) != 1)
    return std::string{config::keys::cluster_tls_ca_file.name} + ": " + t.ca_file
           + " holds no PEM certificate: " + openssl_error();
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), t.cert_file.c_str()) != 1)
    return std::string{config::keys::cluster_tls_cert_file.name} + ": " + t.cert_file
           + " holds no PEM certificate: " + openssl_error();
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), t.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return std::string{config::keys::cluster_tls_key_file.name} + ": " + t.key_file
           + " is not an unencrypted PEM private key of " + t.cert_file + ": " + openssl_error();
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return std::string{config::keys::cluster_tls_key_file.name} + ": " + t.key_file
           + " is not the key of " + t.cert_file;
  return std::nullopt;
}

} // namespace

std::optional<cluster_tls> read_cluster_tls(const config::values& settings,
                                            std::vector<std::string>& errors) {
  const config::key<std::string>* keys[] = {&config::keys::cluster_tls_ca_file,
                                            &config::keys::cluster_tls_cert_file,
                                            &config::keys::cluster_tls_key_file};
  std::string given, missing;
  for (const auto* k : keys)
    (settings.get(*k).empty() ? missing : given) += (std::string{", "} + k->name);
  auto port = settings.get(config::keys::cluster_port);
  if (given.empty()) {
    if (port != 0)
      errors.push_back(std::string{config::keys::cluster_port.name}
                       + ": the node-to-node door is TLS only; set cluster.tls_ca_file, "
                         "cluster.tls_cert_file and cluster.tls_key_file, or leave it 0");
    return std::nullopt;
  }
  if (!missing.empty()) {
    errors.push_back("cluster TLS needs all three of cluster.tls_ca_file, "
                     "cluster.tls_cert_file and cluster.tls_key_file; "
                     + given.substr(2) + " given but " + missing.substr(2) + " missing");
    return std::nullopt;
  }
  cluster_tls t{settings.get(config::keys::cluster_tls_ca_file),
                settings.get(config::keys::cluster_tls_cert_file),
                settings.get(config::keys::cluster_tls_key_file)};
  bool readable = true;
  for (const auto* k : keys) {
    const auto& path = settings.get(*k);
    if (!std::ifstream{path}) {
      errors.push_back(std::string{k->name} + ": cannot read " + path);
      readable = false;
    }
  }
  if (!readable)
    return std::nullopt;
  if (auto problem = check_files(t)) {
    errors.push_back(*problem);
    return std::nullopt;
  }
  if (port == 0) {
    errors.push_back(std::string{config::keys::cluster_port.name}
                     + ": required with cluster TLS (the port other nodes connect to; -1 "
                       "picks a free one)");
    return std::nullopt;
  }
  return t;
}

void use_cluster_tls(caf::actor_system_config& cfg, const cluster_tls& tls) {
  // CAF turns on SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT on both ends as soon as
  // any openssl.* file is set, and trusts only cafile: a peer without a certificate of
  // the cluster CA fails the handshake.
  cfg.openssl_cafile = tls.ca_file;
  cfg.openssl_certificate = tls.cert_file;
  cfg.openssl_key = tls.key_file;
  cfg.load<caf::openssl::manager>();
}

caf::expected<uint16_t> open_cluster_door(const client_api& api, const std::string& host,
                                          int64_t port) {
  return caf::openssl::publish(api, static_cast<uint16_t>(port < 0 ? 0 : port), host.c_str(),
                               true);
}

void close_cluster_door(caf::actor_system& sys, const client_api& api, uint16_t port) {
  // caf::openssl::unpublish of 0.17.6 does not compile (it leaves out the actor): ask the
  // module's middleman actor the way middleman().unpublish asks the plain one.
  caf::scoped_actor self{sys};
  self->request(sys.openssl_manager().actor_handle(), std::chrono::seconds(1),
                caf::unpublish_atom_v, api.address(), port)
    .receive([] {}, [](caf::error&) {});
}

} // namespace nf::net
