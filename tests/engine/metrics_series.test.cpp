#define CAF_SUITE engine.metrics_series

// The node's metrics over time: rates per second between two samples, and the quantiles of
// what a histogram observed between them (not since the process started).

#include <caf/test/dsl.hpp>

#include "engine/metrics/series.hpp"

using namespace nf::engine::metrics;

namespace {

const bucket_bounds bounds{0.001, 0.01, 0.1};

// Cumulative buckets after observing `values` on top of `before`.
std::vector<uint64_t> observed(std::vector<uint64_t> before, std::initializer_list<double> values) {
  before.resize(bounds.size() + 1, 0);
  for (double v : values)
    for (size_t i = 0; i <= bounds.size(); ++i)
      if (i == bounds.size() || v <= bounds[i])
        ++before[i];
  return before;
}

} // namespace

CAF_TEST(a quantile reads only the observations between two readings) {
  auto first = observed({}, {0.05, 0.05, 0.05, 0.05});
  auto second = observed(first, {0.0005, 0.0005, 0.0005, 0.005});
  auto median = quantile_between(first, second, bounds, 0.5);
  CAF_REQUIRE(median);
  CAF_CHECK(*median <= 0.001);
  auto p99 = quantile_between(first, second, bounds, 0.99);
  CAF_REQUIRE(p99);
  CAF_CHECK(*p99 > 0.001 && *p99 <= 0.01);
  CAF_CHECK(!quantile_between(second, second, bounds, 0.5));
  auto slow = observed(second, {5.0});
  auto beyond = quantile_between(second, slow, bounds, 0.99);
  CAF_REQUIRE(beyond);
  CAF_CHECK_EQUAL(*beyond, 0.1);
}

CAF_TEST(rates are per second over each interval and the window is bounded) {
  rate_series s{2};
  series_totals t;
  s.add(1000, t, bounds, bounds);
  CAF_CHECK(s.points().empty());
  t.tasks_ended = 50;
  t.workflows_started = 10;
  t.decide_flush = observed({}, {0.005});
  s.add(3000, t, bounds, bounds);
  auto p = s.points();
  CAF_REQUIRE_EQUAL(p.size(), 1u);
  CAF_CHECK_EQUAL(p[0].at_ms, 3000);
  CAF_CHECK_EQUAL(p[0].tasks_ended, 25.0);
  CAF_CHECK_EQUAL(p[0].workflows_started, 5.0);
  CAF_CHECK(p[0].decide_flush_p50_ms && *p[0].decide_flush_p50_ms > 1.0);
  CAF_CHECK(!p[0].http_p99_ms);
  s.add(4000, t, bounds, bounds);
  s.add(5000, t, bounds, bounds);
  p = s.points();
  CAF_REQUIRE_EQUAL(p.size(), 2u);
  CAF_CHECK_EQUAL(p[0].at_ms, 4000);
  CAF_CHECK_EQUAL(p[1].tasks_ended, 0.0);
  CAF_CHECK(!p[1].decide_flush_p50_ms);
}
