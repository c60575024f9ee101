// The worker process of a benchmark run over HTTP: the same job as worker.cpp
// (long polls for a batch, every task completed at once, each arrival noted on
// CLOCK_MONOTONIC, the arrivals written to --out on SIGTERM), through
// Conductor's task REST instead of the client library:
//   GET  /api/tasks/poll/batch/{tasktype}?count=N&timeout=MS&workerid=ID
//   POST /api/tasks/batch  (--reports batch, the default: the tasks at hand in one request)
//   POST /api/tasks        (--reports each: one Conductor TaskResult per task)
// Blocking Boost.Beast on threads: each poller a thread with its own kept-alive
// connection; the results go to a queue served by reporter threads, each with its own
// connection: one per poller sending batches, or `pollers × report_conns` writing
// `pipeline` single reports back to back before reading their answers. A report waits for
// its commit, so reports in flight side by side, not a faster client, are what keep pace.

#include "bench/engine/worker.hpp"

#include <atomic>
#include <chrono>
#include <cctype>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json.hpp>

#include "bench/engine/arrivals.hpp"
#include "bench/engine/pg.hpp"

namespace nf::bench {

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

std::atomic<bool> stop_requested{false};

extern "C" void on_http_term(int) {
  stop_requested = true;
}

/// Ends the worker before or during a run: the driver sees it exit and says so.
[[noreturn]] void fatal(const std::string& id, const std::string& what) {
  std::fprintf(stderr, "bench worker %s: %s\n", id.c_str(), what.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string r;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      r += static_cast<char>(c);
    } else {
      r += '%';
      r += hex[c >> 4];
      r += hex[c & 15];
    }
  }
  return r;
}

struct answer {
  unsigned status = 0;
  std::string body;
  int64_t at_ns = 0; ///< when it was read in full
};

/// One kept-alive HTTP/1.1 connection, blocking; opened on first use and again after the
/// server closed it.
class http_conn {
public:
  http_conn(std::string host, std::string port)
      : host_(std::move(host)), port_(std::move(port)), sock_(ioc_) {}

  const std::string& host() const { return host_; }

  /// Writes `bytes` (`n` requests back to back) and reads their `n` answers in order.
  /// False with `err` when the connection failed; a connection kept from before that the
  /// server had closed (its idle timeout) is opened again and the requests written once more.
  bool exchange(const std::string& bytes, size_t n, std::vector<answer>& out, std::string& err) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool reused = open_;
      out.clear();
      if (!open_ && !open(err))
        return false;
      boost::system::error_code ec;
      asio::write(sock_, asio::buffer(bytes), ec);
      bool keep = true;
      while (!ec && out.size() < n) {
        http::response_parser<http::string_body> p;
        p.body_limit(64u << 20);
        http::read(sock_, buf_, p, ec);
        if (ec)
          break;
        auto& res = p.get();
        keep = keep && res.keep_alive();
        out.push_back({res.result_int(), std::move(res.body()), mono_ns()});
      }
      if (!ec) {
        if (!keep)
          close();
        return true;
      }
      close();
      err = ec.message();
      if (!(reused && out.empty()))
        return false;
    }
    return false;
  }

private:
  bool open(std::string& err) {
    try {
      tcp::resolver r{ioc_};
      asio::connect(sock_, r.resolve(host_, port_));
      sock_.set_option(tcp::no_delay(true));
      buf_.clear();
      open_ = true;
      return true;
    } catch (const std::exception& e) {
      err = "cannot connect to " + host_ + ":" + port_ + ": " + e.what();
      return false;
    }
  }

  void close() {
    boost::system::error_code ignored;
    sock_.shutdown(tcp::socket::shutdown_both, ignored);
    sock_.close(ignored);
    open_ = false;
  }

  std::string host_, port_;
  asio::io_context ioc_;
  tcp::socket sock_;
  boost::beast::flat_buffer buf_;
  bool open_ = false;
};

struct report_job {
  std::string workflow_id;
  std::string task_id;
};

struct worker_state {
  const worker_options& opts;
  std::string host, port;
  std::string poll_target; // without the timeout
  std::mutex mx;
  std::condition_variable cv;
  std::deque<report_job> reports;
  std::vector<arrival> arrivals;
  std::atomic<long long> received{0};
  std::atomic<long long> acked{0};
  std::atomic<long long> report_errors{0};
  std::atomic<long long> poll_errors{0};
};

std::string poll_request(const worker_state& st, int timeout_ms) {
  return "GET " + st.poll_target + "&timeout=" + std::to_string(timeout_ms)
         + " HTTP/1.1\r\nHost: " + st.host + "\r\nAccept: application/json\r\n\r\n";
}

std::string string_field(const json::object& task, const char* key, const worker_state& st) {
  auto* v = task.if_contains(key);
  if (v == nullptr || !v->is_string())
    fatal(st.opts.id, std::string{"a polled task has no string \""} + key + "\": "
                        + json::serialize(task));
  return std::string{v->as_string()};
}

/// A poll's answer: its tasks noted and queued for their reports. 404 means the node has no
/// task routes, and any other refusal of the request as such would repeat on every poll: both
/// end the worker. Anything else failing is counted and polled again.
void take_poll_answer(worker_state& st, const answer& a) {
  if (a.status == 204)
    return;
  if (a.status == 404)
    fatal(st.opts.id, "GET " + st.poll_target + " answered 404: the node at " + st.host + ":"
                        + st.port + " has no task routes (" + a.body + ")");
  if (a.status >= 400 && a.status < 500 && a.status != 408 && a.status != 429)
    fatal(st.opts.id, "GET " + st.poll_target + " answered " + std::to_string(a.status) + ": "
                        + a.body);
  if (a.status != 200) {
    if (++st.poll_errors <= 5)
      std::fprintf(stderr, "bench worker %s: poll answered %u: %s\n", st.opts.id.c_str(),
                   a.status, a.body.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return;
  }
  if (a.body.empty())
    return;
  boost::system::error_code ec;
  auto v = json::parse(a.body, ec);
  if (ec || !v.is_array())
    fatal(st.opts.id, "GET " + st.poll_target + " answered 200 with no JSON array: " + a.body);
  const auto& tasks = v.as_array();
  std::vector<arrival> got;
  std::vector<report_job> jobs;
  for (const auto& t : tasks) {
    if (!t.is_object())
      fatal(st.opts.id, "a polled task is not an object: " + json::serialize(t));
    const auto& o = t.as_object();
    auto wf = string_field(o, "workflowInstanceId", st);
    got.push_back({wf, string_field(o, "referenceTaskName", st), a.at_ns});
    jobs.push_back({std::move(wf), string_field(o, "taskId", st)});
  }
  st.received += static_cast<long long>(jobs.size());
  {
    std::lock_guard<std::mutex> g{st.mx};
    for (auto& x : got)
      st.arrivals.push_back(std::move(x));
    for (auto& j : jobs)
      st.reports.push_back(std::move(j));
  }
  st.cv.notify_all();
}

void poller(worker_state& st) {
  http_conn c{st.host, st.port};
  const auto req = poll_request(st, 5000);
  std::vector<answer> out;
  std::string err;
  while (!stop_requested) {
    if (!c.exchange(req, 1, out, err)) {
      if (++st.poll_errors <= 5)
        std::fprintf(stderr, "bench worker %s: poll failed: %s\n", st.opts.id.c_str(),
                     err.c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    take_poll_answer(st, out.front());
  }
}

// A POST of a JSON body on a kept-alive connection, as raw bytes (pipelined as they are).
std::string post_request(const worker_state& st, const char* path, const std::string& body) {
  return std::string{"POST "} + path + " HTTP/1.1\r\nHost: " + st.host
         + "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size())
         + "\r\n\r\n" + body;
}

// Waits for reports to send and takes up to `max` of them.
void take_jobs(worker_state& st, int max, std::vector<report_job>& jobs) {
  jobs.clear();
  std::unique_lock<std::mutex> g{st.mx};
  st.cv.wait(g, [&] { return !st.reports.empty(); });
  while (!st.reports.empty() && jobs.size() < static_cast<size_t>(max)) {
    jobs.push_back(std::move(st.reports.front()));
    st.reports.pop_front();
  }
}

std::string report_request(const worker_state& st, const report_job& j) {
  json::object r;
  r["workflowInstanceId"] = j.workflow_id;
  r["taskId"] = j.task_id;
  r["status"] = "COMPLETED";
  r["outputData"] = json::object{{"ok", true}};
  r["workerId"] = st.opts.id;
  auto body = json::serialize(r);
  return post_request(st, "/api/tasks", body);
}

void report_failed(worker_state& st, long long n, const std::string& what) {
  if (st.report_errors.fetch_add(n) < 5)
    std::fprintf(stderr, "bench worker %s: report failed: %s\n", st.opts.id.c_str(),
                 what.c_str());
}

// The results at hand (at most a poll's worth) in one POST /api/tasks/batch; its answer
// holds one {taskId, status} per result, in order.
std::string batch_request(const worker_state& st, const std::vector<report_job>& jobs) {
  json::array items;
  for (const auto& j : jobs)
    items.push_back(json::object{{"workflowInstanceId", j.workflow_id},
                                 {"taskId", j.task_id},
                                 {"status", "COMPLETED"},
                                 {"outputData", json::object{{"ok", true}}},
                                 {"workerId", st.opts.id}});
  auto body = json::serialize(items);
  return post_request(st, "/api/tasks/batch", body);
}

void batch_reporter(worker_state& st) {
  http_conn c{st.host, st.port};
  std::vector<report_job> jobs;
  std::vector<answer> out;
  std::string err;
  for (;;) {
    take_jobs(st, st.opts.batch, jobs);
    if (!c.exchange(batch_request(st, jobs), 1, out, err)) {
      report_failed(st, static_cast<long long>(jobs.size()), err);
      continue;
    }
    const auto& a = out.front();
    boost::system::error_code ec;
    auto v = a.status == 200 ? json::parse(a.body, ec) : json::value{};
    if (a.status != 200 || ec || !v.is_array() || v.as_array().size() != jobs.size()) {
      report_failed(st, static_cast<long long>(jobs.size()),
                    "POST /api/tasks/batch answered " + std::to_string(a.status) + ": " + a.body);
      continue;
    }
    for (const auto& item : v.as_array()) {
      const auto* o = item.if_object();
      const auto* s = o ? o->if_contains("status") : nullptr;
      if (s != nullptr && s->is_int64() && s->as_int64() == 200)
        ++st.acked;
      else
        report_failed(st, 1, "a batched report answered " + json::serialize(item));
    }
  }
}

void reporter(worker_state& st) {
  http_conn c{st.host, st.port};
  std::vector<report_job> jobs;
  std::vector<answer> out;
  std::string err;
  for (;;) {
    take_jobs(st, st.opts.pipeline, jobs);
    std::string bytes;
    for (const auto& j : jobs)
      bytes += report_request(st, j);
    if (!c.exchange(bytes, jobs.size(), out, err)) {
      // Those whose answers came are counted below; the rest are lost.
      report_failed(st, static_cast<long long>(jobs.size() - out.size()), err);
    }
    for (const auto& a : out) {
      if (a.status == 200)
        ++st.acked;
      else
        report_failed(st, 1, "POST /api/tasks answered " + std::to_string(a.status) + ": "
                               + a.body);
    }
  }
}

} // namespace

int run_http_worker(const worker_options& opts) {
  auto colon = opts.http.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == opts.http.size())
    fatal(opts.id, "--http: expected HOST:PORT, got \"" + opts.http + "\"");
  worker_state st{opts, opts.http.substr(0, colon), opts.http.substr(colon + 1), {}, {}, {},
                  {}, {}, {}, {}, {}, {}};
  st.poll_target = "/api/tasks/poll/batch/" + url_encode(opts.queue) + "?count="
                   + std::to_string(opts.batch) + "&workerid=" + url_encode(opts.id);

  // Before "ready": a short poll, so that a node without the task routes (404), one that
  // refuses the request, or no node at all ends the worker before the run starts.
  {
    http_conn probe{st.host, st.port};
    std::vector<answer> out;
    std::string err;
    if (!probe.exchange(poll_request(st, 100), 1, out, err))
      fatal(opts.id, "cannot poll " + opts.http + ": " + err);
    take_poll_answer(st, out.front());
  }

  // The signals go to this thread only: the others block in socket calls.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigaddset(&term, SIGINT);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  if (opts.batch_reports)
    for (int i = 0; i < opts.pollers; ++i)
      std::thread{[&st] { batch_reporter(st); }}.detach();
  else
    for (int i = 0; i < opts.pollers * opts.report_conns; ++i)
      std::thread{[&st] { reporter(st); }}.detach();
  for (int i = 0; i < opts.pollers; ++i)
    std::thread{[&st] { poller(st); }}.detach();
  std::signal(SIGTERM, on_http_term);
  std::signal(SIGINT, on_http_term);
  pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
  std::printf("ready\n");
  std::fflush(stdout);
  while (!stop_requested)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Every task taken is reported before the arrivals are written.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (st.acked + st.report_errors < st.received && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    std::lock_guard<std::mutex> g{st.mx};
    if (!write_arrivals(opts.out, st.arrivals))
      fatal(opts.id, "cannot write " + opts.out);
  }
  std::printf("{\"worker\":\"%s\",\"transport\":\"http\",\"received\":%lld,\"completed\":%lld,"
              "\"report_errors\":%lld,\"poll_errors\":%lld}\n",
              opts.id.c_str(), st.received.load(), st.acked.load(), st.report_errors.load(),
              st.poll_errors.load());
  std::fflush(stdout);
  // Polls may still be parked at the node and the threads in their socket calls: leave
  // without waiting for them.
  std::_Exit(st.report_errors > 0 || st.acked < st.received ? 1 : 0);
}

} // namespace nf::bench
