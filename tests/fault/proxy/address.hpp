#pragma once

// Loopback endpoints and the socket calls the proxy makes on them. The proxy
// only ever listens on or connects to loopback: it is a test tool, and a
// fault injector reachable from the network would be a hole.

#include <cstdint>
#include <optional>
#include <string>

#include <sys/socket.h>

namespace nf::fault {

struct endpoint {
  std::string host; // numeric: 127.x.y.z or ::1
  std::uint16_t port = 0;
};

/// Parses HOST:PORT ([::1]:PORT for IPv6; `localhost` means 127.0.0.1) and
/// refuses anything off loopback. On failure, `error` says what is wrong.
std::optional<endpoint> parse_endpoint(const std::string& text, std::string& error);

/// HOST:PORT, with brackets around an IPv6 host.
std::string to_string(const endpoint& e);

/// A non-blocking listening socket (port 0 = a free one), or -1 with `error`.
int listen_on(const endpoint& e, std::string& error);

/// A socket address's host, numeric (127.0.0.11, ::1); "" for another family.
std::string numeric_host(const sockaddr_storage& a);

/// The port a bound socket ended up on.
std::uint16_t local_port(int fd);

/// Starts a non-blocking connect; -1 with `error` when it failed at once.
int connect_start(const endpoint& e, std::string& error);

/// A blocking connect, for the one-shot `ctl` client.
int connect_blocking(const endpoint& e, std::string& error);

void set_nonblocking(int fd);

/// Closes with SO_LINGER 0, so the peer gets an RST instead of a FIN.
void reset_close(int fd);

} // namespace nf::fault
