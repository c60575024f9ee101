#include "address.hpp"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nf::fault {

namespace {

bool is_loopback(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

socklen_t to_sockaddr(const endpoint& e, sockaddr_storage& ss) {
  std::memset(&ss, 0, sizeof ss);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  if (inet_pton(AF_INET, e.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(e.port);
    return sizeof(sockaddr_in);
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  inet_pton(AF_INET6, e.host.c_str(), &v6->sin6_addr);
  v6->sin6_family = AF_INET6;
  v6->sin6_port = htons(e.port);
  return sizeof(sockaddr_in6);
}

std::string sys_error(const char* what, const endpoint& e) {
  return std::string{what} + " " + to_string(e) + ": " + std::strerror(errno);
}

} // namespace

std::optional<endpoint> parse_endpoint(const std::string& text, std::string& error) {
  std::string host;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      error = "address '" + text + "' is not [HOST]:PORT";
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) {
      error = "address '" + text + "' is not HOST:PORT (write IPv6 as [::1]:PORT)";
      return std::nullopt;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host == "localhost")
    host = "127.0.0.1";
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos
      || std::stoul(port) > 65535) {
    error = "port '" + port + "' in '" + text + "' is not a number from 0 to 65535";
    return std::nullopt;
  }
  if (!is_loopback(host)) {
    error = "address '" + text + "' is not loopback (only 127.0.0.0/8 and ::1 are allowed)";
    return std::nullopt;
  }
  return endpoint{host, static_cast<std::uint16_t>(std::stoul(port))};
}

std::string to_string(const endpoint& e) {
  if (e.host.find(':') != std::string::npos)
    return "[" + e.host + "]:" + std::to_string(e.port);
  return e.host + ":" + std::to_string(e.port);
}

void set_nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int listen_on(const endpoint& e, std::string& error) {
  sockaddr_storage ss;
  auto len = to_sockaddr(e, ss);
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = sys_error("socket for", e);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 128) != 0) {
    error = sys_error("cannot listen on", e);
    close(fd);
    return -1;
  }
  set_nonblocking(fd);
  return fd;
}

std::uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (ss.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

namespace {

int make_client_socket(const endpoint& e, sockaddr_storage& ss, socklen_t& len,
                       std::string& error) {
  len = to_sockaddr(e, ss);
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = sys_error("socket for", e);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

} // namespace

int connect_start(const endpoint& e, std::string& error) {
  sockaddr_storage ss;
  socklen_t len;
  int fd = make_client_socket(e, ss, len, error);
  if (fd < 0)
    return -1;
  set_nonblocking(fd);
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
    error = sys_error("cannot connect to", e);
    close(fd);
    return -1;
  }
  return fd;
}

int connect_blocking(const endpoint& e, std::string& error) {
  sockaddr_storage ss;
  socklen_t len;
  int fd = make_client_socket(e, ss, len, error);
  if (fd < 0)
    return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    error = sys_error("cannot connect to", e);
    close(fd);
    return -1;
  }
  return fd;
}

void reset_close(int fd) {
  if (fd < 0)
    return;
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

std::string numeric_host(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof text);
  else if (a.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, text, sizeof text);
  return text;
}

} // namespace nf::fault
