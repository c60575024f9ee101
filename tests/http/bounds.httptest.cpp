#define CAF_SUITE http.bounds

// What a node holds for clients is bounded (api.max_open_polls, api.max_open_polls_per_queue,
// http.max_stream_buffer_bytes): a poll beyond the node's or its queue's cap is refused at
// once with 503 and Retry-After instead of parked, and a history stream whose client stops
// reading is closed once what it leaves unsent passes the cap, instead of growing.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "tests/support/http_node.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([
  {"name": "parked", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "other_parked", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "flaky", "retryCount": 400, "retryLogic": "FIXED", "retryDelaySeconds": 0,
   "responseTimeoutSeconds": 30},
  {"name": "bounds_flaky", "version": 1, "tasks": [
    {"name": "flaky", "taskReferenceName": "f", "inputParameters": {}}]}
])";

// A long poll on its own connection, in the background: its status once answered.
std::future<unsigned> park(uint16_t port, const std::string& type, int wait_ms) {
  return std::async(std::launch::async, [port, type, wait_ms] {
    test::http_client c{"127.0.0.1", port};
    return c.get("/api/tasks/poll/batch/" + type + "?count=1&workerid=idle&timeout="
                 + std::to_string(wait_ms))
      .status;
  });
}

// One poll that must be refused at once: its answer, and how long it took.
std::pair<test::http_reply, std::chrono::milliseconds> poll_now(test::http_client& c,
                                                                 const std::string& type) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = c.get("/api/tasks/poll/batch/" + type + "?count=1&workerid=extra&timeout=4000");
  return {r, std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now() - t0)};
}

} // namespace

CAF_TEST(polls beyond the caps of a queue and of the node are refused at once) {
  test::http_node n{"http_bounds_polls", definitions,
                    {{"api.max_open_polls_per_queue", "3"}, {"api.max_open_polls", "5"}}};
  auto port = n.f.http_port;
  std::vector<std::future<unsigned>> parked;
  for (int i = 0; i < 3; ++i)
    parked.push_back(park(port, "parked", 4000));
  std::this_thread::sleep_for(700ms); // all three parked in the node
  auto [full_queue, took] = poll_now(*n.http, "parked");
  CAF_CHECK_EQUAL(full_queue.status, 503u);
  CAF_CHECK_LESS(took.count(), 1500);
  CAF_CHECK_EQUAL(full_queue.header("retry-after"), "1");
  CAF_CHECK(full_queue.body.find("api.max_open_polls_per_queue") != std::string::npos);
  // Another queue takes two more, up to the node's five; the sixth poll is refused.
  for (int i = 0; i < 2; ++i)
    parked.push_back(park(port, "other_parked", 4000));
  std::this_thread::sleep_for(700ms);
  auto [full_node, took2] = poll_now(*n.http, "other_parked");
  CAF_CHECK_EQUAL(full_node.status, 503u);
  CAF_CHECK_LESS(took2.count(), 1500);
  CAF_CHECK(full_node.body.find("(api.max_open_polls)") != std::string::npos);
  // The parked polls are answered (empty) at their timeout, and their places are free again.
  for (auto& p : parked)
    CAF_CHECK_EQUAL(p.get(), 200u);
  auto again = n.http->get("/api/tasks/poll/batch/parked?count=1&workerid=w&timeout=10");
  CAF_CHECK_EQUAL(again.status, 200u);
}

CAF_TEST(a history stream whose client does not read is closed at its buffer cap) {
  test::http_node n{"http_bounds_stream", definitions,
                    {{"http.max_stream_buffer_bytes", "16384"}}};
  auto id = n.start_over_http(R"({"name": "bounds_flaky", "version": 1, "input": {}})");
  // A client that asks for the stream and never reads, with a small receive buffer so the
  // node's writes stall soon.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  CAF_REQUIRE(fd >= 0);
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(n.f.http_port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  CAF_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  std::string req = "GET /api/workflow/" + id + "/events/stream HTTP/1.1\r\nHost: x\r\n\r\n";
  CAF_REQUIRE(::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size()));
  // Events flow: each failed attempt writes a TASK_FAILED event carrying its 60 kB reason,
  // in all well beyond what the node's socket may buffer (the kernel grows a send buffer up
  // to tcp_wmem's maximum, 4 MB by default), and for longer than the node lets a write wait
  // (1 s) before it counts what queues behind it.
  std::string reason(60000, 'r');
  size_t wmem_max = 4u << 20;
  {
    std::ifstream in{"/proc/sys/net/ipv4/tcp_wmem"};
    size_t lo = 0, def = 0, hi = 0;
    if (in >> lo >> def >> hi)
      wmem_max = hi;
  }
  auto attempts = static_cast<int>(std::min<size_t>(350, 2 * wmem_max / reason.size() + 30));
  CAF_MESSAGE(attempts << " failed attempts of 60 kB each");
  for (int i = 0; i < attempts; ++i) {
    auto task = n.poll_one("flaky");
    auto r = n.report(task, "FAILED", {{"reasonForIncompletion", reason}});
    CAF_REQUIRE_EQUAL(r.status, 200u);
  }
  // Now the client reads: what the node sent before it closed the stream, then the end. A
  // stream still open would keep it waiting for more (the workflow is still running).
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[65536];
  size_t got = 0;
  bool closed = false;
  for (;;) {
    auto k = ::recv(fd, buf, sizeof buf, 0);
    if (k > 0) {
      got += static_cast<size_t>(k);
      continue;
    }
    closed = k == 0 || errno == ECONNRESET;
    break;
  }
  ::close(fd);
  CAF_MESSAGE("the client read " << got << " bytes before the stream "
                                 << (closed ? "closed" : "went quiet"));
  CAF_CHECK(closed);
  CAF_CHECK_LESS(got, static_cast<size_t>(attempts) * reason.size());
}
