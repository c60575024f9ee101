#pragma once

// Plain TCP sockets on loopback for tests that knock on a node's doors below any protocol:
// idle connections, and whether the node closed one.

#include <chrono>
#include <cstdint>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caf/test/unit_test.hpp"

namespace nf::test {

inline int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  CAF_REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CAF_REQUIRE_EQUAL(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// True once the other side closed `fd` (within `patience`), reading whatever it sent first.
inline bool closed_by_node(int fd, std::chrono::milliseconds patience) {
  auto until = std::chrono::steady_clock::now() + patience;
  char buf[4096];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0)
      continue;
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      return true;
  }
  return false;
}

} // namespace nf::test
