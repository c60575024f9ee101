#pragma once

// The node's side of the sandbox: a pool of `nodeflow sandbox` processes
// (sandbox.hpp), each running one script at a time. A run that passes its time
// limit has its process killed (SIGKILL) and answers `timeout`; a process that
// dies answers `crash` for its one request; either way the next run starts a
// fresh process. Blocking and thread-safe: callers are detached workers.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/script/protocol.hpp"

namespace nf::engine::script {

struct pool_options {
  /// The sandbox's command line; the default re-executes this very binary.
  std::vector<std::string> argv{"/proc/self/exe", "sandbox"};
  int processes = 2;
  std::chrono::milliseconds timeout{1000};
  std::uint32_t memory_mb = 64;
};

class pool {
 public:
  explicit pool(pool_options opt);
  ~pool();
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// Runs `r` (its limits replaced by the pool's) in an idle process, waiting for
  /// one when all are busy.
  answer run(request r);

  const pool_options& options() const { return opt_; }
  /// Processes started so far (a killed or crashed one is replaced on demand).
  int started() const;

 private:
  struct process {
    int pid = -1;
    int fd = -1;
  };

  process take();
  void give_back(process p);
  void discard(process p);
  bool spawn(process& p, std::string& error);
  answer exchange(process& p, const std::string& body, bool& healthy, bool& delivered);

  pool_options opt_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<process> idle_;
  int live_ = 0;
  int started_ = 0;
};

} // namespace nf::engine::script
