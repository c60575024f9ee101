// The worker process of a benchmark run: long-polls one queue with several
// polls in flight (each asking for a batch), completes every task at once with
// an asynchronous report, and notes when each task arrived. On SIGTERM it
// stops polling, waits for its reports, writes the arrivals to --out
// (`workflowId ref recvNs` lines, CLOCK_MONOTONIC) and prints a JSON summary.

#include "bench/engine/worker.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/engine/arrivals.hpp"
#include "bench/engine/pg.hpp"
#include "net/client/client.hpp"

namespace nf::bench {

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_term(int) {
  stop_requested = true;
}

struct worker_state {
  client& c;
  const worker_options& opts;
  std::mutex mx;
  std::vector<arrival> arrivals;
  std::deque<int> retry; // poll slots whose poll failed, re-issued by the main loop
  std::atomic<long long> received{0};
  std::atomic<long long> acked{0};
  std::atomic<long long> report_errors{0};
  std::atomic<long long> poll_errors{0};
  std::atomic<int> polls_in_flight{0};
};

void issue_poll(worker_state& st, int slot);

void report_failed(worker_state& st, const caf::error& err) {
  std::fprintf(stderr, "bench worker %s: report failed: %s\n", st.opts.id.c_str(),
               describe(err).c_str());
}

void on_report(worker_state& st, const caf::expected<std::string>& a) {
  if (a)
    ++st.acked;
  else if (++st.report_errors <= 5)
    report_failed(st, a.error());
}

void on_tasks(worker_state& st, int slot, caf::expected<std::vector<msg::leased_task>> r) {
  auto now = mono_ns();
  --st.polls_in_flight;
  if (!r) {
    if (++st.poll_errors <= 5)
      std::fprintf(stderr, "bench worker %s: poll failed: %s\n", st.opts.id.c_str(),
                   describe(r.error()).c_str());
    std::lock_guard<std::mutex> g{st.mx};
    st.retry.push_back(slot);
    return;
  }
  st.received += static_cast<long long>(r->size());
  {
    std::lock_guard<std::mutex> g{st.mx};
    for (const auto& t : *r)
      st.arrivals.push_back({t.workflow_id, t.ref, now});
  }
  std::vector<msg::task_result> results;
  results.reserve(r->size());
  for (const auto& t : *r) {
    msg::task_result res;
    res.task_id = t.task_id;
    res.workflow_id = t.workflow_id;
    res.lease_token = t.lease_token;
    res.status = "COMPLETED";
    res.output_json = R"({"ok":true})";
    results.push_back(std::move(res));
  }
  if (st.opts.batch_reports && !results.empty()) {
    auto n = static_cast<long long>(results.size());
    st.c.report_batch_async(results, [&st, n](caf::expected<client::report_answers> a) {
      if (!a) {
        // Every result of the batch went unanswered.
        if (st.report_errors.fetch_add(n) < 5)
          report_failed(st, a.error());
        return;
      }
      for (const auto& one : *a)
        on_report(st, one);
    });
  } else {
    for (const auto& res : results)
      st.c.report_async(res, [&st](caf::expected<std::string> a) { on_report(st, a); });
  }
  if (!stop_requested)
    issue_poll(st, slot);
}

void issue_poll(worker_state& st, int slot) {
  msg::poll_request req;
  req.queue = st.opts.queue;
  req.worker_id = st.opts.id;
  req.max_tasks = st.opts.batch;
  req.timeout_ms = 5000;
  ++st.polls_in_flight;
  st.c.poll_async(req, [&st, slot](caf::expected<std::vector<msg::leased_task>> r) {
    on_tasks(st, slot, std::move(r));
  });
}

} // namespace

int run_worker(const worker_options& opts) {
  std::signal(SIGTERM, on_term);
  std::signal(SIGINT, on_term);
  auto node = parse_node_address(opts.node);
  if (!node)
    bench_die("worker --node: " + describe(node.error()));
  key_from_environment(*node);
  client c{*node};
  if (auto ok = c.connect(); !ok)
    bench_die("worker cannot reach " + opts.node + ": " + describe(ok.error()));
  worker_state st{c, opts, {}, {}, {}, {}, {}, {}, {}, {}};
  for (int i = 0; i < opts.pollers; ++i)
    issue_poll(st, i);
  std::printf("ready\n");
  std::fflush(stdout);
  while (!stop_requested) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::deque<int> again;
    {
      std::lock_guard<std::mutex> g{st.mx};
      again.swap(st.retry);
    }
    if (!again.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // A poll to a node that is gone blocks while the client reconnects: check
    // for the stop between them.
    for (int slot : again)
      if (!stop_requested)
        issue_poll(st, slot);
  }
  // Every task taken is reported before the arrivals are written.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (st.acked + st.report_errors < st.received && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    std::lock_guard<std::mutex> g{st.mx};
    if (!write_arrivals(opts.out, st.arrivals))
      bench_die("worker cannot write " + opts.out);
  }
  std::printf("{\"worker\":\"%s\",\"received\":%lld,\"completed\":%lld,\"report_errors\":%lld,"
              "\"poll_errors\":%lld}\n",
              opts.id.c_str(), st.received.load(), st.acked.load(), st.report_errors.load(),
              st.poll_errors.load());
  std::fflush(stdout);
  // Long polls may still be parked at the node: leave without waiting for them.
  std::_Exit(st.report_errors > 0 ? 1 : 0);
}

} // namespace nf::bench
