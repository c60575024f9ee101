#define CAF_SUITE e2e.cluster
#include "caf/test/unit_test.hpp"

#include <csignal>
#include <map>
#include <set>

#include "store/sharding.hpp"
#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int partitions = 16; // the suites' default engine.partitions

} // namespace

// docs/engine.md §2: a worker may talk to any node. Two nodes share the sixteen
// partitions; the workers reach only the second, yet half the workflows belong to the
// first and one of the two queues is leased by the first's lessor. Without forwarding
// those polls and reports are answered `unavailable` for ever and the workflows never
// finish. Both nodes check credentials, as nodes do by default: a forwarded request is
// taken only with the cluster's node credential, which each node derives on its own.
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
  CAF_REQUIRE(f.await([&] {
    auto o = f.partition_owners();
    int one = 0, two = 0;
    for (const auto& [p, a] : o) {
      one += a == addr1;
      two += a == addr2;
    }
    return one == partitions / 2 && two == partitions / 2;
  }, 30s));
  std::this_thread::sleep_for(1s);

  // One queue leased on each node.
  auto o = f.partition_owners();
  std::string on1, on2;
  for (int i = 0; i < 64 && (on1.empty() || on2.empty()); ++i) {
    auto q = "cluster_q" + std::to_string(i);
    const auto& a = o[queue_shard(q, partitions)];
    if (a == addr1 && on1.empty())
      on1 = q;
    if (a == addr2 && on2.empty())
      on2 = q;
  }
  CAF_REQUIRE(!on1.empty() && !on2.empty());
  CAF_MESSAGE("queue " << on1 << " is leased on node 1, " << on2 << " on node 2");
  f.define(R"([{"name": ")" + on1 + R"(", "responseTimeoutSeconds": 60},
    {"name": ")" + on2 + R"(", "responseTimeoutSeconds": 60},
    {"name": "e2e_cluster", "version": 1, "tasks": [
      {"name": ")" + on1 + R"(", "taskReferenceName": "first", "inputParameters": {"v": "${workflow.input.n}"}},
      {"name": ")" + on2 + R"(", "taskReferenceName": "second", "inputParameters": {"v": "${first.output.v}"}}],
     "outputParameters": {"n": "${second.output.v}"}}])");

  // Starts through node 1 make workflows of its partitions, through node 2 of its own.
  auto opts2 = opts1;
  opts2.port = port2;
  client api2{opts2};
  constexpr int n = 10;
  std::vector<std::string> ids;
  for (int i = 0; i < 2 * n; ++i) {
    auto input = R"({"n": )" + std::to_string(i) + "}";
    if (i < n) {
      ids.push_back(f.start("e2e_cluster", input));
    } else {
      msg::start_request req;
      req.workflow_name = "e2e_cluster";
      req.input_json = input;
      auto r = api2.start(req);
      CAF_REQUIRE(r);
      ids.push_back(r->workflow_id);
    }
  }
  std::set<std::string> owner_of_started;
  for (const auto& id : ids)
    owner_of_started.insert(o[shard_of(id, partitions)]);
  CAF_REQUIRE_EQUAL(owner_of_started.size(), 2u);

  test::worker_pool workers{opts2, {on1, on2}, 2, test::echo_handler(), 4};
  for (int i = 0; i < 2 * n; ++i) {
    CAF_REQUIRE_EQUAL(f.await_end(ids[i], 60s), "COMPLETED");
    CAF_CHECK(f.get(ids[i]).at("output") == boost::json::parse(R"({"n": )" + std::to_string(i) + "}"));
  }
  CAF_CHECK_EQUAL(workers.rejected(), 0);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  workers.stop();
  auto st = node2.stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CAF_CHECK(f.stop_node());
}
