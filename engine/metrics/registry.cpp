#include "engine/metrics/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace nf::engine::metrics {

histogram::histogram(const bucket_bounds& bounds)
  : bounds_(bounds), buckets_(new std::atomic<uint64_t>[bounds.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i)
    buckets_[i].store(0, std::memory_order_relaxed);
}

void histogram::observe(double v) {
  // `le` is inclusive: v lands in the first bucket whose bound is >= v.
  auto i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v)
                               - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  // C++17 has no fetch_add for atomic<double>.
  auto cur = sum_.load(std::memory_order_relaxed);
  while (!sum_.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed))
    ;
}

std::vector<uint64_t> histogram::cumulative() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

family_base::family_base(std::string name, std::string help, metrics::kind type,
                         std::vector<std::string> label_names, bucket_bounds bounds)
  : name_(std::move(name)), help_(std::move(help)), type_(type),
    label_names_(std::move(label_names)), bounds_(std::move(bounds)) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()))
    throw std::invalid_argument("metric " + name_ + ": bucket bounds must ascend");
}

family_base::child_base&
family_base::find_or_make(std::initializer_list<std::string_view> values,
                          std::unique_ptr<child_base> (*make)(const family_base&)) {
  if (values.size() != label_names_.size())
    throw std::invalid_argument("metric " + name_ + ": expected "
                                + std::to_string(label_names_.size()) + " label values");
  // The key joins the values with a separator no label value needs; one buffer per thread,
  // so a lookup of an existing child allocates nothing once the buffer is large enough.
  thread_local std::string key;
  key.clear();
  for (auto v : values) {
    key.append(v);
    key.push_back('\x1f');
  }
  std::lock_guard<std::mutex> lock{mutex_};
  auto it = children_.find(std::string_view{key});
  if (it != children_.end())
    return *it->second;
  auto c = make(*this);
  for (auto v : values)
    c->labels.emplace_back(v);
  auto& ref = *c;
  children_.emplace(key, std::move(c));
  return ref;
}

family_snapshot family_base::snapshot() const {
  family_snapshot f{name_, help_, type_, label_names_, bounds_, {}};
  std::lock_guard<std::mutex> lock{mutex_};
  f.samples.reserve(children_.size());
  for (const auto& [key, c] : children_) {
    sample s;
    s.labels = c->labels;
    c->read(s);
    f.samples.push_back(std::move(s));
  }
  return f;
}

template <>
family<counter>::child::child(const family_base&) {}
template <>
void family<counter>::child::read(sample& s) const {
  s.value = static_cast<double>(metric.value());
}

template <>
family<gauge>::child::child(const family_base&) {}
template <>
void family<gauge>::child::read(sample& s) const {
  s.value = static_cast<double>(metric.value());
}

template <>
family<histogram>::child::child(const family_base& f) : metric(f.bounds()) {}
template <>
void family<histogram>::child::read(sample& s) const {
  // The sum after the buckets: an observation racing the scrape shows in the buckets
  // first, and the count is the +Inf bucket, so `_count` always equals `le="+Inf"`.
  s.buckets = metric.cumulative();
  s.sum = metric.sum();
}

counter_family& registry::counters(std::string name, std::string help,
                                   std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock{mutex_};
  families_.push_back(std::make_unique<counter_family>(std::move(name), std::move(help),
                                                       kind::counter, std::move(label_names)));
  return static_cast<counter_family&>(*families_.back());
}

gauge_family& registry::gauges(std::string name, std::string help,
                               std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock{mutex_};
  families_.push_back(std::make_unique<gauge_family>(std::move(name), std::move(help),
                                                     kind::gauge, std::move(label_names)));
  return static_cast<gauge_family&>(*families_.back());
}

histogram_family& registry::histograms(std::string name, std::string help,
                                       std::vector<std::string> label_names,
                                       bucket_bounds bounds) {
  std::lock_guard<std::mutex> lock{mutex_};
  families_.push_back(std::make_unique<histogram_family>(
    std::move(name), std::move(help), kind::histogram, std::move(label_names), std::move(bounds)));
  return static_cast<histogram_family&>(*families_.back());
}

std::vector<family_snapshot> registry::collect() const {
  std::lock_guard<std::mutex> lock{mutex_};
  std::vector<family_snapshot> out;
  out.reserve(families_.size());
  for (const auto& f : families_)
    out.push_back(f->snapshot());
  return out;
}

} // namespace nf::engine::metrics
