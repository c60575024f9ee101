#include "tests/support/free_port.hpp"

#include <fstream>
#include <random>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nf::test {

namespace {

// The lowest port the kernel gives outgoing connections (32768 when it cannot be read).
int ephemeral_low() {
  std::ifstream in{"/proc/sys/net/ipv4/ip_local_port_range"};
  int low = 0;
  if (in >> low && low > 11000)
    return low;
  return 32768;
}

bool bindable(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  ::close(fd);
  return ok;
}

} // namespace

uint16_t free_loopback_port() {
  static thread_local std::mt19937 gen{std::random_device{}()};
  std::uniform_int_distribution<int> pick{10000, ephemeral_low() - 1};
  for (int i = 0; i < 200; ++i)
    if (auto port = static_cast<uint16_t>(pick(gen)); bindable(port))
      return port;
  throw std::runtime_error("no free loopback port below the ephemeral range");
}

} // namespace nf::test
