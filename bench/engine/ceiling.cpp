#include "bench/engine/ceiling.hpp"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "bench/engine/bench_sql.hpp"
#include "bench/engine/pg.hpp"

namespace nf::bench {

namespace {

using clock_type = std::chrono::steady_clock;

// One connection's loop: enqueue `batch`, lease up to `batch`, complete what it leased.
void lifecycle_loop(const std::string& dsn, int batch, std::atomic<bool>& stop,
                    std::atomic<long long>& done) {
  sql_conn c{dsn};
  c.exec("SET synchronous_commit = on");
  c.prepare("enqueue", sql::ceiling_enqueue);
  c.prepare("lease", sql::ceiling_lease);
  c.prepare("complete", sql::ceiling_complete);
  auto n = std::to_string(batch);
  while (!stop) {
    c.run("enqueue", {n});
    auto leased = c.run("lease", {n});
    if (leased.rows() == 0)
      continue;
    std::string ids = "{", tokens = "{";
    for (int i = 0; i < leased.rows(); ++i) {
      ids += (i ? "," : "") + leased.str(i, 0);
      tokens += (i ? "," : "") + leased.str(i, 1);
    }
    ids += "}";
    tokens += "}";
    auto r = c.run("complete", {ids, tokens});
    (void) r;
    done += leased.rows();
  }
}

} // namespace

ceiling_result run_ceiling(const std::string& dsn, int batch, int connections, double seconds) {
  {
    sql_conn setup{dsn};
    setup.exec("SET client_min_messages = warning");
    setup.exec(sql::ceiling_setup);
  }
  std::atomic<bool> stop{false};
  std::atomic<long long> done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < connections; ++i)
    threads.emplace_back([&] { lifecycle_loop(dsn, batch, stop, done); });
  // A short warm-up (connections, plans, first pages), then the measured window.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto n0 = done.load();
  auto t0 = clock_type::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  auto n1 = done.load();
  auto secs = std::chrono::duration<double>(clock_type::now() - t0).count();
  stop = true;
  for (auto& t : threads)
    t.join();
  {
    sql_conn drop{dsn};
    drop.exec("SET client_min_messages = warning");
    drop.exec(sql::ceiling_drop);
  }
  ceiling_result r;
  r.batch = batch;
  r.connections = connections;
  r.seconds = secs;
  r.lifecycles = n1 - n0;
  r.lifecycles_per_s = static_cast<double>(n1 - n0) / secs;
  return r;
}

} // namespace nf::bench
