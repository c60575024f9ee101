#pragma once

// The node's throughput and latency over the last hour, sampled from its own metrics every
// few seconds (GET /api/metrics/series, the web UI's metrics page): rates are the counters'
// increase per second over each interval, latencies the quantiles of what the histograms
// observed in it. A scrape-less view for an operator without Prometheus.

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/metrics/node_metrics.hpp"
#include "engine/metrics/registry.hpp"

namespace nf::engine::metrics {

struct series_point {
  int64_t at_ms = 0; ///< the interval's end, unix milliseconds
  double workflows_started = 0; ///< per second
  double workflows_ended = 0;
  double tasks_ended = 0;
  double tasks_leased = 0;
  std::optional<double> decide_flush_p50_ms; ///< none: no flush in the interval
  std::optional<double> decide_flush_p99_ms;
  std::optional<double> http_p99_ms; ///< requests answered at once (not long polls, streams)
};

/// What one sample reads: totals since the process started.
struct series_totals {
  uint64_t workflows_started = 0, workflows_ended = 0, tasks_ended = 0, tasks_leased = 0;
  std::vector<uint64_t> decide_flush;  ///< cumulative buckets, +Inf last
  std::vector<uint64_t> http;          ///< cumulative buckets over the counted routes
};

/// The quantile q (0…1) of the observations between two cumulative bucket readings, by
/// linear interpolation inside the bucket it falls in; none when nothing was observed.
/// Beyond the last bound it answers the last bound.
std::optional<double> quantile_between(const std::vector<uint64_t>& before,
                                       const std::vector<uint64_t>& after,
                                       const bucket_bounds& bounds, double q);

class rate_series {
public:
  explicit rate_series(size_t capacity) : capacity_(capacity) {}

  /// Adds the interval since the previous sample (the first sample only remembers).
  void add(int64_t now_ms, series_totals totals, const bucket_bounds& flush_bounds,
           const bucket_bounds& http_bounds);
  std::vector<series_point> points() const;

private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::optional<std::pair<int64_t, series_totals>> last_;
  std::deque<series_point> points_;
};

/// Reads the totals from the node's families now. HTTP routes of long polls and streams
/// are left out: they wait by design and would drown the latency of everything else.
series_totals read_series_totals(const node_families& f);

} // namespace nf::engine::metrics
