#define CAF_SUITE e2e.cluster
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <csignal>
#include <set>

#include "store/ids.hpp"
#include "store/sharding.hpp"

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

// A worker's batch of reports for workflows another node decides crosses to that node
// together (forward_reports in actors/node), and each report is still answered in its
// place: a stale lease token is `lease lost` for that report alone, the rest are applied.
CAF_TEST(a batch of reports for workflows of another node is answered report by report) {
  test::e2e_fixture f{"e2e_cluster_batch"};
  f.start_node({{"auth.enabled", "true"}});
  f.use_key(f.create_key("admin"));
  auto port2 = test::free_port();
  test::child_process node2{{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                             f.config_path, "--port", std::to_string(port2), "--http-port", "-1"},
                            f.dir + "/node2.log", true};
  CAF_REQUIRE(node2.wait_for_line("listening ", 60s));
  auto addr1 = "127.0.0.1:" + std::to_string(f.port);
  auto addr2 = "127.0.0.1:" + std::to_string(port2);
  CAF_REQUIRE(test::await_even_split(f, addr1, addr2, partitions));
  std::this_thread::sleep_for(1s);
  f.define(R"([{"name": "batch_q", "responseTimeoutSeconds": 60},
    {"name": "e2e_batch", "version": 1, "tasks": [
      {"name": "batch_q", "taskReferenceName": "only", "inputParameters": {"v": "${workflow.input.n}"}}],
     "outputParameters": {"n": "${only.output.v}"}}])");
  // Started through node 1: workflows of its partitions.
  constexpr int n = 8;
  std::set<std::string> ids;
  for (int i = 0; i < n; ++i)
    ids.insert(f.start("e2e_batch", R"({"n": )" + std::to_string(i) + "}"));
  auto owners = f.partition_owners();
  for (const auto& id : ids)
    CAF_REQUIRE_EQUAL(owners[shard_of(id, partitions)], addr1);
  // Leased and reported through node 2 only.
  auto opts2 = f.client_opts();
  opts2.port = port2;
  client api2{opts2};
  std::vector<msg::leased_task> leased;
  auto t0 = std::chrono::steady_clock::now();
  while (leased.size() < n && std::chrono::steady_clock::now() - t0 < 30s) {
    msg::poll_request p;
    p.queue = "batch_q";
    p.worker_id = "batcher";
    p.max_tasks = n;
    p.timeout_ms = 1000;
    auto got = api2.poll(p);
    CAF_REQUIRE(got);
    leased.insert(leased.end(), got->begin(), got->end());
  }
  CAF_REQUIRE_EQUAL(leased.size(), static_cast<size_t>(n));
  std::vector<msg::task_result> results;
  for (const auto& t : leased) {
    msg::task_result r;
    r.task_id = t.task_id;
    r.workflow_id = t.workflow_id;
    r.lease_token = t.lease_token;
    r.status = "COMPLETED";
    r.output_json = t.input_json;
    results.push_back(r);
  }
  results[3].lease_token = new_uuidv7(); // not the lease this task holds
  auto answers = api2.report_batch(results);
  CAF_REQUIRE(answers);
  CAF_REQUIRE_EQUAL(answers->size(), results.size());
  for (size_t i = 0; i < answers->size(); ++i) {
    if (i == 3) {
      CAF_REQUIRE(!(*answers)[i]);
      CAF_CHECK_EQUAL(describe((*answers)[i].error()), "lease lost");
    } else {
      CAF_CHECK((*answers)[i]);
    }
  }
  for (size_t i = 0; i < leased.size(); ++i)
    if (i != 3)
      CAF_CHECK_EQUAL(f.await_end(leased[i].workflow_id, 30s), "COMPLETED");
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT "status"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                           store::params::of(leased[3].workflow_id)),
                  "RUNNING");
  // The right token, alone this time: applied.
  results[3].lease_token = leased[3].lease_token;
  CAF_REQUIRE(api2.report(results[3]));
  CAF_CHECK_EQUAL(f.await_end(leased[3].workflow_id, 30s), "COMPLETED");
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  auto st = node2.stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CAF_CHECK(f.stop_node());
}

// cluster.deciding_nodes 1: the first node owns every partition, the second none. The
// second's client starts, polls and reports all the same: they are forwarded to the first
// (with the node credential, both nodes checking credentials), and its worker's tasks are
// lent in the first's decisions. When the first stops, the second takes the partitions over
// and finishes what was started through it.
CAF_TEST(a node beyond the deciding nodes forwards its clients work and takes over when they stop) {
  test::e2e_fixture f{"e2e_cluster_deciding", {{"cluster.deciding_nodes", "1"}}};
  f.start_node({{"auth.enabled", "true"}});
  f.use_key(f.create_key("admin"));
  auto addr1 = "127.0.0.1:" + std::to_string(f.port);
  CAF_REQUIRE(f.await([&] { return f.partition_owners().size() == partitions; }));
  auto port2 = test::free_port();
  test::child_process node2{{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                             f.config_path, "--port", std::to_string(port2), "--http-port", "-1"},
                            f.dir + "/node2.log", true};
  CAF_REQUIRE(node2.wait_for_line("listening ", 60s));
  auto opts2 = f.client_opts();
  opts2.port = port2;
  client api2{opts2};
  // Node 2 hears who owns the partitions, and owns none itself.
  CAF_REQUIRE(f.await([&] {
    auto s = api2.status();
    return s && s->find(R"("forwardsToDecidingNodes":true)") != std::string::npos;
  }, 30s));
  auto s2 = api2.status();
  CAF_REQUIRE(s2);
  CAF_CHECK_NOT_EQUAL(s2->find(R"("deciding":false)"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(s2->find(R"("running":[])"), std::string::npos);
  f.define(R"([{"name": "deciding_q", "responseTimeoutSeconds": 60},
    {"name": "e2e_deciding", "version": 1, "tasks": [
      {"name": "deciding_q", "taskReferenceName": "only", "inputParameters": {"v": "${workflow.input.n}"}}],
     "outputParameters": {"n": "${only.output.v}"}}])");
  auto start_through_2 = [&](int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      msg::start_request req;
      req.workflow_name = "e2e_deciding";
      req.input_json = R"({"n": )" + std::to_string(i) + "}";
      auto r = api2.start(req);
      CAF_REQUIRE(r);
      ids.push_back(r->workflow_id);
    }
    return ids;
  };
  auto ids = start_through_2(10);
  auto owners = f.partition_owners();
  for (const auto& id : ids)
    CAF_CHECK_EQUAL(owners[shard_of(id, partitions)], addr1);
  {
    test::worker_pool workers{opts2, {"deciding_q"}, 2, test::echo_handler(), 4};
    test::expect_echoed(f, ids);
    CAF_CHECK_EQUAL(workers.rejected(), 0);
    workers.stop();
  }
  // The first node stops: its leases are released and node 2 takes every partition.
  CAF_REQUIRE(f.stop_node());
  CAF_REQUIRE(f.await([&] {
    auto o = f.partition_owners();
    return o.size() == partitions
           && std::all_of(o.begin(), o.end(), [&](const auto& kv) {
                return kv.second == "127.0.0.1:" + std::to_string(port2);
              });
  }, 30s));
  // The fixture's reads go to node 2 from now on.
  f.port = port2;
  f.api = std::make_unique<client>(f.client_opts());
  auto later = start_through_2(4);
  test::worker_pool workers{opts2, {"deciding_q"}, 2, test::echo_handler(), 4};
  test::expect_echoed(f, later);
  CAF_CHECK_EQUAL(workers.rejected(), 0);
  workers.stop();
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  auto st = node2.stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

// A second node whose HTTP port is taken exits before it joins: it never registers nor
// takes a partition from the node serving them.
CAF_TEST(a node that cannot take its HTTP port exits without joining the cluster) {
  test::e2e_fixture f{"e2e_cluster_http_taken"};
  f.start_node();
  auto owners = f.partition_owners();
  CAF_REQUIRE_EQUAL(owners.size(), static_cast<size_t>(partitions));
  auto second = f.run_cli({"serve", "--dsn", f.db.dsn(), "--config", f.config_path, "--port",
                           std::to_string(test::free_port()), "--http-port",
                           std::to_string(f.http_port)});
  CAF_CHECK_EQUAL(second.exit_code, 1);
  CAF_CHECK_NOT_EQUAL(second.log.find("cannot listen for HTTP"), std::string::npos);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "Nodes")"), 1);
  CAF_CHECK(f.partition_owners() == owners);
  CAF_CHECK(f.stop_node());
}
