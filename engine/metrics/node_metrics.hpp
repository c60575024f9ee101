#pragma once

// The node's own metrics (GET /metrics), declared once: name, help, labels and buckets.
// One node per process, so one set per process; the places that count reach it through
// node_metrics(). It lives in engine/ because engine/ (the decider's outcomes), actors/
// (flushes, leases, sweeps, partitions) and net/ (HTTP, store workers) all count, and
// engine/ is the lowest folder all three may include; store/ counts nothing (what only the
// store knows, queue depths and backlogs, is read from it at scrape time instead).

#include <string_view>

#include "engine/metrics/registry.hpp"
#include "flow/status.hpp"

namespace nf::engine::metrics {

struct node_families {
  explicit node_families(registry& r);

  // Counted by the decider (engine/decide/batch.cpp) for the transactions that committed.
  counter_family& workflows_started;  ///< {workflow}
  counter_family& workflows_ended;    ///< {workflow, status}
  counter_family& tasks_ended;        ///< {task_type, status}
  // Leases granted by the lessor or in a decision (actors/lessor, actors/decider).
  counter_family& tasks_leased;       ///< {task_type}
  counter_family& leases_expired;     ///< {queue}: the lease sweep (actors/timer)
  // The decide committer's flushes (actors/decider/committer.cpp).
  histogram_family& decide_flush_seconds;
  histogram_family& decide_batch_requests;
  histogram_family& decide_batch_workflows;
  // The HTTP door (cmd/serve_http.cpp) and the api's store workers (net/api).
  counter_family& http_requests;            ///< {route, method, status}
  histogram_family& http_request_seconds;   ///< {route, method}
  histogram_family& store_worker_wait_seconds;
  gauge_family& partitions_owned;  ///< actors/node
  /// Reports per message relayed to the node that decides their workflows (actors/node).
  histogram_family& forwarded_report_batch;
  /// Partition writes refused by the epoch fence (store/partition_fence.hpp): the
  /// partition moved to another owner while this node still acted for it.
  counter_family& stale_writes_refused;  ///< {writer}
};

/// The process's registry and the node's families in it.
registry& node_registry();
const node_families& node_metrics();

/// A status as a label value: lower case ("COMPLETED" → "completed").
std::string_view status_label(flow::workflow_status s);
std::string_view status_label(flow::task_status s);

} // namespace nf::engine::metrics
