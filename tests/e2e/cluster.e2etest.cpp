#define CAF_SUITE e2e.cluster
#include "caf/test/unit_test.hpp"

#include <csignal>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/e2e/two_nodes.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int partitions = 16; // the suites' default engine.partitions

} // namespace

// docs/engine.md §2: a worker may talk to any node. Two nodes share the sixteen
// partitions; the workers reach only the second, yet half the workflows belong to the
// first and one of the two queues is owned by the first. The second leases that queue
// itself (cluster.lease_locally), and forwards the reports of the first's workflows: without
// forwarding they are answered `unavailable` for ever and those workflows never finish.
// Both nodes check credentials, as nodes do by default: a forwarded request is taken only
// with the cluster's node credential, which each node derives on its own.
CAF_TEST(a worker connected to one node serves the workflows and queues of another) {
  test::e2e_fixture f{"e2e_cluster"};
  f.start_node({{"auth.enabled", "true"}});
  f.use_key(f.create_key("admin"));
  auto opts1 = f.client_opts();
  auto port2 = test::free_port();
  auto log2 = f.dir + "/node2.log";
  test::child_process node2{{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                             f.config_path, "--port", std::to_string(port2), "--http-port", "-1"},
                            log2, true};
  CAF_REQUIRE(node2.wait_for_line("listening ", 60s));
  auto addr1 = "127.0.0.1:" + std::to_string(f.port);
  auto addr2 = "127.0.0.1:" + std::to_string(port2);
  // Both nodes hold their share, and each has heard who owns what (a heartbeat later).
  CAF_REQUIRE(test::await_even_split(f, addr1, addr2, partitions));
  std::this_thread::sleep_for(1s);
  auto [on1, on2] = test::define_crossing_flow(f, "e2e_cluster", "cluster_q", addr1, addr2,
                                               partitions);

  // Starts through node 1 make workflows of its partitions, through node 2 of its own.
  auto opts2 = opts1;
  opts2.port = port2;
  client api2{opts2};
  auto ids = test::start_through_both(f, api2, "e2e_cluster", 10, partitions);
  test::worker_pool workers{opts2, {on1, on2}, 2, test::echo_handler(), 4};
  test::expect_echoed(f, ids);
  CAF_CHECK_EQUAL(workers.rejected(), 0);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  auto st = node2.stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CAF_CHECK(f.stop_node());
}
