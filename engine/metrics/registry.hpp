#pragma once

// A small metrics registry: counters, gauges and fixed-bucket histograms, plain or in
// labelled families, read at scrape time (net/web renders them as Prometheus text). An
// increment is one relaxed atomic add: the decider, lessor and HTTP threads count on their
// hot paths, and nodeflow's throughput is CPU-bound. A labelled child is created on first
// use under its family's mutex and never moves or goes away, so a caller that looks it up
// once may keep the reference (label_cache below).

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nf::engine::metrics {

class counter {
public:
  void inc(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

private:
  std::atomic<uint64_t> v_{0};
};

class gauge {
public:
  void set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  void add(int64_t n) { v_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return v_.load(std::memory_order_relaxed); }

private:
  std::atomic<int64_t> v_{0};
};

/// Upper bounds of a histogram's buckets, ascending; +Inf is implied.
using bucket_bounds = std::vector<double>;

class histogram {
public:
  explicit histogram(const bucket_bounds& bounds);
  void observe(double v);

  /// Cumulative counts per bound, then +Inf (== count); read without a lock, so a scrape
  /// racing an observation may see it in a bucket and not yet in the sum (never the reverse
  /// order of buckets: each is read once and made cumulative here).
  std::vector<uint64_t> cumulative() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

private:
  bucket_bounds bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  ///< per bound, then +Inf; not cumulative
  std::atomic<double> sum_{0};
};

enum class kind { counter, gauge, histogram };

/// One labelled sample as read at scrape time.
struct sample {
  std::vector<std::string> labels;  ///< values, in the family's label order
  double value = 0;                 ///< counter, gauge
  std::vector<uint64_t> buckets;    ///< histogram: cumulative, the last is +Inf
  double sum = 0;                   ///< histogram
};

/// One family as read at scrape time (or made up by the scraper from a store read).
struct family_snapshot {
  std::string name;
  std::string help;
  metrics::kind type = kind::counter;
  std::vector<std::string> label_names;
  bucket_bounds bounds;  ///< histogram
  std::vector<sample> samples;
};

class family_base {
public:
  family_base(std::string name, std::string help, metrics::kind type,
              std::vector<std::string> label_names, bucket_bounds bounds = {});
  virtual ~family_base() = default;
  family_snapshot snapshot() const;
  const std::string& name() const { return name_; }
  size_t label_count() const { return label_names_.size(); }
  const bucket_bounds& bounds() const { return bounds_; }

protected:
  struct child_base {
    std::vector<std::string> labels;
    virtual ~child_base() = default;
    virtual void read(sample& s) const = 0;
  };
  /// The child for `values` (one per label name), made by `make` on first use.
  child_base& find_or_make(std::initializer_list<std::string_view> values,
                           std::unique_ptr<child_base> (*make)(const family_base&));

  std::string name_;
  std::string help_;
  metrics::kind type_;
  std::vector<std::string> label_names_;
  bucket_bounds bounds_;

private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<child_base>, std::less<>> children_;
};

/// A family of T (counter, gauge or histogram) with its label names; `with` answers the
/// child of one set of label values (as many as the family has names; none for a family
/// without labels). Values are taken as given: a caller bounds their cardinality.
template <class T>
class family : public family_base {
public:
  using family_base::family_base;
  T& with(std::initializer_list<std::string_view> values = {}) {
    return static_cast<child&>(find_or_make(values, &make)).metric;
  }

private:
  struct child : child_base {
    explicit child(const family_base& f);
    T metric;
    void read(sample& s) const override;
  };
  static std::unique_ptr<child_base> make(const family_base& f) {
    return std::make_unique<child>(f);
  }
};

// Each kind makes and reads its children in registry.cpp.
template <>
family<counter>::child::child(const family_base&);
template <>
void family<counter>::child::read(sample&) const;
template <>
family<gauge>::child::child(const family_base&);
template <>
void family<gauge>::child::read(sample&) const;
template <>
family<histogram>::child::child(const family_base&);
template <>
void family<histogram>::child::read(sample&) const;

using counter_family = family<counter>;
using gauge_family = family<gauge>;
using histogram_family = family<histogram>;

/// The families of a process, in registration order.
class registry {
public:
  counter_family& counters(std::string name, std::string help,
                           std::vector<std::string> label_names = {});
  gauge_family& gauges(std::string name, std::string help,
                       std::vector<std::string> label_names = {});
  histogram_family& histograms(std::string name, std::string help,
                               std::vector<std::string> label_names, bucket_bounds bounds);
  std::vector<family_snapshot> collect() const;

private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<family_base>> families_;
};

/// For one thread that counts the same few label sets again and again (the decider's
/// committer): the children it looked up, by their joined values, so a count after the
/// first is a hash lookup with no lock and no allocation.
template <class T>
class label_cache {
public:
  explicit label_cache(family<T>& f) : family_(f) {}
  T& with(std::string_view a) {
    key_.assign(a);
    return find(a, {});
  }
  T& with(std::string_view a, std::string_view b) {
    key_.assign(a);
    key_.push_back('\x1f');
    key_.append(b);
    return find(a, b);
  }

private:
  T& find(std::string_view a, std::string_view b) {
    auto it = cache_.find(key_);
    if (it != cache_.end())
      return *it->second;
    T& m = family_.label_count() == 1 ? family_.with({a}) : family_.with({a, b});
    cache_.emplace(key_, &m);
    return m;
  }
  family<T>& family_;
  std::string key_;  ///< reused: no allocation once it is long enough
  std::unordered_map<std::string, T*> cache_;
};

} // namespace nf::engine::metrics
