#pragma once

// What every scenario works with (the database, the proxy, the nodes, the webhook
// sink) and the run of a load under a fault: start the workload, run the fault beside
// it, wait until every acknowledged workflow ended, then compare what was
// acknowledged with what the database holds and run the history checker.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "store/pg/connection.hpp"
#include "tests/fault/harness/cluster.hpp"
#include "tests/fault/harness/load.hpp"
#include "tests/fault/harness/options.hpp"
#include "tests/fault/harness/postgres.hpp"
#include "tests/fault/harness/proxy.hpp"
#include "tests/fault/harness/sink.hpp"

namespace nf::fault {

struct run_context {
  const options& opts;
  pg_server& pg;
  fault_proxy& proxy;
  cluster& nodes;
  webhook_sink& sink;
  std::string db;
  store::connection sql;

  /// One number from `text` (column "n"); throws on an error.
  int64_t count(const std::string& text);
  double number(const std::string& text);
  /// Partitions of the cluster (ClusterSettings.partitionCount).
  int partitions();
  /// Every node's client options, or those of `only`.
  std::vector<client_options> clients(std::chrono::milliseconds timeout,
                                      std::vector<int> only = {});
};

/// While the fault runs: the load's two sides, and starts the fault made itself.
struct load_probe {
  starter& starts;
  workers& work;
  std::map<std::string, int64_t> extra_acks; ///< a fault's own acknowledged starts
};

struct load_outcome {
  std::string prefix;
  int64_t acked = 0;            ///< starts acknowledged
  int64_t lost_starts = 0;      ///< acknowledged, yet not in the database
  int64_t not_ended = 0;        ///< acknowledged, not ended before the deadline
  int64_t lost_completions = 0; ///< accepted completions the database does not hold COMPLETED
  std::string lost_completion_examples; ///< up to three: "task id (workflow, ref, iteration)"
  int64_t dup_accepted = 0;     ///< task identities completed twice (as the workers saw it)
  int64_t dup_db = 0;           ///< task identities with two COMPLETED attempts in the database
  int64_t lease_lost = 0;       ///< reports refused as stale (`lease lost`)
  int64_t rejected = 0;         ///< reports refused otherwise
  std::string rejected_example;
  int64_t refused_starts = 0;
  std::string refused_example;
  int64_t abandoned_starts = 0;
  int64_t started_ms = 0;
  double seconds = 0; ///< from the first start to the last end
  bool checker_ok = false;
  std::string checker_text;
  std::map<std::string, int64_t> acked_at; ///< workflow id -> wall ms of its acknowledgement

  /// True when nothing acknowledged was lost, repeated, refused or left unended.
  bool clean() const;
  /// "ok", or "FAIL (rule n of m, …)" naming the checker's failed rules.
  std::string checker_word() const;
  std::string summary() const;
};

/// Runs `plan` with workers on every node, `fault` beside it (on this thread), then
/// checks. `plan.prefix` names the scenario's workflows (their correlation id).
load_outcome run_load(run_context& ctx, start_plan plan,
                      const std::function<void(load_probe&)>& fault);

/// Runs the history checker over the workflows since `since_ms` (after the outbox is
/// delivered); prints its report.
bool run_checker(run_context& ctx, int64_t since_ms, std::string& text);

} // namespace nf::fault
