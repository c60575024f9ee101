#pragma once

#include <string>

namespace nf::bench {

struct worker_options {
  /// "caf": the client library over the node's CAF port (`node`); "http": Conductor's task
  /// REST on the node's HTTP port (`http`), see http_worker.cpp.
  std::string transport = "caf";
  std::string node = "127.0.0.1:4510";
  std::string http; ///< HOST:PORT of the node's HTTP door (transport http)
  std::string queue;
  std::string id = "bench-worker";
  std::string out;
  int pollers = 4; ///< long polls kept in flight
  int batch = 32;  ///< tasks one poll may take
  /// The tasks one poll brought, finished together, reported in one message (the client's
  /// report_batch_async); false: one report per task (report_async). CAF only: Conductor's
  /// REST has no batch report.
  bool batch_reports = true;
  /// HTTP: connections reporting results, per poller (each one POST /api/tasks at a time,
  /// or `pipeline` of them written back to back).
  int report_conns = 16;
  int pipeline = 1; ///< HTTP: reports written on a connection before its answers are read
};

/// `nodeflow-bench worker …`: runs until SIGTERM; see worker.cpp.
int run_worker(const worker_options& opts);

/// `nodeflow-bench worker --transport http …`: the same over HTTP; see http_worker.cpp.
int run_http_worker(const worker_options& opts);

} // namespace nf::bench
