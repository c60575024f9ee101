#define CAF_SUITE e2e.mtls
#include "caf/test/unit_test.hpp"

#include <csignal>
#include <fstream>
#include <sstream>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/e2e/raw_socket.hpp"
#include "tests/e2e/two_nodes.hpp"
#include "tests/support/test_certs.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr int partitions = 16; // the suites' default engine.partitions

std::string slurp(const std::string& path) {
  std::ifstream in{path};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// What a rogue_peer process (tests/e2e/rogue_peer.cpp) got from a door: "obtained" or
/// "refused ERROR". A process of its own, so it is a CAF node apart from this test's clients.
std::string knock(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), NF_ROGUE_PEER_BIN);
  test::child_process p{args, dir + "/rogue_peer.log", true};
  auto line = p.wait_for_line("", 30s);
  p.stop(SIGKILL);
  return line ? *line : "no answer";
}

std::string tls_knock(const std::string& dir, uint16_t port, const std::string& cafile,
                      const std::string& cert, const std::string& key) {
  auto or_unset = [](const std::string& s) { return s.empty() ? std::string{"-"} : s; };
  return knock(dir, {"tls", std::to_string(port), or_unset(cafile), or_unset(cert),
                     or_unset(key)});
}

} // namespace

// Two nodes on one database whose node-to-node door takes only certificates of the cluster
// CA. The workers reach only node 2, yet half the workflows and one queue belong to node 1:
// they finish only if node 2 forwards over the TLS door node 1 advertises. Before that,
// CAF processes knock on both doors: without a certificate, with one of another CA (trusting
// the cluster CA themselves, so only the node's check can refuse them), and without TLS.
// A CAF process holding a certificate of the cluster CA gets in, so the refusals are the
// certificates' doing.
CAF_TEST(nodes talk over mutual TLS and refuse peers without a cluster certificate) {
  test::e2e_fixture f{"e2e_mtls"};
  test::test_ca ca{f.dir, "cluster"};
  test::test_ca rogue_ca{f.dir, "rogue"};
  auto cert1 = ca.issue("node1");
  auto cert2 = ca.issue("node2");
  auto spare = ca.issue("spare");
  auto rogue = rogue_ca.issue("rogue");

  auto cluster1 = test::free_port();
  f.start_node({{"cluster.tls_ca_file", ca.cert_file()},
                {"cluster.tls_cert_file", cert1.cert},
                {"cluster.tls_key_file", cert1.key},
                {"cluster-port", std::to_string(cluster1)},
                {"node.max_connections", "6"}});
  auto port2 = test::free_port();
  auto log2 = f.dir + "/node2.log";
  test::child_process node2{{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                             f.config_path, "--port", std::to_string(port2), "--http-port", "-1",
                             "--auth", "off", "--cluster.tls_ca_file", ca.cert_file(),
                             "--cluster.tls_cert_file", cert2.cert, "--cluster.tls_key_file",
                             cert2.key, "--cluster-port", "-1"},
                            log2, true};
  auto line = node2.wait_for_line("cluster ", 60s);
  CAF_REQUIRE(line);
  auto cluster2 = static_cast<uint16_t>(std::stoi(line->substr(line->rfind(':') + 1)));
  CAF_REQUIRE(node2.wait_for_line("listening ", 60s));
  CAF_MESSAGE("cluster doors " << cluster1 << " and " << cluster2);

  // Membership names the TLS doors, not the client doors.
  auto addr1 = "127.0.0.1:" + std::to_string(cluster1);
  auto addr2 = "127.0.0.1:" + std::to_string(cluster2);
  CAF_REQUIRE(test::await_even_split(f, addr1, addr2, partitions));

  for (auto door : {cluster1, cluster2}) {
    auto none = tls_knock(f.dir, door, "", "", "");
    CAF_MESSAGE("no certificate at " << door << ": " << none);
    CAF_CHECK(none.rfind("refused ", 0) == 0);
    auto other_ca = tls_knock(f.dir, door, ca.cert_file(), rogue.cert, rogue.key);
    CAF_MESSAGE("another CA's certificate at " << door << ": " << other_ca);
    CAF_CHECK(other_ca.rfind("refused ", 0) == 0);
    auto plain = knock(f.dir, {"plain", std::to_string(door)});
    CAF_MESSAGE("plain BASP at " << door << ": " << plain);
    CAF_CHECK(plain.rfind("refused ", 0) == 0);
    auto member = tls_knock(f.dir, door, ca.cert_file(), spare.cert, spare.key);
    CAF_MESSAGE("a cluster certificate at " << door << ": " << member);
    CAF_CHECK_EQUAL(member, "obtained");
  }

  auto [on1, on2] = test::define_crossing_flow(f, "e2e_mtls", "mtls_q", addr1, addr2,
                                               partitions);
  // Starts through node 1 make workflows of its partitions, through node 2 of its own.
  auto opts2 = f.client_opts();
  opts2.port = port2;
  client api2{opts2};
  auto ids = test::start_through_both(f, api2, "e2e_mtls", 6, partitions);
  test::worker_pool workers{opts2, {on1, on2}, 2, test::echo_handler(), 4};
  test::expect_echoed(f, ids);
  // One link per pair (net/cluster/middleman_peers.hpp): when both nodes dialled each
  // other, the pair's TLS link dropped and re-formed, and reports caught in it failed.
  CAF_CHECK_EQUAL(workers.rejected(), 0);
  CAF_CHECK_EQUAL(f.workflows_with_history_gaps(), 0);
  // Node 2 reached node 1 at its TLS door.
  CAF_CHECK(slurp(log2).find("peer_linked address=" + addr1) != std::string::npos);
  // That door has a guard of its own: connections that never complete a handshake hold at
  // most node.max_connections of it, and one more is closed at once.
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i)
    idle.push_back(test::connect_to(cluster1));
  std::this_thread::sleep_for(300ms);
  int closed = 0;
  for (int fd : idle)
    closed += test::closed_by_node(fd, 500ms) ? 1 : 0;
  CAF_MESSAGE(closed << " of 8 idle connections to the cluster door closed");
  CAF_CHECK_GREATER_OR_EQUAL(closed, 2);
  CAF_CHECK(slurp(f.node_log).find("cluster_door_refused what=\"a connection beyond 6\"")
            != std::string::npos);
  for (int fd : idle)
    ::close(fd);
  workers.stop();
  auto st = node2.stop(SIGTERM);
  CAF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CAF_CHECK(f.stop_node());
}

// A partial set of cluster.tls_* files, or one that cannot be read, stops the node at
// start with the setting named.
CAF_TEST(a node refuses an incomplete or unreadable cluster TLS setup) {
  test::e2e_fixture f{"e2e_mtls_refused"};
  test::test_ca ca{f.dir, "cluster"};
  auto cert = ca.issue("node");
  auto serve = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{NF_NODEFLOW_BIN, "serve", "--dsn", f.db.dsn(), "--config",
                                  f.config_path, "--port", "0", "--http-port", "0",
                                  "--auth", "off"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto log = f.dir + "/refused.log";
    std::ofstream{log, std::ios::trunc};
    test::child_process p{argv, log, false};
    auto st = p.stop(0, 30s); // waits for it to exit on its own
    return std::make_pair(st, slurp(log));
  };
  auto [st1, out1] = serve({"--cluster.tls_ca_file", ca.cert_file(), "--cluster.tls_cert_file",
                            cert.cert, "--cluster-port", "-1"});
  CAF_CHECK(WIFEXITED(st1) && WEXITSTATUS(st1) == 2);
  CAF_MESSAGE(out1);
  CAF_CHECK(out1.find("cluster.tls_key_file missing") != std::string::npos);
  auto [st2, out2] = serve({"--cluster.tls_ca_file", ca.cert_file(), "--cluster.tls_cert_file",
                            cert.cert, "--cluster.tls_key_file", f.dir + "/absent.key",
                            "--cluster-port", "-1"});
  CAF_CHECK(WIFEXITED(st2) && WEXITSTATUS(st2) == 2);
  CAF_MESSAGE(out2);
  CAF_CHECK(out2.find("cluster.tls_key_file: cannot read " + f.dir + "/absent.key")
            != std::string::npos);
  auto [st3, out3] = serve({"--cluster.tls_ca_file", ca.cert_file(), "--cluster.tls_cert_file",
                            cert.cert, "--cluster.tls_key_file", cert.key});
  CAF_CHECK(WIFEXITED(st3) && WEXITSTATUS(st3) == 2);
  CAF_MESSAGE(out3);
  CAF_CHECK(out3.find("cluster.port: required") != std::string::npos);
}
