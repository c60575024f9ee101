#define CAF_SUITE e2e.door_guard
#include "caf/test/unit_test.hpp"

// The client door's guard (net/door/caf_door_guard.hpp) in front of a real node: what CAF
// alone would take (a header announcing gigabytes, connections without end, messages
// trickling in) is refused at the door, the node's memory stays where it was, and clients
// keep being served.

#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/e2e/raw_socket.hpp"

using namespace nf;
using nf::test::closed_by_node;
using nf::test::connect_to;
using namespace std::chrono_literals;

namespace {

// A BASP client handshake's header announcing `len` payload bytes.
std::string header(uint32_t len) {
  std::string h(32, '\0');
  h[0] = 1;
  h[4] = static_cast<char>(len >> 24);
  h[5] = static_cast<char>(len >> 16);
  h[6] = static_cast<char>(len >> 8);
  h[7] = static_cast<char>(len);
  return h;
}

void send_all(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    auto n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0)
      return; // closed by the node: what some tests expect
    off += static_cast<size_t>(n);
  }
}

int64_t rss_kb(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoll(line.substr(6));
  return -1;
}

bool served(test::e2e_fixture& f) {
  client c{f.client_opts()};
  auto st = c.status();
  if (!st)
    CAF_MESSAGE("status: " << describe(st.error()));
  return static_cast<bool>(st);
}

} // namespace

CAF_TEST(a header announcing gigabytes closes its connection and costs the node nothing) {
  test::e2e_fixture f{"e2e_guard_size"};
  f.start_node();
  CAF_REQUIRE(served(f));
  auto before = rss_kb(f.node->pid());
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) { // 4 × 4 GiB announced: 16 GiB were CAF to believe them
    int fd = connect_to(f.port);
    send_all(fd, header(0xF0000000u) + std::string(1000, 'x'));
    fds.push_back(fd);
  }
  for (int fd : fds) {
    CAF_CHECK(closed_by_node(fd, 5s));
    ::close(fd);
  }
  std::this_thread::sleep_for(500ms);
  auto after = rss_kb(f.node->pid());
  CAF_MESSAGE("node RSS " << before << " kB before, " << after << " kB after");
  CAF_CHECK_LESS(after, before + 64 * 1024);
  CAF_CHECK(served(f));
  CAF_CHECK(test::tail_of(f.node_log).find("client_door_refused what=\"a message of 4026531840 "
                                           "bytes\"")
            != std::string::npos);
  CAF_CHECK(f.stop_node());
}

CAF_TEST(connections beyond node.max_connections are closed at once and the rest served) {
  test::e2e_fixture f{"e2e_guard_conns"};
  f.start_node({{"node.max_connections", "4"}});
  CAF_REQUIRE(served(f)); // its connection closes with it
  // The fixture's own client holds one; three idle sockets take the rest.
  CAF_REQUIRE(f.api->status());
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i)
    idle.push_back(connect_to(f.port));
  std::this_thread::sleep_for(300ms);
  for (int fd : idle)
    CAF_CHECK(!closed_by_node(fd, 200ms));
  int extra = connect_to(f.port);
  CAF_CHECK(closed_by_node(extra, 5s));
  ::close(extra);
  CAF_CHECK(f.api->status()); // the connection it has keeps working
  for (int fd : idle)
    ::close(fd);
  std::this_thread::sleep_for(300ms);
  CAF_CHECK(served(f));
  CAF_CHECK(test::tail_of(f.node_log).find("client_door_refused what=\"a connection beyond 4\"")
            != std::string::npos);
  CAF_CHECK(f.stop_node());
}

CAF_TEST(messages still arriving hold at most node.max_buffered_bytes) {
  test::e2e_fixture f{"e2e_guard_buffered"};
  f.start_node({{"node.max_buffered_bytes", "200000"}, {"node.max_message_bytes", "1000000"}});
  CAF_REQUIRE(served(f));
  // Two clients each announce 150,000 bytes and send 120,000 of them: the first waits for
  // the rest, the second would take the door past 200,000 and is closed.
  int first = connect_to(f.port);
  send_all(first, header(150000) + std::string(120000, 'x'));
  std::this_thread::sleep_for(300ms);
  int second = connect_to(f.port);
  send_all(second, header(150000) + std::string(120000, 'x'));
  CAF_CHECK(closed_by_node(second, 5s));
  CAF_CHECK(!closed_by_node(first, 300ms));
  ::close(second);
  ::close(first);
  std::this_thread::sleep_for(300ms);
  CAF_CHECK(served(f));
  CAF_CHECK(f.stop_node());
}
