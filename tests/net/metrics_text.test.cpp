#define CAF_SUITE net.metrics_text

// The registry (engine/metrics/registry.hpp) and its Prometheus text (net/web/metrics_text.hpp):
// labelled children made once and kept, histogram buckets by inclusive upper bound and
// cumulative, and the exact text of each kind with escaped label values.

#include "caf/test/unit_test.hpp"

#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/metrics/registry.hpp"
#include "net/web/metrics_text.hpp"

using namespace nf;
using namespace nf::engine::metrics;

CAF_TEST(a labelled child is made once and counted by every thread) {
  registry r;
  auto& f = r.counters("t_total", "help", {"a"});
  auto& x = f.with({"x"});
  CAF_CHECK_EQUAL(&x, &f.with({"x"}));
  CAF_CHECK(&x != &f.with({"y"}));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&f] {
      for (int i = 0; i < 1000; ++i)
        f.with({"x"}).inc();
    });
  for (auto& t : threads)
    t.join();
  CAF_CHECK_EQUAL(x.value(), 4000u);
  label_cache<counter> cache{f};
  CAF_CHECK_EQUAL(&cache.with("x"), &x);
  CAF_CHECK_EQUAL(&cache.with("x"), &x);
  CAF_CHECK_EQUAL(&cache.with("z"), &f.with({"z"}));
}

CAF_TEST(two label values are kept apart however they join) {
  registry r;
  auto& f = r.counters("t_total", "help", {"a", "b"});
  label_cache<counter> cache{f};
  cache.with("ab", "c").inc();
  cache.with("a", "bc").inc(2);
  CAF_CHECK_EQUAL(f.with({"ab", "c"}).value(), 1u);
  CAF_CHECK_EQUAL(f.with({"a", "bc"}).value(), 2u);
}

CAF_TEST(the wrong number of label values is refused) {
  registry r;
  auto& f = r.counters("t_total", "help", {"a"});
  auto refused = [&](std::initializer_list<std::string_view> values) {
    try {
      f.with(values);
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  CAF_CHECK(refused({}));
  CAF_CHECK(refused({"x", "y"}));
  CAF_CHECK(!refused({"x"}));
}

CAF_TEST(histogram buckets are inclusive upper bounds and cumulative) {
  registry r;
  auto& h = r.histograms("t_seconds", "help", {}, {0.1, 1, 10}).with();
  for (double v : {0.05, 0.1, 0.5, 1.0, 20.0})
    h.observe(v);
  auto b = h.cumulative();
  CAF_REQUIRE_EQUAL(b.size(), 4u);
  CAF_CHECK_EQUAL(b[0], 2u);  // 0.05, 0.1 (le is inclusive)
  CAF_CHECK_EQUAL(b[1], 4u);  // + 0.5, 1.0
  CAF_CHECK_EQUAL(b[2], 4u);
  CAF_CHECK_EQUAL(b[3], 5u);  // +Inf
  CAF_CHECK(std::fabs(h.sum() - 21.65) < 1e-9);
}

CAF_TEST(the text format of each kind) {
  registry r;
  r.counters("t_requests_total", "Requests \\ with\nnewline", {"route", "status"})
    .with({"/a/\"b\"", "200"})
    .inc(3);
  r.gauges("t_owned", "Owned").with().set(7);
  auto& h = r.histograms("t_seconds", "Seconds", {"route"}, {0.0005, 1});
  h.with({"/x"}).observe(0.0005);
  h.with({"/x"}).observe(2.5);
  r.counters("t_empty_total", "Nothing yet", {"a"});
  auto text = net::web::render_metrics(r.collect());
  CAF_CHECK_EQUAL(text,
                  "# HELP t_requests_total Requests \\\\ with\\nnewline\n"
                  "# TYPE t_requests_total counter\n"
                  "t_requests_total{route=\"/a/\\\"b\\\"\",status=\"200\"} 3\n"
                  "# HELP t_owned Owned\n"
                  "# TYPE t_owned gauge\n"
                  "t_owned 7\n"
                  "# HELP t_seconds Seconds\n"
                  "# TYPE t_seconds histogram\n"
                  "t_seconds_bucket{route=\"/x\",le=\"0.0005\"} 1\n"
                  "t_seconds_bucket{route=\"/x\",le=\"1\"} 1\n"
                  "t_seconds_bucket{route=\"/x\",le=\"+Inf\"} 2\n"
                  "t_seconds_sum{route=\"/x\"} 2.5005\n"
                  "t_seconds_count{route=\"/x\"} 2\n"
                  "# HELP t_empty_total Nothing yet\n"
                  "# TYPE t_empty_total counter\n");
}

CAF_TEST(a histogram without labels has only le) {
  registry r;
  r.histograms("t_size", "Size", {}, {1, 2}).with().observe(1);
  auto text = net::web::render_metrics(r.collect());
  CAF_CHECK(text.find("t_size_bucket{le=\"1\"} 1\n") != std::string::npos);
  CAF_CHECK(text.find("t_size_bucket{le=\"+Inf\"} 1\n") != std::string::npos);
  CAF_CHECK(text.find("t_size_sum 1\nt_size_count 1\n") != std::string::npos);
}
