#include "engine/metrics/node_metrics.hpp"

namespace nf::engine::metrics {

namespace {

// Seconds, from a fraction of a millisecond (a flush of a few requests on a warm
// connection) to seconds (a database in trouble).
const bucket_bounds short_seconds{0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                  0.05,   0.1,    0.25,  0.5,    1,     2.5,  5};
// HTTP requests include long polls (up to lessor.max_poll_timeout_ms, 30 s by default).
const bucket_bounds request_seconds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                    0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
// Requests or workflows per flush: up to the flush's bounds (1000 starts, 1000 completions).
const bucket_bounds batch_sizes{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000};

} // namespace

node_families::node_families(registry& r)
  : workflows_started(r.counters("nodeflow_workflows_started_total",
                                 "Workflows this node's decider started (children included)",
                                 {"workflow"})),
    workflows_ended(r.counters("nodeflow_workflows_ended_total",
                               "Workflows this node's decider ended, by final status "
                               "(completed, failed, terminated, timed_out)",
                               {"workflow", "status"})),
    tasks_ended(r.counters("nodeflow_tasks_ended_total",
                           "Task attempts whose end this node's decider took in (or decided "
                           "inline), by task definition and final status",
                           {"task_type", "status"})),
    tasks_leased(r.counters("nodeflow_tasks_leased_total",
                            "Task attempts this node leased to workers (by poll, or in the "
                            "decision to a waiting poll), by task definition",
                            {"task_type"})),
    leases_expired(r.counters("nodeflow_task_leases_expired_total",
                              "Leases this node took back because they expired without a "
                              "completion or heartbeat (their attempts time out), by queue",
                              {"queue"})),
    decide_flush_seconds(r.histograms("nodeflow_decide_flush_seconds",
                                      "Duration of the decide committer's flushes that "
                                      "carried requests or decisions (one transaction each, "
                                      "retries included)",
                                      {}, short_seconds)),
    decide_batch_requests(r.histograms("nodeflow_decide_batch_requests",
                                       "Starts, completions and commands per decide flush",
                                       {}, batch_sizes)),
    decide_batch_workflows(r.histograms("nodeflow_decide_batch_workflows",
                                        "Workflow evaluations written per decide flush", {},
                                        batch_sizes)),
    http_requests(r.counters("nodeflow_http_requests_total",
                             "HTTP requests answered, by route pattern, method and status",
                             {"route", "method", "status"})),
    http_request_seconds(r.histograms("nodeflow_http_request_duration_seconds",
                                      "Time from an HTTP request read to its answer, by route "
                                      "pattern and method",
                                      {"route", "method"}, request_seconds)),
    store_worker_wait_seconds(r.histograms(
      "nodeflow_store_worker_wait_seconds",
      "Time a client request waited in a store worker's mailbox before the worker (and "
      "its database session) took it up",
      {}, short_seconds)),
    partitions_owned(r.gauges("nodeflow_partitions_owned",
                              "Partitions whose lease this node holds and runs")),
    forwarded_report_batch(r.histograms("nodeflow_forwarded_report_batch",
                                        "Task reports per message this node relayed to the "
                                        "node that decides their workflows",
                                        {}, batch_sizes)),
    stale_writes_refused(r.counters("nodeflow_stale_writes_refused_total",
                                    "Writes for a partition refused because its lease had "
                                    "moved to a newer epoch (another owner), by writer",
                                    {"writer"})) {}

registry& node_registry() {
  static registry r;
  return r;
}

const node_families& node_metrics() {
  static const node_families f{node_registry()};
  return f;
}

std::string_view status_label(flow::workflow_status s) {
  using flow::workflow_status;
  switch (s) {
    case workflow_status::running: return "running";
    case workflow_status::completed: return "completed";
    case workflow_status::failed: return "failed";
    case workflow_status::timed_out: return "timed_out";
    case workflow_status::terminated: return "terminated";
    case workflow_status::paused: return "paused";
  }
  return "unknown";
}

std::string_view status_label(flow::task_status s) {
  using flow::task_status;
  switch (s) {
    case task_status::scheduled: return "scheduled";
    case task_status::in_progress: return "in_progress";
    case task_status::completed: return "completed";
    case task_status::completed_with_errors: return "completed_with_errors";
    case task_status::failed: return "failed";
    case task_status::failed_with_terminal_error: return "failed_with_terminal_error";
    case task_status::timed_out: return "timed_out";
    case task_status::canceled: return "canceled";
    case task_status::skipped: return "skipped";
  }
  return "unknown";
}

} // namespace nf::engine::metrics
