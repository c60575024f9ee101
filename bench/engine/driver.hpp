#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace nf::bench {

struct run_options {
  std::string node = "127.0.0.1:4510";
  /// More nodes of the same cluster (--node repeated): worker process i uses node i mod n.
  std::vector<std::string> more_nodes;
  /// The same nodes' HTTP doors (HOST:PORT), in --node's order: the workers' address when
  /// they run over HTTP.
  std::vector<std::string> http;
  /// How the workers poll and report, each workload run once per transport in this order:
  /// "caf" (the client library) or "http" (Conductor's task REST). The starts always go
  /// through the client library.
  std::vector<std::string> transports{"caf"};
  std::string dsn;
  std::vector<std::string> workloads{"W1", "W1lat", "W1cache", "W2", "W3", "W4"};
  std::string exe; ///< this binary, for the worker processes
  std::string out; ///< JSON lines kept here
  std::string plot_data;   ///< a TSV of the figures the plot shows
  std::string statements_dir; ///< pg_stat_statements' top statements per workload
  std::string latencies_dir;  ///< every workflow's latencies per workload (a TSV each)
  std::string work_dir = "/tmp";
  bool json = false;
  bool quick = false;
  std::vector<pid_t> serve_pids; ///< the nodes' processes, for CPU and peak RSS
  pid_t pg_pid = 0; ///< the postmaster; 0 = found from a backend's parent
  int worker_procs = 2;
  int pollers = 8;   ///< long polls in flight per worker process
  int batch = 64;    ///< tasks one poll may take
  bool batch_reports = true; ///< a poll's tasks reported in one message (worker_options)
  int report_conns = 16; ///< HTTP: reporting connections per poller (worker_options)
  int pipeline = 1;     ///< HTTP: reports written back to back on one (worker_options)
  /// Start calls in flight for W2, W3 and W4 (workflows whose tasks are the measure).
  int start_concurrency = 64;
  /// W1's start calls in flight: W1 measures how fast the node takes starts, so its client
  /// offers as many as it takes for the node, not the client, to set the pace: on a
  /// two-core machine W1's throughput stops rising at ~512 (docs/perf/).
  int w1_start_concurrency = 512;
  int w1_workflows = 20000;
  double w1lat_rate = 200;
  double w1lat_seconds = 20;
  /// W1cache: its misses, then its hits, each started at this rate for this long.
  double w1cache_rate = 100;
  double w1cache_seconds = 10;
  int w2_workflows = 2000;
  int w2_tasks = 10;
  int w3_workflows = 200;
  int w3_fanout = 50;
  /// > 0: W2 and W3 start workflows for this many seconds instead of a fixed number, and
  /// their tasks/s is measured over the steady part (workload_spec::duration_s).
  double duration_seconds = 0;
  int w4_workflows = 2000;
  std::vector<long long> w4_history{1000000, 10000000};
  /// Connections that generate W4's history side by side; 0 = one per core.
  int w4_writers = 0;
  /// A node on an empty database of the same Postgres (bench/run starts one): each W4 step
  /// on a history runs W2's shape there too, just before and just after it, so that the
  /// machine's drift over the history's generation is not counted as the history's cost.
  std::string w4_control_node;
  std::string w4_control_dsn;
  std::string w4_control_http;
  pid_t w4_control_serve_pid = 0;
  bool ceiling = true;
  double ceiling_seconds = 5;
  int ceiling_connections = 16;
  double settle_seconds = 3.0; ///< idle window before and after each workload (stats flush)
  double timeout_seconds = 600; ///< a workload not done by then fails the run
};

/// `nodeflow-bench run …`: the ceiling, then each workload; exit code 1 when a
/// workload did not complete.
int run_benchmark(const run_options& opts);

} // namespace nf::bench
