#pragma once

// The harness's workload: 10-step chains and N-way fan-outs of one SIMPLE task, started
// under an idempotency key each (a start the node did not answer is sent again, to any
// node, with the same key) and worked by real workers over the client library. Both
// sides keep what the nodes acknowledged: the starts answered with a workflow id, the
// completions answered ok. Those are what must survive every fault.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "net/client/client.hpp"

namespace nf::fault {

/// Definitions of the workload: task `fh_step`, workflows `fh_chain` (10 steps),
/// `fh_fan` (`fan_width` branches and a join), `fh_wait` (WAIT `wait_s` then a step) and
/// `fh_poison` (one step on queue `fh_poison_step`).
std::string workload_definitions(int fan_width, int wait_s, int response_timeout_s);

/// The workflow names and the status each must end in (the checker's `ends`).
std::map<std::string, std::string> expected_ends();

struct start_plan {
  std::string prefix;         ///< idempotency keys are PREFIX-i; the correlation id is PREFIX
  int count = 0;
  int fan_every = 10;         ///< one in this many is a fan-out, the rest chains
  std::string workflow;       ///< set: every start is of this workflow instead
  std::vector<int> nodes;     ///< the nodes starts go to, round robin (empty = all)
  std::chrono::milliseconds pace{0}; ///< pause between one thread's starts
  std::chrono::seconds end_within{120}; ///< after the last start, for every workflow to end
  /// How far before the first start the checker looks: a node whose clock is behind
  /// stamps its executions earlier than the run began.
  int64_t check_lookback_ms = 0;
};

/// Starts workflows from several threads, each start retried on `unavailable` (same
/// key, next node) until acknowledged or the deadline.
class starter {
public:
  starter(std::vector<client_options> nodes, int threads);
  ~starter();

  /// Runs `plan` in the background; wait() for it.
  void run(start_plan plan, std::chrono::seconds deadline);
  void wait();

  /// Workflow ids the nodes acknowledged, with the (wall, ms) time of the answer.
  std::map<std::string, int64_t> acknowledged() const;
  int64_t retries() const { return retries_; }
  /// Starts that ended in an error other than unavailable: key -> error.
  std::map<std::string, std::string> refused() const;
  /// Starts never acknowledged before the deadline.
  int64_t abandoned() const { return abandoned_; }

private:
  std::vector<std::unique_ptr<client>> clients_;
  int threads_;
  std::vector<std::thread> running_;
  mutable std::mutex mx_;
  std::map<std::string, int64_t> acked_;
  std::map<std::string, std::string> refused_;
  std::atomic<int64_t> retries_{0}, abandoned_{0};
};

/// Worker threads polling `fh_step` across the nodes (a thread moves on to the next node
/// when its node does not answer) and reporting each poll's tasks in one batch.
class workers {
public:
  workers(std::vector<client_options> nodes, int threads);
  ~workers();
  void stop();

  using identity = std::tuple<std::string, std::string, int32_t>; // workflow, ref, iteration
  /// Completions the nodes accepted: task id by identity (several ids = a duplicate).
  std::map<identity, std::set<std::string>> accepted() const;
  /// Reports refused with `lease lost`: stale writes the fence caught.
  int64_t lease_lost() const { return lease_lost_; }
  /// Reports refused for any other reason, with one example.
  int64_t rejected() const { return rejected_; }
  std::string rejected_example() const;
  /// Wall time (ms) of the latest accepted report.
  int64_t last_accept_ms() const { return last_accept_ms_; }
  int64_t accepted_count() const { return accepted_count_; }

private:
  void loop(int idx);

  std::vector<std::unique_ptr<client>> clients_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  mutable std::mutex mx_;
  std::map<identity, std::set<std::string>> accepted_;
  std::string rejected_example_;
  std::atomic<int64_t> lease_lost_{0}, rejected_{0}, last_accept_ms_{0}, accepted_count_{0};
};

/// Milliseconds since the epoch (the harness's wall clock).
int64_t now_ms();

} // namespace nf::fault
