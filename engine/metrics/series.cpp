#include "engine/metrics/series.hpp"

#include <string_view>

namespace nf::engine::metrics {

namespace {

uint64_t counter_total(const family_snapshot& f) {
  double total = 0;
  for (const auto& s : f.samples)
    total += s.value;
  return static_cast<uint64_t>(total);
}

void add_buckets(std::vector<uint64_t>& into, const std::vector<uint64_t>& b) {
  if (into.size() < b.size())
    into.resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i)
    into[i] += b[i];
}

bool waits_by_design(const std::vector<std::string>& labels) {
  if (labels.empty())
    return false;
  std::string_view route = labels.front();
  return route.find("/poll/") != std::string_view::npos
         || (route.size() >= 7 && route.substr(route.size() - 7) == "/stream");
}

double per_second(uint64_t before, uint64_t after, double seconds) {
  return after >= before && seconds > 0 ? static_cast<double>(after - before) / seconds : 0;
}

} // namespace

std::optional<double> quantile_between(const std::vector<uint64_t>& before,
                                       const std::vector<uint64_t>& after,
                                       const bucket_bounds& bounds, double q) {
  if (after.empty() || after.size() != bounds.size() + 1)
    return std::nullopt;
  auto delta = [&](size_t i) {
    uint64_t b = i < before.size() ? before[i] : 0;
    return after[i] >= b ? after[i] - b : 0;
  };
  uint64_t count = delta(after.size() - 1);
  if (count == 0)
    return std::nullopt;
  double rank = q * static_cast<double>(count);
  uint64_t below = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    uint64_t upto = delta(i);
    if (static_cast<double>(upto) >= rank && upto > below) {
      double lower = i == 0 ? 0 : bounds[i - 1];
      double within = (rank - static_cast<double>(below)) / static_cast<double>(upto - below);
      return lower + (bounds[i] - lower) * within;
    }
    below = upto;
  }
  return bounds.empty() ? std::nullopt : std::optional<double>{bounds.back()};
}

void rate_series::add(int64_t now_ms, series_totals totals, const bucket_bounds& flush_bounds,
                      const bucket_bounds& http_bounds) {
  std::lock_guard lock{mutex_};
  if (last_ && now_ms > last_->first) {
    const auto& [then_ms, was] = *last_;
    double secs = static_cast<double>(now_ms - then_ms) / 1000.0;
    series_point p;
    p.at_ms = now_ms;
    p.workflows_started = per_second(was.workflows_started, totals.workflows_started, secs);
    p.workflows_ended = per_second(was.workflows_ended, totals.workflows_ended, secs);
    p.tasks_ended = per_second(was.tasks_ended, totals.tasks_ended, secs);
    p.tasks_leased = per_second(was.tasks_leased, totals.tasks_leased, secs);
    auto ms = [](std::optional<double> s) {
      return s ? std::optional<double>{*s * 1000.0} : std::nullopt;
    };
    p.decide_flush_p50_ms =
      ms(quantile_between(was.decide_flush, totals.decide_flush, flush_bounds, 0.5));
    p.decide_flush_p99_ms =
      ms(quantile_between(was.decide_flush, totals.decide_flush, flush_bounds, 0.99));
    p.http_p99_ms = ms(quantile_between(was.http, totals.http, http_bounds, 0.99));
    points_.push_back(p);
    while (points_.size() > capacity_)
      points_.pop_front();
  }
  last_.emplace(now_ms, std::move(totals));
}

std::vector<series_point> rate_series::points() const {
  std::lock_guard lock{mutex_};
  return {points_.begin(), points_.end()};
}

series_totals read_series_totals(const node_families& f) {
  series_totals t;
  t.workflows_started = counter_total(f.workflows_started.snapshot());
  t.workflows_ended = counter_total(f.workflows_ended.snapshot());
  t.tasks_ended = counter_total(f.tasks_ended.snapshot());
  t.tasks_leased = counter_total(f.tasks_leased.snapshot());
  for (const auto& s : f.decide_flush_seconds.snapshot().samples)
    add_buckets(t.decide_flush, s.buckets);
  for (const auto& s : f.http_request_seconds.snapshot().samples)
    if (!waits_by_design(s.labels))
      add_buckets(t.http, s.buckets);
  return t;
}

} // namespace nf::engine::metrics
