#include "net/web/tls.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include <boost/asio/ssl/context.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "proto/errors.hpp"

namespace nf::net::web {

namespace ssl = boost::asio::ssl;

namespace {

std::optional<std::string> unreadable(const char* setting, const std::string& path) {
  std::ifstream in{path};
  if (in)
    return std::nullopt;
  return std::string{setting} + ": cannot read " + path + ": " + std::strerror(errno);
}

} // namespace

caf::expected<std::shared_ptr<ssl::context>> load_tls_context(const std::string& cert_file,
                                                               const std::string& key_file) {
  if (auto why = unreadable("http.tls_cert_file", cert_file))
    return nf::make_error(errc::invalid, *why);
  if (auto why = unreadable("http.tls_key_file", key_file))
    return nf::make_error(errc::invalid, *why);
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                   | ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1
                   | ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  // A client asking TLS 1.2 to renegotiate makes the server do a handshake's work again, at
  // will; HTTP clients never need it.
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_NO_RENEGOTIATION);
  // An encrypted key would make OpenSSL ask for its passphrase on the terminal, blocking the
  // start: answer nothing, so it fails with an error instead.
  ctx->set_password_callback([](size_t, ssl::context::password_purpose) { return std::string{}; });
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec)
    return nf::make_error(errc::invalid, "http.tls_cert_file: " + cert_file
                                           + " holds no usable PEM certificate (" + ec.message()
                                           + ")");
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  bool mismatch = ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value()))
                          == X509_R_KEY_VALUES_MISMATCH;
  if (ec && !mismatch)
    return nf::make_error(errc::invalid, "http.tls_key_file: " + key_file
                                           + " holds no usable unencrypted PEM private key ("
                                           + ec.message() + ")");
  if (mismatch || SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    return nf::make_error(errc::invalid, "http.tls_key_file: " + key_file
                                           + " is not the private key of the certificate in "
                                             "http.tls_cert_file "
                                           + cert_file);
  return ctx;
}

} // namespace nf::net::web
