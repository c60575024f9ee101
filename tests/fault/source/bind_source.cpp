// nodeflow-fault-source: preloaded into a node by the fault harness (LD_PRELOAD), it makes
// every TCP connection the node opens to a loopback address leave from
// NF_FAULT_SOURCE_ADDR (another 127.x.y.z). The fault proxy then tells the nodes apart by
// their source address and can cut one pair of them while each still reaches the others;
// CAF cannot choose the address it connects from.

#include <cstdlib>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace {

using connect_fn = int (*)(int, const sockaddr*, socklen_t);

bool loopback_v4(const sockaddr* to, socklen_t len) {
  if (to == nullptr || to->sa_family != AF_INET || len < sizeof(sockaddr_in))
    return false;
  return (ntohl(reinterpret_cast<const sockaddr_in*>(to)->sin_addr.s_addr) >> 24) == 127;
}

// An unbound stream socket only: a socket its owner bound keeps its own address.
bool unbound_stream(int fd) {
  int type = 0;
  socklen_t type_len = sizeof type;
  sockaddr_in self{};
  socklen_t self_len = sizeof self;
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 && type == SOCK_STREAM
         && getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_len) == 0
         && self.sin_family == AF_INET && self.sin_port == 0;
}

} // namespace

extern "C" int connect(int fd, const sockaddr* to, socklen_t len) {
  static const auto real = reinterpret_cast<connect_fn>(dlsym(RTLD_NEXT, "connect"));
  static const char* source = std::getenv("NF_FAULT_SOURCE_ADDR");
  if (source != nullptr && loopback_v4(to, len) && unbound_stream(fd)) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    // Failing to bind (a bad address) leaves the connection to leave from 127.0.0.1.
    if (inet_pton(AF_INET, source, &from.sin_addr) == 1)
      bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
  }
  return real(fd, to, len);
}
