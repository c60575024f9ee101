#pragma once

// The fault proxy (tests/fault/proxy, `nodeflow-fault-proxy`) run as a child process,
// and its control port's line protocol: one command a line, one `ok …`/`error …` line
// back. Every node's Postgres link and cluster door go through one proxy process.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/e2e/process.hpp"

namespace nf::fault {

class fault_proxy {
public:
  /// Starts `bin --control 127.0.0.1:0` and waits for its `ready` line (throws without).
  fault_proxy(const std::string& bin, const std::string& log_path);
  ~fault_proxy();

  /// `add NAME TARGET`: a new link; answers the port it listens on.
  uint16_t add(const std::string& name, const std::string& target);
  /// `set NAME MODE…` (pass, blackhole, reset, half-open, refuse, delay MS [J], loss PCT),
  /// optionally ending `from ADDRESS`: that client address's connections only.
  void set(const std::string& name, const std::string& mode);
  /// `sources NAME`: the client addresses of the link's open connections.
  std::vector<std::string> sources(const std::string& name);
  /// `cut-after-commit NAME N`.
  void cut_after_commit(const std::string& name, int n);
  /// `stats NAME`, as numbers by key (connections, open, cuts, resets, commits_seen, …).
  std::map<std::string, int64_t> stats(const std::string& name);

  /// One command, its reply after `ok ` (throws std::runtime_error on `error …`).
  std::string command(const std::string& line);

private:
  std::unique_ptr<test::child_process> proc_;
  std::string log_;
  int fd_ = -1;
  std::string buffered_;
  std::mutex mx_;
};

} // namespace nf::fault
