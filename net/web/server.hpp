#pragma once

// The node's HTTP/1.1 server (Boost.Beast): asynchronous, keep-alive, on threads of its
// own, so no actor ever waits on a socket; plain HTTP, or HTTPS only when given a TLS context. Each request is parsed within the body and
// header limits, matched against the route table and handed to its handler; the handler
// answers from whatever thread its answer arrives on.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "net/web/authenticator.hpp"
#include "net/web/router.hpp"
#include "net/web/ui_files.hpp"

namespace boost::asio::ssl {
class context;
} // namespace boost::asio::ssl

namespace nf::net::web {

struct server_options {
  std::string host = "127.0.0.1";
  uint16_t port = 8080; ///< 0 picks a free one
  int threads = 2;
  size_t max_body_bytes = 8u << 20;
  size_t max_header_bytes = 16u << 10;
  /// How long a kept-alive connection may sit idle between requests.
  std::chrono::seconds idle_timeout{60};
  /// Requests answered at once beyond this many in flight get 429 with Retry-After (long
  /// polls and streams are not counted: they wait by design).
  size_t max_inflight = 4096;
  /// A stream's bytes not yet taken by its client beyond which it is closed
  /// (http.max_stream_buffer_bytes).
  size_t max_stream_buffer_bytes = 1u << 20;
  /// Called once per answered request (for metrics): the route's pattern ("" when none
  /// matched), the method, the status and how long it took.
  std::function<void(const std::string& route, verb method, unsigned status, double seconds)>
    on_answer;
  /// Checks every request's credentials against its route's role; none: every request is
  /// the anonymous admin of the default namespace (auth.enabled false).
  std::shared_ptr<const authenticator> auth;
  /// Set (load_tls_context): the port speaks HTTPS only; none: plain HTTP.
  std::shared_ptr<boost::asio::ssl::context> tls;
  /// How long a client may take to finish its TLS handshake before it is dropped.
  std::chrono::seconds handshake_timeout{10};
  /// The web UI's files, answered to GET `/` and `/ui/...` (no route has those paths); none:
  /// those paths are 404.
  std::shared_ptr<const ui_files> ui;
};

class server {
public:
  server(std::shared_ptr<const router> routes, server_options opts);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Binds and listens without accepting yet (connections wait in the backlog); answers
  /// the bound port. Again: the same port.
  caf::expected<uint16_t> bind();
  /// Binds unless bound, then accepts and starts the threads; answers the bound port.
  caf::expected<uint16_t> start();
  /// Stops accepting, closes every connection and joins the threads.
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace nf::net::web
