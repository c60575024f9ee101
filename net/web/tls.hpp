#pragma once

// The HTTPS side of the HTTP door: the TLS server context built from http.tls_cert_file and
// http.tls_key_file, checked whole when `nodeflow serve` starts so a bad file stops the node
// before it listens rather than failing every handshake later.

#include <memory>
#include <string>

#include <caf/expected.hpp>

namespace boost::asio::ssl {
class context;
} // namespace boost::asio::ssl

namespace nf::net::web {

/// A TLS 1.2-or-later server context holding the certificate chain of `cert_file` and the
/// unencrypted private key of `key_file` (both PEM). The error names the setting and the
/// file: unreadable, not PEM, or a key that is not the certificate's.
caf::expected<std::shared_ptr<boost::asio::ssl::context>>
load_tls_context(const std::string& cert_file, const std::string& key_file);

} // namespace nf::net::web
