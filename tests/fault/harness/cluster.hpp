#pragma once

// The `nodeflow serve` processes of a run, all on one database. Node i's Postgres
// connection goes through proxy link `pg-i` and its cluster door through link `door-i`,
// which it advertises (node.advertise), so the proxy stands between a node and
// Postgres and between the nodes. A node keeps its ports across restarts so clients
// and peers find it again. A node may run under a faked clock (libfaketime).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/client/client.hpp"
#include "tests/e2e/process.hpp"
#include "tests/fault/harness/options.hpp"
#include "tests/fault/harness/postgres.hpp"
#include "tests/fault/harness/proxy.hpp"

namespace nf::fault {

struct node_proc {
  int index = 0;
  uint16_t port = 0;      ///< client protocol (node.port)
  uint16_t door_port = 0; ///< the proxy's end of link door-i: what the node advertises
  uint16_t http_port = 0;
  std::string pg_link, door_link, dsn, config, log;
  std::string clock_offset; ///< "" or libfaketime's offset, e.g. "+15m"
  std::unique_ptr<test::child_process> proc;
  bool paused = false;

  std::string advertise() const { return "127.0.0.1:" + std::to_string(door_port); }
  /// The loopback address its connections leave from (tests/fault/source), so the proxy
  /// can cut the links of one pair of nodes.
  std::string source() const { return "127.0.0." + std::to_string(11 + index); }
};

class cluster {
public:
  cluster(const options& opts, fault_proxy& proxy, pg_server& pg, std::string dir,
          std::string db);
  ~cluster();

  /// Makes node `size()` (its links and config) and starts it.
  void add_node();
  int size() const { return static_cast<int>(nodes_.size()); }
  node_proc& at(int i) { return *nodes_.at(static_cast<size_t>(i)); }

  /// Starts node i (its `listening` line awaited; throws when it does not come). With
  /// `other_dsn` it serves that database instead, and its Postgres connection and cluster
  /// door bypass the proxy (a measurement of the nodes alone: the proxy relays every byte on
  /// the same cores).
  void start(int i, const std::string& clock_offset = "", const std::string& other_dsn = "");
  void kill9(int i);
  /// SIGTERM, waits for its exit; true when it exited 0.
  bool stop(int i);
  void pause(int i);  ///< SIGSTOP
  void resume(int i); ///< SIGCONT
  bool running(int i);

  /// A client of node i's client protocol.
  client_options client_opts(int i, std::chrono::milliseconds timeout) const;
  /// Sum of node i's /metrics samples whose name contains `part` (-1 when unreadable).
  int64_t metric_sum(int i, const std::string& part);
  /// Every node's log tail, for a failure.
  std::string log_tails(size_t bytes = 3000) const;
  /// The warning and error lines of every node's log so far, at most `max` of them.
  std::vector<std::string> complaints(size_t max) const;

private:
  const options& opts_;
  fault_proxy& proxy_;
  pg_server& pg_;
  std::string dir_, db_;
  std::vector<std::unique_ptr<node_proc>> nodes_;
};

} // namespace nf::fault
