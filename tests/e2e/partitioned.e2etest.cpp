#define CAF_SUITE e2e.partitioned
#include "caf/test/unit_test.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/e2e/two_nodes.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int partitions = 16; // the suites' default engine.partitions

// A listener that never accepts: a connection to it opens (the kernel's backlog takes it)
// and then hears nothing, as a peer behind a cut or hanging link. Its address, HOST:PORT.
struct black_hole {
  int fd = -1;
  std::string address;

  explicit black_hole(const std::string& host) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = 0;
    ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    CAF_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    CAF_REQUIRE(::listen(fd, 64) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    address = host + ":" + std::to_string(ntohs(a.sin_port));
  }
  ~black_hole() { ::close(fd); }
};

bool file_has(const std::string& path, const std::string& what) {
  std::ifstream in{path};
  std::stringstream all;
  all << in.rdbuf();
  return all.str().find(what) != std::string::npos;
}

// Two nodes on `f`'s database, each with `settings` (name, value): the fixture's, and a
// second that advertises an address leading into a black hole and leaves the link to the
// first to open (the address that sorts first opens it), so neither can reach the other.
// Returns once each holds half of the partitions and has heard who owns what.
struct cut_pair {
  black_hole hole{"127.0.0.2"};
  uint16_t port2 = test::free_port();
  std::string log2, addr1;
  std::unique_ptr<test::child_process> node2;

  cut_pair(test::e2e_fixture& f, const test::settings_list& settings) : log2(f.dir + "/node2.log") {
    f.start_node(settings);
    std::vector<std::string> argv{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                                  f.config_path, "--port", std::to_string(port2), "--http-port",
                                  "-1", "--auth", "off", "--node.advertise", hole.address};
    for (const auto& [name, value] : settings)
      argv.insert(argv.end(), {"--" + name, value});
    node2 = std::make_unique<test::child_process>(argv, log2, true);
    CAF_REQUIRE(node2->wait_for_line("listening ", 60s));
    addr1 = "127.0.0.1:" + std::to_string(f.port);
    CAF_REQUIRE(test::await_even_split(f, addr1, hole.address, partitions));
    std::this_thread::sleep_for(1s);
  }
};

} // namespace

// DESIGN I9: ownership is an optimisation, the database the authority. Two nodes share the
// partitions and both reach Postgres, but not each other: the second advertises an address
// that leads into a black hole, and it leaves the link to the first to open (the address
// that sorts first opens it). Each node's workers poll the queue the OTHER node owns and
// report the tasks of workflows the other node decides. Polls are forwarded to the owner here
// (cluster.lease_locally off), as reports always are. Without the write-through every such
// poll and report is answered `unavailable` for the whole outage and no workflow ends; with
// it each node leases and commits through the database itself, leaving the decisions to the
// owners, and every workflow ends within seconds.
CAF_TEST(nodes that cannot reach each other serve the partitions of the other through Postgres) {
  test::e2e_fixture f{"e2e_partitioned"};
  cut_pair pair{f, {{"cluster.peer_answer_ms", "1000"}, {"cluster.lease_locally", "false"}}};
  const auto& [hole, port2, log2, addr1, node2] = pair;
  const auto& addr2 = hole.address;
  auto [on1, on2] = test::define_crossing_flow(f, "e2e_partitioned", "cut_q", addr1, addr2,
                                               partitions);
  auto opts2 = f.client_opts();
  opts2.port = port2;
  client api2{opts2};
  auto t0 = std::chrono::steady_clock::now();
  auto ids = test::start_through_both(f, api2, "e2e_partitioned", 5, partitions);
  // The workers of each node poll only the queue the other node owns.
  test::worker_pool at2{opts2, {on1}, 2, test::echo_handler(), 4};
  test::worker_pool at1{f.client_opts(), {on2}, 2, test::echo_handler(), 4};
  test::expect_echoed(f, ids);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - t0);
  CAF_MESSAGE("10 workflows across the cut ended in " << took.count() << " ms");
  CAF_CHECK_LESS(took.count(), 30000);
  CAF_CHECK_EQUAL(at1.rejected() + at2.rejected(), 0);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  // Both nodes leased the other's queue themselves.
  CAF_CHECK(file_has(f.node_log, "stand_in_lessor_started"));
  CAF_CHECK(file_has(log2, "stand_in_lessor_started"));
  at1.stop();
  at2.stop();
  auto st = node2->stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CAF_CHECK(f.stop_node());
}

// docs/engine.md §2, cluster.lease_locally: a poll is leased by the node it reaches, whichever
// node owns its queue's partition, and that node's decisions lease new tasks to it, so a
// workflow started through a node runs on it from start to end. The two nodes cannot reach
// each other, and the write-through is off (cluster.peer_answer_ms 0): anything sent to the
// other node would wait for it, or fail `unavailable`, for the whole outage. Workflows are
// started through the second node only, and its workers poll both queues, one of which the
// first node owns. Forwarded to the owner, every poll of that queue would fail and no
// workflow would end; leased where they arrive, all of them end.
CAF_TEST(a poll is leased by the node it reaches so its own workflows need no other node) {
  test::e2e_fixture f{"e2e_partitioned_local"};
  cut_pair pair{f, {{"cluster.peer_answer_ms", "0"}}};
  const auto& [hole, port2, log2, addr1, node2] = pair;
  const auto& addr2 = hole.address;
  auto [on1, on2] = test::define_crossing_flow(f, "e2e_partitioned_local", "local_q", addr1,
                                               addr2, partitions);
  auto opts2 = f.client_opts();
  opts2.port = port2;
  client api2{opts2};
  test::worker_pool at2{opts2, {on1, on2}, 2, test::echo_handler(), 4};
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) {
    msg::start_request req;
    req.workflow_name = "e2e_partitioned_local";
    req.input_json = R"({"n": )" + std::to_string(i) + "}";
    auto r = api2.start(req);
    CAF_REQUIRE(r);
    ids.push_back(r->workflow_id);
  }
  test::expect_echoed(f, ids);
  CAF_CHECK_EQUAL(at2.rejected(), 0);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  CAF_CHECK(file_has(log2, "local_lessor_started"));
  at2.stop();
  auto st = node2->stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CAF_CHECK(f.stop_node());
}
