#pragma once

#include <string>

namespace nf::bench {

struct worker_options {
  std::string node = "127.0.0.1:4510";
  std::string queue;
  std::string id = "bench-worker";
  std::string out;
  int pollers = 4; ///< long polls kept in flight
  int batch = 32;  ///< tasks one poll may take
  /// The tasks one poll brought, finished together, reported in one message (the client's
  /// report_batch_async); false: one report per task (report_async).
  bool batch_reports = true;
};

/// `nodeflow-bench worker …`: runs until SIGTERM; see worker.cpp.
int run_worker(const worker_options& opts);

} // namespace nf::bench
