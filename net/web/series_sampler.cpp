#include "net/web/series_sampler.hpp"

namespace nf::net::web {

namespace {

int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

} // namespace

series_sampler::series_sampler(std::chrono::milliseconds interval,
                               std::chrono::milliseconds window)
  : interval_(interval),
    series_(static_cast<size_t>(std::max<int64_t>(1, window.count() / interval.count()))) {
}

series_sampler::~series_sampler() {
  stop();
}

void series_sampler::sample_now() {
  const auto& f = engine::metrics::node_metrics();
  series_.add(unix_ms_now(), engine::metrics::read_series_totals(f),
              f.decide_flush_seconds.bounds(), f.http_request_seconds.bounds());
}

void series_sampler::start() {
  sample_now();
  thread_ = std::thread{[this] {
    std::unique_lock lock{mutex_};
    while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
      lock.unlock();
      sample_now();
      lock.lock();
    }
  }};
}

void series_sampler::stop() {
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

} // namespace nf::net::web
