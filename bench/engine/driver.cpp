// The benchmark driver: registers a workload's definitions, runs its workers
// as separate processes, starts its workflows through the client library
// (one client call per workflow, many calls in flight, or at a fixed rate),
// waits until every workflow completed, and measures.
//
// Latencies are measured on one clock (CLOCK_MONOTONIC, shared by the driver
// and its worker processes) at the moments a client can observe:
// - a commit becomes visible when its WorkflowEvents rows' NOTIFY reaches the
//   driver's LISTEN connection (the trigger fires per event row, delivered at
//   commit; "workflowId:seq");
// - e2e = start call made → the commit holding WORKFLOW_COMPLETED is seen;
// - dispatch = the commit holding TASK_SCHEDULED is seen → a worker's long poll
//   answered with the task;
// - for one-task workflows, e2e in the parts between: start call → the start's
//   commit (TASK_SCHEDULED) seen, dispatch, and a worker has the task → the
//   completion's commit (WORKFLOW_COMPLETED) seen.
// The history (which seq is which event) is read after the run.

#include "bench/engine/arrivals.hpp"
#include "bench/engine/driver.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include <boost/json.hpp>

#include "bench/engine/bench_sql.hpp"
#include "bench/engine/ceiling.hpp"
#include "bench/engine/pg.hpp"
#include "bench/engine/procstat.hpp"
#include "flow/ascii.hpp"
#include "net/client/client.hpp"

extern char** environ;

namespace nf::bench {

namespace json = boost::json;

namespace {

int64_t real_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

void say(const std::string& s) {
  std::fprintf(stderr, "bench: %s\n", s.c_str());
}

std::string fixed2(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", x);
  return b;
}

void sleep_s(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

/// A set-up call (a registration, the warm-up start) made again while it fails with
/// `unavailable`, up to five seconds: a connection the client lost while the machine stalled
/// for longer than the middleman's connection timeout (W4's history generation syncs
/// checkpoints for seconds) fails the calls made just after it until the client has
/// connected again. The workload's own calls are not retried.
template <class F>
auto with_set_up_retries(F call) -> decltype(call()) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    auto r = call();
    if (r || !nf::is_unavailable(r.error()) || std::chrono::steady_clock::now() > deadline)
      return r;
    say("set-up call failed, again in 0.2 s: " + nf::describe(r.error()));
    sleep_s(0.2);
  }
}

struct percentiles {
  size_t n = 0;
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
};

percentiles percentiles_of(std::vector<double> xs) {
  percentiles p;
  p.n = xs.size();
  if (xs.empty())
    return p;
  std::sort(xs.begin(), xs.end());
  auto at = [&](double q) {
    auto i = static_cast<size_t>(std::ceil(q * static_cast<double>(xs.size()))) ;
    return xs[std::min(xs.size() - 1, i == 0 ? 0 : i - 1)];
  };
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  p.max = xs.back();
  return p;
}

// ------------------------------------------------------------------ workloads

enum class shape { one_task, chain, fan_out };

struct workload_spec {
  std::string name; // W1, W1lat, W2, W3, W4
  shape kind = shape::one_task;
  int workflows = 0;
  int tasks_per_workflow = 1;
  double rate = 0; // > 0: started at this rate (W1lat)
  int starts_in_flight = 64; // otherwise: at most this many start calls in flight
  long long history = 0; // W4: finished workflows in the history tables
  std::string transport = "caf"; // how the workers poll and report (run_options::transports)
  /// W1cache: the task's definition caches its output by the workflow input's `k`. `miss`:
  /// every workflow a key of its own, so every task goes to a worker; `hit`: every workflow
  /// the key the warm-up cached, so no task does.
  enum class cache_mode { none, miss, hit } cache = cache_mode::none;
  /// > 0 (W2, W3 with --duration): starts go on for this many seconds, as many as the engine
  /// takes (starts_in_flight at a time), instead of `workflows`; tasks/s is then measured
  /// over the steady part, from the ramp's end to the last start.
  double duration_s = 0;
};

std::string definitions_json(const workload_spec& w, const std::string& wf, const std::string& td) {
  json::array tasks;
  auto simple = [&](const std::string& ref) {
    return json::object{{"name", td}, {"taskReferenceName", ref}};
  };
  if (w.kind == shape::fan_out) {
    json::array branches, join_on;
    for (int i = 0; i < w.tasks_per_workflow; ++i) {
      auto ref = "b" + std::to_string(i);
      branches.push_back(json::array{simple(ref)});
      join_on.push_back(json::value(ref));
    }
    tasks.push_back(json::object{{"name", "fan_out"},
                                 {"taskReferenceName", "fan_out"},
                                 {"type", "FORK_JOIN"},
                                 {"forkTasks", std::move(branches)}});
    tasks.push_back(json::object{{"name", "fan_in"},
                                 {"taskReferenceName", "fan_in"},
                                 {"type", "JOIN"},
                                 {"joinOn", std::move(join_on)}});
  } else {
    for (int i = 0; i < w.tasks_per_workflow; ++i)
      tasks.push_back(simple("t" + std::to_string(i)));
  }
  json::array defs;
  json::object task_def{{"name", td},
                        {"description", "nodeflow-bench worker task"},
                        {"retryCount", 0},
                        {"timeoutSeconds", 600},
                        {"responseTimeoutSeconds", 600}};
  if (w.cache != workload_spec::cache_mode::none) {
    task_def["cacheTtlSeconds"] = 3600;
    task_def["cacheKey"] = "${workflow.input.k}";
  }
  defs.push_back(std::move(task_def));
  defs.push_back(json::object{{"name", wf},
                              {"version", 1},
                              {"description", "nodeflow-bench " + w.name},
                              {"timeoutSeconds", 3600},
                              {"tasks", std::move(tasks)}});
  return json::serialize(defs);
}

// ------------------------------------------------------------------ metrics

struct db_snapshot {
  long long xacts = 0;
  long long wal_bytes = 0;
  std::map<std::string, long long> rows; // table → inserted + updated + deleted
  int64_t at_ns = 0;
};

db_snapshot snapshot(sql_conn& c) {
  db_snapshot s;
  s.at_ns = mono_ns();
  s.xacts = c.exec(sql::xacts).i64(0, 0);
  s.wal_bytes = c.exec(sql::wal_bytes).i64(0, 0);
  auto r = c.exec(sql::rows_written);
  for (int i = 0; i < r.rows(); ++i)
    s.rows[r.str(i, 0)] = r.i64(i, 1) + r.i64(i, 2) + r.i64(i, 3);
  return s;
}

// ------------------------------------------------------------------ listener

// Keeps the arrival time of every WorkflowEvents notification; counts the
// workflows whose completion event (seq == final_seq) was seen.
class listener {
public:
  listener(const std::string& dsn, long long final_seq)
      : conn_(dsn), final_seq_(final_seq) {
    conn_.exec("LISTEN node_flow_workflow_events");
    thread_ = std::thread([this] { loop(); });
  }
  ~listener() { stop(); }

  void stop() {
    stop_ = true;
    if (thread_.joinable())
      thread_.join();
  }
  long long completed() const { return completed_; }
  int64_t last_completion_ns() const { return last_completion_ns_; }
  /// After stop(): "workflowId:seq" → arrival.
  std::unordered_map<std::string, int64_t>& arrivals() { return arrivals_; }

private:
  void loop() {
    auto* c = conn_.native();
    pollfd p{PQsocket(c), POLLIN, 0};
    while (!stop_) {
      ::poll(&p, 1, 20);
      auto now = mono_ns();
      if (!PQconsumeInput(c))
        bench_die(std::string{"listener lost its connection: "} + PQerrorMessage(c));
      while (PGnotify* n = PQnotifies(c)) {
        std::string payload = n->extra;
        PQfreemem(n);
        auto colon = payload.rfind(':');
        if (colon != std::string::npos && std::atoll(payload.c_str() + colon + 1) == final_seq_) {
          ++completed_;
          last_completion_ns_ = now;
        }
        arrivals_.emplace(std::move(payload), now);
      }
    }
  }

  sql_conn conn_;
  long long final_seq_;
  std::atomic<bool> stop_{false};
  std::atomic<long long> completed_{0};
  std::atomic<int64_t> last_completion_ns_{0};
  std::unordered_map<std::string, int64_t> arrivals_;
  std::thread thread_;
};

// ------------------------------------------------------------------ worker processes

struct worker_proc {
  pid_t pid = 0;
  std::string out;     // arrivals file
  std::string summary; // its stdout
  std::optional<int> exit_status; // set once it was reaped
};

// Worker process i polls node i mod n: with several nodes, polls and reports
// arrive everywhere, as from a fleet of workers behind a load balancer.
std::string node_for(const run_options& o, int i) {
  auto n = static_cast<int>(o.more_nodes.size()) + 1;
  return i % n == 0 ? o.node : o.more_nodes[static_cast<size_t>(i % n - 1)];
}

// The same node's HTTP door (run_options::http is in --node's order).
std::string http_for(const run_options& o, int i) {
  auto n = o.more_nodes.size() + 1;
  auto at = static_cast<size_t>(i) % n;
  if (at >= o.http.size())
    bench_die("--transport http: no --http address for node " + node_for(o, i));
  return o.http[at];
}

worker_proc spawn_worker(const run_options& o, const std::string& transport,
                         const std::string& queue, const std::string& tag, int i) {
  worker_proc w;
  w.out = o.work_dir + "/" + tag + "-worker" + std::to_string(i) + ".arrivals";
  w.summary = o.work_dir + "/" + tag + "-worker" + std::to_string(i) + ".out";
  std::vector<std::string> args{o.exe,       "worker",
                                "--queue",   queue,
                                "--pollers", std::to_string(o.pollers),
                                "--batch",   std::to_string(o.batch),
                                "--id",      tag + "-w" + std::to_string(i),
                                "--out",     w.out};
  if (transport == "http")
    args.insert(args.end(), {"--transport", "http", "--http", http_for(o, i), "--report-conns",
                             std::to_string(o.report_conns), "--pipeline",
                             std::to_string(o.pipeline), "--reports",
                             o.batch_reports ? "batch" : "each"});
  else
    args.insert(args.end(),
                {"--node", node_for(o, i), "--reports", o.batch_reports ? "batch" : "each"});
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, w.summary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (posix_spawn(&w.pid, o.exe.c_str(), &fa, nullptr, argv.data(), environ) != 0)
    bench_die("cannot start a worker process (" + o.exe + ")");
  posix_spawn_file_actions_destroy(&fa);
  adopt_child(w.pid);
  return w;
}

void wait_ready(const worker_proc& w) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(w.summary);
    std::string line;
    if (std::getline(in, line) && line == "ready")
      return;
    int status = 0;
    if (waitpid(w.pid, &status, WNOHANG) == w.pid) {
      forget_child(w.pid);
      bench_die("a worker process exited before it was ready (its error above; see "
                + w.summary + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  bench_die("a worker process did not get ready within 30 s");
}

// Stops a worker and reads its arrivals ("workflowId/ref" → first arrival).
long long stop_worker(const worker_proc& w, std::unordered_map<std::string, int64_t>& arrivals,
                      std::string& problem) {
  int status = w.exit_status.value_or(0);
  if (!w.exit_status) {
    kill(w.pid, SIGTERM);
    waitpid(w.pid, &status, 0);
    forget_child(w.pid);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    problem = "worker " + std::to_string(w.pid) + " failed (see " + w.summary + ")";
  std::ifstream in(w.out);
  std::string wf, ref;
  long long ns = 0, n = 0;
  while (in >> wf >> ref >> ns) {
    arrivals.emplace(wf + "/" + ref, ns);
    ++n;
  }
  return n;
}

// ------------------------------------------------------------------ one workload

struct started {
  int64_t call_ns = 0;
  int64_t call_us_real = 0;
  std::string id;
};

/// When a workflow's commits were seen and its task reached a worker (CLOCK_MONOTONIC ns;
/// 0 = not seen). For a workflow of several tasks, those of the last task read.
struct commit_times {
  int64_t scheduled = 0, received = 0, completed = 0;
};

struct workload_result {
  workload_spec spec;
  bool completed = false;
  std::string problem;
  long long tasks = 0;
  double seconds = 0;
  double workflows_per_s = 0;
  double tasks_per_s = 0;
  double start_calls_per_s = 0;
  double steady_window_s = 0;   ///< duration runs: the window tasks/s was measured over
  double whole_tasks_per_s = 0; ///< duration runs: first start → last completion, as without
  percentiles e2e, dispatch;
  /// One-task workflows only: e2e in its three commits' parts (dispatch between them).
  percentiles to_scheduled; ///< start call made → the start's commit (TASK_SCHEDULED) seen
  percentiles to_completed; ///< a worker has the task → WORKFLOW_COMPLETED's commit seen
  double xacts_per_task = 0;
  double rows_per_task = 0;
  double wal_kb_per_task = 0;
  double idle_xacts_per_s = 0;
  std::map<std::string, double> rows_by_table; // per task
  double nodeflow_cpu_s = -1, postgres_cpu_s = -1, workers_cpu_s = 0;
  double nodeflow_peak_rss_mb = -1;
  double load_avg = 0;
};

class runner {
public:
  explicit runner(const run_options& o) : o_(o), db_(o.dsn) {
    // One client per node: start i goes to node i mod n, as from clients behind a load
    // balancer (a node makes the workflow's id in one of its own partitions).
    std::vector<std::string> addresses{o.node};
    addresses.insert(addresses.end(), o.more_nodes.begin(), o.more_nodes.end());
    for (const auto& address : addresses) {
      auto node = parse_node_address(address);
      if (!node)
        bench_die("--node: " + describe(node.error()));
      client_options copts = *node;
      key_from_environment(copts);
      copts.timeout = std::chrono::milliseconds(60000);
      starters_.push_back(std::make_unique<client>(copts));
      if (auto ok = starters_.back()->connect(); !ok)
        bench_die("cannot reach the node at " + address + ": " + describe(ok.error()));
    }
    client_ = starters_.front().get();
    pg_pid_ = o.pg_pid != 0 ? o.pg_pid : parent_of(db_.backend_pid());
    if (!o.statements_dir.empty()) {
      std::string err;
      if (!db_.try_exec(sql::statements_enable, {}, err))
        say("pg_stat_statements unavailable: " + err);
      else
        statements_ = true;
    }
    run_tag_ = std::to_string(real_us() / 1000000 % 100000000);
  }

  workload_result run(const workload_spec& w);
  sql_conn& db() { return db_; }

private:
  void write_statements(const std::string& name, long long tasks);
  void write_latencies(const std::string& name, const std::deque<started>& starts,
                       const std::unordered_map<std::string, commit_times>& times);

  const run_options& o_;
  sql_conn db_;
  std::vector<std::unique_ptr<client>> starters_; ///< one per node, in --node's order
  client* client_ = nullptr;                       ///< the first node's: set-up and warm-up
  pid_t pg_pid_ = 0;
  bool statements_ = false;
  std::string run_tag_;
  int seq_ = 0;
};

void runner::write_statements(const std::string& name, long long tasks) {
  if (!statements_)
    return;
  auto path = o_.statements_dir + "/" + name + ".txt";
  std::ofstream out(path);
  auto r = db_.exec(sql::statements_top, {"20"});
  out << "calls\tcalls/task\texec_ms\texec_ms/task\tplan_ms/task\trows\tblocks/call\tquery\n";
  for (int i = 0; i < r.rows(); ++i) {
    double calls = r.f64(i, 0), ms = r.f64(i, 1), plan = r.f64(i, 3);
    char line[160];
    std::snprintf(line, sizeof line, "%.0f\t%.3f\t%.1f\t%.4f\t%.4f\t%s\t%s\t", calls,
                  calls / tasks, ms, ms / tasks, plan / tasks, r.str(i, 2).c_str(),
                  r.str(i, 4).c_str());
    out << line << r.str(i, 5) << "\n";
  }
  say("top statements of " + name + ": " + path);
}

// One line per workflow, in start order, to find when the slow ones started (against
// autovacuum's or a checkpoint's log lines, say): the start call's wall-clock time, then
// milliseconds from it; a part left empty was not seen.
void runner::write_latencies(const std::string& name, const std::deque<started>& starts,
                             const std::unordered_map<std::string, commit_times>& times) {
  auto path = o_.latencies_dir + "/" + name + ".tsv";
  std::ofstream out(path);
  out << "workflow\tstart_unix_ms\te2e_ms\tto_scheduled_ms\tdispatch_ms\tto_completed_ms\n";
  auto ms = [](int64_t from, int64_t to) {
    return from == 0 || to == 0 ? std::string{} : fixed2(static_cast<double>(to - from) / 1e6);
  };
  for (const auto& s : starts) {
    if (s.id.empty())
      continue;
    commit_times t;
    if (auto it = times.find(s.id); it != times.end())
      t = it->second;
    out << s.id << '\t' << fixed2(static_cast<double>(s.call_us_real) / 1000) << '\t'
        << ms(s.call_ns, t.completed) << '\t' << ms(s.call_ns, t.scheduled) << '\t'
        << ms(t.scheduled, t.received) << '\t' << ms(t.received, t.completed) << '\n';
  }
  if (!out)
    bench_die("cannot write " + path);
  say("latencies of " + name + ": " + path);
}

workload_result runner::run(const workload_spec& spec) {
  workload_result res;
  auto w = spec; // a duration run learns its number of workflows as it goes
  res.spec = w;
  auto tag = flow::ascii_lower("bench_" + w.name + "_" + run_tag_ + "_" + std::to_string(++seq_));
  auto wf_name = tag;
  auto td_name = tag + "_task";
  res.tasks = static_cast<long long>(w.workflows) * w.tasks_per_workflow;

  if (auto r = with_set_up_retries(
        [&] { return client_->register_definitions(definitions_json(w, wf_name, td_name)); });
      !r)
    bench_die("registering " + wf_name + ": " + describe(r.error()));

  std::vector<worker_proc> workers;
  for (int i = 0; i < o_.worker_procs; ++i)
    workers.push_back(spawn_worker(o_, w.transport, td_name, tag, i));
  for (auto& wp : workers)
    wait_ready(wp);

  msg::start_request req;
  req.workflow_name = wf_name;
  req.input_json = w.cache == workload_spec::cache_mode::none ? R"({"bench":true})"
                                                              : R"({"k":0})";
  // W1cache's misses each get a key of their own, never the warm-up's.
  auto input_of = [&](int i) {
    return w.cache == workload_spec::cache_mode::miss ? R"({"k":)" + std::to_string(i + 1) + "}"
                                                      : req.input_json;
  };

  // Warm-up: one workflow through the whole path; its history tells how many
  // events a completed workflow of this shape has. W1cache's hits take a second: the first
  // goes to a worker and fills the cache, the second completes from it, as the run's will.
  long long final_seq = 0;
  const int warm_ups = w.cache == workload_spec::cache_mode::hit ? 2 : 1;
  for (int k = 0; k < warm_ups; ++k) {
    // Keyed, so that a start made again after a lost answer names the same workflow.
    auto warm_up = req;
    warm_up.idempotency_key = tag + "_warm_up" + (k == 0 ? "" : std::to_string(k));
    auto s = with_set_up_retries([&] { return client_->start(warm_up); });
    if (!s)
      bench_die("warm-up start of " + wf_name + ": " + describe(s.error()));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (true) {
      auto st = db_.exec(sql::run_status, {wf_name});
      if (st.i64(0, 0) == k + 1)
        break;
      if (std::chrono::steady_clock::now() > deadline)
        bench_die("the warm-up workflow " + s->workflow_id + " of " + w.name
                  + " did not complete within 30 s");
      sleep_s(0.01);
    }
    final_seq = db_.exec(R"(SELECT max("seq") FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                         {s->workflow_id})
                  .i64(0, 0);
  }

  listener lis{o_.dsn, final_seq};
  // An idle window measures the engine's background transactions (its actors'
  // polls), subtracted from the workload's count below.
  auto idle0 = snapshot(db_);
  sleep_s(o_.settle_seconds);
  auto s0 = snapshot(db_);
  res.idle_xacts_per_s = static_cast<double>(s0.xacts - idle0.xacts)
                         / (static_cast<double>(s0.at_ns - idle0.at_ns) / 1e9);
  if (statements_)
    db_.exec(sql::statements_reset);
  auto pg_cpu0 = pg_pid_ ? tree_cpu(pg_pid_) : std::map<pid_t, double>{};
  double serve_cpu0 = 0;
  bool serve_cpu_known = !o_.serve_pids.empty();
  bool rss_reset = !o_.serve_pids.empty();
  double rss_sampled = 0;
  for (auto pid : o_.serve_pids) {
    auto c = cpu_seconds(pid);
    serve_cpu_known = serve_cpu_known && c.has_value();
    serve_cpu0 += c.value_or(0);
    rss_reset = reset_peak_rss(pid) && rss_reset;
  }
  auto sample_rss = [&] {
    for (auto pid : o_.serve_pids)
      rss_sampled = std::max(rss_sampled, rss_mb(pid).value_or(0));
  };
  std::vector<double> worker_cpu0;
  for (auto& wp : workers)
    worker_cpu0.push_back(cpu_seconds(wp.pid).value_or(0));
  auto load0 = load_average();

  // Starts: one client call per workflow; up to starts_in_flight at once,
  // or issued at a fixed rate.
  // A deque: a duration run adds to it while answers are written into it (under mx).
  std::deque<started> starts(static_cast<size_t>(w.duration_s > 0 ? 0 : w.workflows));
  std::mutex mx;
  std::condition_variable cv;
  int in_flight = 0;
  std::atomic<long long> start_errors{0};
  std::string first_start_error;
  int limit = w.rate > 0 ? 100000 : w.starts_in_flight;
  auto t0 = mono_ns();
  const int64_t stop_ns = t0 + static_cast<int64_t>(w.duration_s * 1e9);
  for (int i = 0; w.duration_s > 0 ? mono_ns() < stop_ns : i < w.workflows; ++i) {
    if (w.rate > 0) {
      auto due = t0 + static_cast<int64_t>(1e9 * i / w.rate);
      auto now = mono_ns();
      if (due > now)
        std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
    }
    {
      std::unique_lock<std::mutex> g{mx};
      cv.wait(g, [&] { return in_flight < limit; });
      ++in_flight;
      if (w.duration_s > 0)
        starts.emplace_back();
      auto& s = starts[static_cast<size_t>(i)];
      s.call_us_real = real_us();
      s.call_ns = mono_ns();
    }
    auto one = req;
    one.input_json = input_of(i);
    auto& starter = *starters_[static_cast<size_t>(i) % starters_.size()];
    starter.start_async(one, [&, i](caf::expected<msg::start_reply> r) {
      std::lock_guard<std::mutex> g{mx};
      if (r)
        starts[static_cast<size_t>(i)].id = r->workflow_id;
      else if (start_errors++ == 0)
        first_start_error = describe(r.error());
      --in_flight;
      cv.notify_all();
    });
    if ((i & 255) == 0)
      sample_rss();
  }
  {
    std::unique_lock<std::mutex> g{mx};
    cv.wait(g, [&] { return in_flight == 0; });
  }
  auto starts_done = mono_ns();
  if (w.duration_s > 0) {
    w.workflows = static_cast<int>(starts.size());
    res.spec.workflows = w.workflows;
    res.tasks = static_cast<long long>(w.workflows) * w.tasks_per_workflow;
  }
  res.start_calls_per_s = w.workflows / (static_cast<double>(starts_done - t0) / 1e9);
  if (start_errors > 0)
    res.problem = std::to_string(start_errors.load()) + " starts failed: " + first_start_error;

  // Until every workflow of the run completed (the listener sees each
  // completion commit; the table is checked too, in case a seq differs).
  auto deadline = std::chrono::steady_clock::now()
                  + std::chrono::duration<double>(o_.timeout_seconds);
  auto expected_done = static_cast<long long>(w.workflows) - start_errors;
  long long db_completed = 0, db_running = 0;
  int64_t last_end_us = 0;
  auto next_check = std::chrono::steady_clock::now();
  bool worker_gone = false;
  while (true) {
    sample_rss();
    bool check = lis.completed() >= expected_done || std::chrono::steady_clock::now() >= next_check;
    if (check) {
      // A worker that ended during the run (an HTTP worker ends on a refused poll) ends the
      // wait: what it left will not complete.
      for (auto& wp : workers) {
        int status = 0;
        if (!wp.exit_status && waitpid(wp.pid, &status, WNOHANG) == wp.pid) {
          wp.exit_status = status;
          forget_child(wp.pid);
          worker_gone = true;
          if (res.problem.empty())
            res.problem = "worker " + std::to_string(wp.pid) + " exited during the run (see "
                          + wp.summary + " and its error above)";
        }
      }
      if (worker_gone)
        break;
      auto st = db_.exec(sql::run_status, {wf_name});
      db_completed = st.i64(0, 0) - warm_ups;
      db_running = st.i64(0, 1);
      last_end_us = st.i64(0, 3);
      // Done when nothing of this run is left running (a failed workflow
      // ends the wait too, and fails the run below).
      if (db_running == 0 && st.i64(0, 2) >= expected_done + warm_ups)
        break;
      next_check = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    }
    if (std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto done_ns = lis.last_completion_ns() ? lis.last_completion_ns() : mono_ns();
  res.completed = db_running == 0 && db_completed == w.workflows;
  if (!res.completed && res.problem.empty())
    res.problem = "did not complete: " + std::to_string(db_completed) + " of "
                  + std::to_string(w.workflows) + " completed, " + std::to_string(db_running)
                  + " running after " + std::to_string(o_.timeout_seconds) + " s";
  // Elapsed: the first start call → the last completion (the table's endedAt,
  // the server's clock; the same clock as this machine's).
  int64_t first_call_us = starts.empty() ? 0 : starts.front().call_us_real;
  double by_table = static_cast<double>(last_end_us - first_call_us) / 1e6;
  double by_listener = static_cast<double>(done_ns - t0) / 1e9;
  res.seconds = std::max(by_table, by_listener);
  res.workflows_per_s = w.workflows / res.seconds;
  res.tasks_per_s = static_cast<double>(res.tasks) / res.seconds;
  if (w.duration_s > 0 && !starts.empty()) {
    // The steady part: from when the first workflows have had time to come through (a third
    // of the run, at most 10 s: W3's e2e is seconds) to the last start, when the drain begins.
    res.whole_tasks_per_s = res.tasks_per_s;
    double ramp_s = std::min(10.0, w.duration_s / 3);
    int64_t from_us = first_call_us + static_cast<int64_t>(ramp_s * 1e6);
    int64_t to_us = starts.back().call_us_real;
    res.steady_window_s = static_cast<double>(to_us - from_us) / 1e6;
    if (res.steady_window_s > 0) {
      auto ended = db_.exec(sql::ended_between,
                            {wf_name, std::to_string(from_us), std::to_string(to_us)})
                     .i64(0, 0);
      res.tasks_per_s = static_cast<double>(ended) * w.tasks_per_workflow / res.steady_window_s;
      res.workflows_per_s = static_cast<double>(ended) / res.steady_window_s;
    }
  }

  for (size_t i = 0; i < workers.size(); ++i)
    res.workers_cpu_s += cpu_seconds(workers[i].pid).value_or(0) - worker_cpu0[i];
  if (!o_.serve_pids.empty()) {
    // CPU summed over the nodes; RSS the largest node's peak.
    double cpu = 0, hwm = 0;
    bool hwm_known = rss_reset;
    for (auto pid : o_.serve_pids) {
      auto c = cpu_seconds(pid);
      serve_cpu_known = serve_cpu_known && c.has_value();
      cpu += c.value_or(0);
      auto h = peak_rss_mb(pid);
      hwm_known = hwm_known && h.has_value();
      hwm = std::max(hwm, h.value_or(0));
    }
    if (serve_cpu_known)
      res.nodeflow_cpu_s = cpu - serve_cpu0;
    res.nodeflow_peak_rss_mb = hwm_known ? hwm : rss_sampled;
  }
  if (pg_pid_)
    res.postgres_cpu_s = tree_cpu_delta(pg_cpu0, tree_cpu(pg_pid_));
  res.load_avg = std::max(load0, load_average());

  // Statistics are flushed by each backend within about a second of its
  // transactions; the settle window lets them arrive. Background transactions
  // of that window (the idle rate) are not the workload's.
  sleep_s(o_.settle_seconds);
  auto s1 = snapshot(db_);
  double window = static_cast<double>(s1.at_ns - s0.at_ns) / 1e9;
  double xacts = static_cast<double>(s1.xacts - s0.xacts)
                 - res.idle_xacts_per_s * std::max(0.0, window - res.seconds);
  res.xacts_per_task = xacts / static_cast<double>(res.tasks);
  long long rows = 0;
  for (auto& [t, n] : s1.rows) {
    auto d = n - (s0.rows.count(t) ? s0.rows[t] : 0);
    if (d > 0)
      res.rows_by_table[t] = static_cast<double>(d) / static_cast<double>(res.tasks);
    rows += d;
  }
  res.rows_per_task = static_cast<double>(rows) / static_cast<double>(res.tasks);
  res.wal_kb_per_task = static_cast<double>(s1.wal_bytes - s0.wal_bytes) / 1024.0
                        / static_cast<double>(res.tasks);
  write_statements(w.name + (w.history ? "_" + std::to_string(w.history) : ""), res.tasks);

  lis.stop();
  std::unordered_map<std::string, int64_t> task_arrivals;
  for (auto& wp : workers) {
    std::string problem;
    stop_worker(wp, task_arrivals, problem);
    if (!problem.empty() && res.problem.empty())
      res.problem = problem;
  }

  // Latencies from the history: which seq scheduled which task, which
  // completed the workflow.
  auto& commits = lis.arrivals();
  std::vector<double> e2e, dispatch;
  std::unordered_map<std::string, commit_times> one_task;
  std::unordered_map<std::string, const started*> by_id;
  for (auto& s : starts)
    if (!s.id.empty())
      by_id.emplace(s.id, &s);
  std::vector<std::string> ids;
  for (auto& s : starts)
    if (!s.id.empty())
      ids.push_back(s.id);
  for (size_t at = 0; at < ids.size(); at += 5000) {
    std::string arr = "{";
    for (size_t i = at; i < std::min(ids.size(), at + 5000); ++i)
      arr += (i == at ? "" : ",") + ids[i];
    arr += "}";
    auto r = db_.exec(sql::run_events, {arr});
    for (int i = 0; i < r.rows(); ++i) {
      auto wf = r.str(i, 0);
      auto commit = commits.find(wf + ":" + r.str(i, 1));
      if (commit == commits.end())
        continue;
      if (r.str(i, 2) == "WORKFLOW_COMPLETED") {
        e2e.push_back(static_cast<double>(commit->second - by_id[wf]->call_ns) / 1e6);
        one_task[wf].completed = commit->second;
      } else {
        auto got = task_arrivals.find(wf + "/" + r.str(i, 3));
        if (got != task_arrivals.end()) {
          dispatch.push_back(static_cast<double>(got->second - commit->second) / 1e6);
          one_task[wf].scheduled = commit->second;
          one_task[wf].received = got->second;
        }
      }
    }
  }
  res.e2e = percentiles_of(std::move(e2e));
  res.dispatch = percentiles_of(std::move(dispatch));
  if (!o_.latencies_dir.empty())
    write_latencies(w.name + (w.history ? "_" + std::to_string(w.history) : ""), starts, one_task);
  if (w.kind == shape::one_task && w.tasks_per_workflow == 1) {
    std::vector<double> to_scheduled, to_completed;
    for (const auto& [wf, t] : one_task) {
      if (t.scheduled == 0 || t.completed == 0)
        continue;
      to_scheduled.push_back(static_cast<double>(t.scheduled - by_id[wf]->call_ns) / 1e6);
      to_completed.push_back(static_cast<double>(t.completed - t.received) / 1e6);
    }
    res.to_scheduled = percentiles_of(std::move(to_scheduled));
    res.to_completed = percentiles_of(std::move(to_completed));
    if (res.to_scheduled.n > 0)
      say(w.name + ": e2e in parts, p50 / p99 ms: start call → task scheduled "
           + fixed2(res.to_scheduled.p50) + " / " + fixed2(res.to_scheduled.p99)
           + ", scheduled → a worker has it " + fixed2(res.dispatch.p50) + " / "
           + fixed2(res.dispatch.p99) + ", worker has it → workflow completed "
           + fixed2(res.to_completed.p50) + " / " + fixed2(res.to_completed.p99));
  }
  return res;
}

// ------------------------------------------------------------------ output

double r2(double x) {
  return std::round(x * 100.0) / 100.0;
}

json::object to_json(const workload_result& r, const ceiling_result* batched,
                     const ceiling_result* unbatched) {
  json::object o;
  o["workload"] = r.spec.name;
  o["transport"] = r.spec.transport;
  o["completed"] = r.completed;
  if (!r.problem.empty())
    o["problem"] = r.problem;
  o["workflows"] = r.spec.workflows;
  o["tasks"] = r.tasks;
  if (r.spec.rate > 0)
    o["start_rate_per_s"] = r.spec.rate;
  else
    o["starts_in_flight"] = r.spec.starts_in_flight;
  if (r.spec.name == "W4")
    o["history_workflows"] = r.spec.history;
  if (r.spec.cache != workload_spec::cache_mode::none)
    o["cache"] = r.spec.cache == workload_spec::cache_mode::hit ? "hit" : "miss";
  o["seconds"] = r2(r.seconds);
  if (r.spec.duration_s > 0) {
    o["duration_s"] = r.spec.duration_s;
    o["steady_window_s"] = r2(r.steady_window_s);
    o["whole_run_tasks_per_s"] = r2(r.whole_tasks_per_s);
  }
  o["workflows_per_s"] = r2(r.workflows_per_s);
  o["tasks_per_s"] = r2(r.tasks_per_s);
  o["start_calls_per_s"] = r2(r.start_calls_per_s);
  o["e2e_p50_ms"] = r2(r.e2e.p50);
  o["e2e_p95_ms"] = r2(r.e2e.p95);
  o["e2e_p99_ms"] = r2(r.e2e.p99);
  o["e2e_max_ms"] = r2(r.e2e.max);
  o["e2e_samples"] = r.e2e.n;
  o["dispatch_p50_ms"] = r2(r.dispatch.p50);
  o["dispatch_p95_ms"] = r2(r.dispatch.p95);
  o["dispatch_p99_ms"] = r2(r.dispatch.p99);
  o["dispatch_max_ms"] = r2(r.dispatch.max);
  o["dispatch_samples"] = r.dispatch.n;
  if (r.to_scheduled.n > 0) {
    o["scheduled_p50_ms"] = r2(r.to_scheduled.p50);
    o["scheduled_p99_ms"] = r2(r.to_scheduled.p99);
    o["completed_after_receipt_p50_ms"] = r2(r.to_completed.p50);
    o["completed_after_receipt_p99_ms"] = r2(r.to_completed.p99);
  }
  o["ceiling_lifecycles_per_s"] = batched ? r2(batched->lifecycles_per_s) : 0.0;
  o["ceiling_unbatched_lifecycles_per_s"] = unbatched ? r2(unbatched->lifecycles_per_s) : 0.0;
  if (batched && batched->lifecycles_per_s > 0) {
    o["tasks_x_ceiling"] = std::round(r.tasks_per_s / batched->lifecycles_per_s * 1000) / 1000;
    o["workflows_x_ceiling"] =
      std::round(r.workflows_per_s / batched->lifecycles_per_s * 1000) / 1000;
  }
  o["pg_xacts_per_task"] = r2(r.xacts_per_task);
  o["pg_idle_xacts_per_s"] = r2(r.idle_xacts_per_s);
  o["pg_rows_written_per_task"] = r2(r.rows_per_task);
  json::object by_table;
  for (auto& [t, n] : r.rows_by_table)
    by_table[t] = r2(n);
  o["pg_rows_written_per_task_by_table"] = std::move(by_table);
  o["wal_kb_per_task"] = r2(r.wal_kb_per_task);
  o["nodeflow_cpu_s"] = r2(r.nodeflow_cpu_s);
  o["postgres_cpu_s"] = r2(r.postgres_cpu_s);
  o["workers_cpu_s"] = r2(r.workers_cpu_s);
  o["nodeflow_peak_rss_mb"] = r2(r.nodeflow_peak_rss_mb);
  o["load_avg_1m"] = r2(r.load_avg);
  return o;
}

/// A W4 step's figures against the empty database's runs just before and after it: the
/// mean of the two, and the step as a ratio to that mean.
void add_beside(json::object& j, const workload_result& step,
                const std::vector<workload_result>& beside) {
  double tps = 0, p99 = 0;
  for (const auto& b : beside) {
    tps += b.tasks_per_s / static_cast<double>(beside.size());
    p99 += b.dispatch.p99 / static_cast<double>(beside.size());
  }
  json::array each;
  for (const auto& b : beside)
    each.push_back(json::value(r2(b.tasks_per_s)));
  j["beside_empty_tasks_per_s_runs"] = std::move(each);
  j["beside_empty_tasks_per_s"] = r2(tps);
  j["beside_empty_dispatch_p99_ms"] = r2(p99);
  if (tps > 0)
    j["x_beside_empty_tasks_per_s"] = std::round(step.tasks_per_s / tps * 1000) / 1000;
  if (p99 > 0)
    j["x_beside_empty_dispatch_p99"] = std::round(step.dispatch.p99 / p99 * 1000) / 1000;
}

/// A workload run over HTTP against the same workload over CAF just before it in the run.
/// W1cache's hits against its misses run just before: e2e as a ratio.
void add_x_miss(json::object& j, const workload_result& hit, const workload_result& miss) {
  if (miss.e2e.p50 > 0)
    j["x_miss_e2e_p50"] = std::round(hit.e2e.p50 / miss.e2e.p50 * 1000) / 1000;
  if (miss.e2e.p99 > 0)
    j["x_miss_e2e_p99"] = std::round(hit.e2e.p99 / miss.e2e.p99 * 1000) / 1000;
}

void add_x_caf(json::object& j, const workload_result& r, const workload_result& caf) {
  if (caf.tasks_per_s > 0)
    j["x_caf_tasks_per_s"] = std::round(r.tasks_per_s / caf.tasks_per_s * 1000) / 1000;
  if (caf.dispatch.p99 > 0)
    j["x_caf_dispatch_p99"] = std::round(r.dispatch.p99 / caf.dispatch.p99 * 1000) / 1000;
}

void print_table(FILE* f, const std::vector<json::object>& rows,
                 const std::vector<ceiling_result>& ceilings) {
  for (auto& c : ceilings)
    std::fprintf(f, "ceiling  batch %3d  %2d connections  %9.0f lifecycles/s\n", c.batch,
                 c.connections, c.lifecycles_per_s);
  std::fprintf(f,
               "\n%-8s %-4s %9s %8s %9s %9s %7s %6s %7s %7s %7s %7s %7s %6s %6s %6s %6s %6s %6s\n",
               "workload", "via", "history", "wf", "wf/s", "tasks/s", "ceiling", "x_ceil", "e2e50",
               "e2e95", "e2e99", "dsp50", "dsp99", "xact/t", "rows/t", "nf_cpu", "pg_cpu",
               "rss_mb", "load");
  auto num = [](const json::object& o, const char* k) {
    auto* v = o.if_contains(k);
    return v && v->is_number() ? v->to_number<double>() : 0.0;
  };
  for (auto& o : rows) {
    std::fprintf(f,
                 "%-8s %-4s %9.0f %8.0f %9.1f %9.1f %7.0f %6.3f %7.2f %7.2f %7.2f %7.2f %7.2f "
                 "%6.2f %6.1f %6.1f %6.1f %6.0f %6.2f%s\n",
                 std::string(o.at("workload").as_string()).c_str(),
                 std::string(o.at("transport").as_string()).c_str(), num(o, "history_workflows"),
                 num(o, "workflows"), num(o, "workflows_per_s"), num(o, "tasks_per_s"),
                 num(o, "ceiling_lifecycles_per_s"), num(o, "tasks_x_ceiling"),
                 num(o, "e2e_p50_ms"), num(o, "e2e_p95_ms"), num(o, "e2e_p99_ms"),
                 num(o, "dispatch_p50_ms"), num(o, "dispatch_p99_ms"),
                 num(o, "pg_xacts_per_task"), num(o, "pg_rows_written_per_task"),
                 num(o, "nodeflow_cpu_s"), num(o, "postgres_cpu_s"),
                 num(o, "nodeflow_peak_rss_mb"), num(o, "load_avg_1m"),
                 o.at("completed").as_bool() ? "" : "  NOT COMPLETED");
    if (auto* x = o.if_contains("x_caf_tasks_per_s"))
      std::fprintf(f, "%-8s %-4s %9s   against the same workload over caf: tasks/s %.3fx, "
                      "dispatch p99 %.3fx\n",
                   "", "", "", x->to_number<double>(), num(o, "x_caf_dispatch_p99"));
    if (auto* x = o.if_contains("x_miss_e2e_p50"))
      std::fprintf(f, "%-8s %-4s %9s   against the misses just before: e2e p50 %.3fx, "
                      "e2e p99 %.3fx\n",
                   "", "", "", x->to_number<double>(), num(o, "x_miss_e2e_p99"));
    if (auto* b = o.if_contains("beside_empty_tasks_per_s"))
      std::fprintf(f, "%-8s %-4s %9s   beside it on an empty database: %.1f tasks/s (history %.3fx), "
                      "dispatch p99 %.2f ms (history %.3fx)\n",
                   "", "", "", b->to_number<double>(), num(o, "x_beside_empty_tasks_per_s"),
                   num(o, "beside_empty_dispatch_p99_ms"), num(o, "x_beside_empty_dispatch_p99"));
  }
}

// Generates finished workflows until the history holds `target`. One INSERT statement keeps
// one backend busy, so `writers` connections take chunks side by side (10M finished
// workflows took 58 minutes on one). Their rows never meet: random ids, no conflicts.
void grow_history(sql_conn& db, const std::string& dsn, long long target, bool quick,
                  int writers) {
  auto have = db.exec(sql::history_count).i64(0, 0);
  if (have >= target)
    return;
  say("generating history: " + std::to_string(have) + " → " + std::to_string(target)
      + " finished workflows, " + std::to_string(writers) + " writers");
  const long long chunk = quick ? 5000 : 50000;
  const long long step = 500000;
  std::atomic<long long> next{have}; // the first workflow of the next chunk to take
  std::atomic<long long> made{have};
  std::mutex report;
  const auto t0 = mono_ns();
  auto write = [&] {
    sql_conn c{dsn};
    c.exec("SET session_replication_role = replica");
    for (;;) {
      long long from = next.fetch_add(chunk);
      if (from >= target)
        return;
      long long n = std::min(chunk, target - from);
      c.exec(sql::history_chunk, {std::to_string(n)});
      long long before = made.fetch_add(n);
      if (!quick && (before + n) / step > before / step) {
        std::lock_guard<std::mutex> g{report};
        say("  " + std::to_string((before + n) / step * step) + " ("
            + std::to_string(static_cast<long long>(static_cast<double>(mono_ns() - t0) / 1e9))
            + " s)");
      }
    }
  };
  std::vector<std::thread> ths;
  for (int i = 0; i < writers; ++i)
    ths.emplace_back(write);
  for (auto& t : ths)
    t.join();
  db.exec(R"(VACUUM (ANALYZE) "WorkflowExecutions", "TaskExecutions", "WorkflowEvents")");
  say("history ready in " + std::to_string(static_cast<double>(mono_ns() - t0) / 1e9) + " s");
}

/// One ceiling measurement with the run's connections and seconds, announced as `label`.
ceiling_result measure_ceiling(const run_options& o, const std::string& label, int batch) {
  say(label + ": batch " + std::to_string(batch) + ", " + std::to_string(o.ceiling_connections)
      + " connections, " + std::to_string(o.ceiling_seconds) + " s");
  auto c = run_ceiling(o.dsn, batch, o.ceiling_connections, o.ceiling_seconds);
  say("  " + std::to_string(static_cast<long long>(c.lifecycles_per_s)) + " lifecycles/s");
  return c;
}

} // namespace

int run_benchmark(const run_options& o) {
  // A workload's name in the messages, with its transport when the run has several.
  auto labelled = [&](const std::string& name, const std::string& transport) {
    return o.transports.size() > 1 ? name + " over " + transport : name;
  };
  std::vector<ceiling_result> ceilings;
  const ceiling_result* batched = nullptr;
  const ceiling_result* unbatched = nullptr;
  if (o.ceiling) {
    for (int batch : {1, 100})
      ceilings.push_back(measure_ceiling(o, "ceiling", batch));
    unbatched = &ceilings[0];
    batched = &ceilings[1];
  }
  FILE* out = nullptr;
  if (!o.out.empty()) {
    out = std::fopen(o.out.c_str(), "w");
    if (out == nullptr)
      bench_die("cannot write " + o.out);
    for (auto& c : ceilings)
      std::fprintf(out,
                   "{\"workload\":\"ceiling\",\"batch\":%d,\"connections\":%d,\"seconds\":%.2f,"
                   "\"lifecycles_per_s\":%.0f}\n",
                   c.batch, c.connections, c.seconds, c.lifecycles_per_s);
  }
  // The machine's speed drifts by minutes (the batched ceiling measured 11,000-20,000
  // lifecycles/s in six runs back to back), so each workload is compared with a ceiling
  // measured just before it, not with the run's first one: the first workload takes that
  // one, each later workload (and each W4 step) measures its own.
  std::optional<ceiling_result> first_batched;
  if (batched)
    first_batched = *batched;
  auto ceiling_for = [&](const std::string& name) -> std::optional<ceiling_result> {
    if (!o.ceiling)
      return std::nullopt;
    if (first_batched)
      return std::exchange(first_batched, std::nullopt);
    return measure_ceiling(o, "ceiling beside " + name, 100);
  };
  runner run{o};
  // W4's empty database beside each step: its own node, its own runner (made at W4's turn).
  run_options control_options = o;
  control_options.node = o.w4_control_node;
  control_options.more_nodes.clear();
  control_options.dsn = o.w4_control_dsn;
  control_options.http.clear();
  if (!o.w4_control_http.empty())
    control_options.http.push_back(o.w4_control_http);
  control_options.serve_pids.clear();
  if (o.w4_control_serve_pid != 0)
    control_options.serve_pids.push_back(o.w4_control_serve_pid);
  control_options.statements_dir.clear();
  control_options.latencies_dir.clear();
  std::unique_ptr<runner> control;
  std::vector<json::object> rows;
  bool all_completed = true;
  // One JSON line per workload (W4: per history size, `j` carrying the ratios).
  auto emit = [&](const workload_result& r, json::object j) {
    auto line = json::serialize(j);
    if (o.json)
      std::printf("%s\n", line.c_str());
    if (out) {
      std::fprintf(out, "%s\n", line.c_str());
      std::fflush(out);
    }
    std::fflush(stdout);
    if (!r.completed || !r.problem.empty()) {
      all_completed = false;
      say(r.spec.name + ": " + (r.problem.empty() ? "did not complete" : r.problem));
    }
    rows.push_back(std::move(j));
  };
  for (const auto& name : o.workloads) {
    workload_spec w;
    w.name = name;
    w.starts_in_flight = o.start_concurrency;
    if (name == "W1") {
      w.workflows = o.w1_workflows;
      w.starts_in_flight = o.w1_start_concurrency;
    } else if (name == "W1lat") {
      w.rate = o.w1lat_rate;
      w.workflows = static_cast<int>(o.w1lat_rate * o.w1lat_seconds);
    } else if (name == "W1cache") {
      w.rate = o.w1cache_rate;
      w.workflows = static_cast<int>(o.w1cache_rate * o.w1cache_seconds);
    } else if (name == "W2") {
      w.kind = shape::chain;
      w.workflows = o.w2_workflows;
      w.tasks_per_workflow = o.w2_tasks;
      w.duration_s = o.duration_seconds;
    } else if (name == "W3") {
      w.kind = shape::fan_out;
      w.workflows = o.w3_workflows;
      w.tasks_per_workflow = o.w3_fanout;
      w.duration_s = o.duration_seconds;
    } else if (name == "W4") {
      w.kind = shape::chain;
      w.workflows = o.w4_workflows;
      w.tasks_per_workflow = o.w2_tasks;
    } else {
      bench_die("unknown workload " + name + " (W1, W1lat, W1cache, W2, W3, W4)");
    }
    if (name == "W1cache") {
      // The misses, then the hits, at the same rate: one line each, the hits' with the ratio.
      for (const auto& t : o.transports) {
        w.transport = t;
        std::optional<workload_result> misses;
        for (auto mode : {workload_spec::cache_mode::miss, workload_spec::cache_mode::hit}) {
          w.cache = mode;
          w.name = mode == workload_spec::cache_mode::hit ? "W1c_hit" : "W1c_miss";
          auto ceil = ceiling_for(labelled(w.name, t));
          say(labelled(w.name, t) + ": " + std::to_string(w.workflows) + " workflows");
          auto r = run.run(w);
          auto j = to_json(r, ceil ? &*ceil : nullptr, unbatched);
          if (misses)
            add_x_miss(j, r, *misses);
          else
            misses = r;
          emit(r, std::move(j));
        }
      }
      continue;
    }
    if (name != "W4") {
      std::optional<workload_result> over_caf;
      for (const auto& t : o.transports) {
        w.transport = t;
        auto ceil = ceiling_for(labelled(name, t));
        say(labelled(name, t) + ": "
            + (w.duration_s > 0 ? "starts for " + fixed2(w.duration_s) + " s"
                                : std::to_string(w.workflows) + " workflows"));
        auto r = run.run(w);
        auto j = to_json(r, ceil ? &*ceil : nullptr, unbatched);
        if (t == "caf")
          over_caf = r;
        else if (over_caf)
          add_x_caf(j, r, *over_caf);
        emit(r, std::move(j));
      }
      continue;
    }
    // W4: W2's shape on the history as it is, then grown to each size; at each size, once
    // per transport.
    if (!o.w4_control_node.empty() && !control)
      control = std::make_unique<runner>(control_options);
    std::map<std::string, std::vector<workload_result>> steps_by; // per transport
    std::vector<long long> sizes{0};
    sizes.insert(sizes.end(), o.w4_history.begin(), o.w4_history.end());
    for (auto h : sizes) {
      grow_history(run.db(), o.dsn, h, o.quick, o.w4_writers);
      w.history = run.db().exec(sql::history_count).i64(0, 0);
      std::optional<workload_result> over_caf;
      for (const auto& t : o.transports) {
        w.transport = t;
        auto& steps = steps_by[t];
        auto ceil = ceiling_for(labelled("W4@" + std::to_string(w.history), t));
        // The empty database's runs beside a step on a history: one just before, one just after.
        std::vector<workload_result> beside;
        const bool on_history = control && !steps.empty();
        auto run_beside = [&] {
          if (!on_history)
            return;
          say(labelled("W4", t) + ": " + std::to_string(w.workflows)
              + " workflows on the empty database beside it");
          auto empty = w;
          empty.history = 0;
          beside.push_back(control->run(empty));
          if (!beside.back().completed || !beside.back().problem.empty()) {
            all_completed = false;
            say("W4 on the empty database beside it: "
                + (beside.back().problem.empty() ? "did not complete" : beside.back().problem));
          }
        };
        run_beside();
        say(labelled("W4", t) + ": " + std::to_string(w.workflows) + " workflows on a history of "
            + std::to_string(w.history));
        steps.push_back(run.run(w));
        run_beside();
        auto j = to_json(steps.back(), ceil ? &*ceil : nullptr, unbatched);
        if (steps.size() > 1 && steps.front().tasks_per_s > 0) {
          j["x_empty_tasks_per_s"] =
            std::round(steps.back().tasks_per_s / steps.front().tasks_per_s * 1000) / 1000;
          if (steps.front().dispatch.p99 > 0)
            j["x_empty_dispatch_p99"] =
              std::round(steps.back().dispatch.p99 / steps.front().dispatch.p99 * 1000) / 1000;
        }
        if (!beside.empty())
          add_beside(j, steps.back(), beside);
        if (t == "caf")
          over_caf = steps.back();
        else if (over_caf)
          add_x_caf(j, steps.back(), *over_caf);
        emit(steps.back(), std::move(j));
      }
    }
  }
  if (out)
    std::fclose(out);
  print_table(o.json ? stderr : stdout, rows, ceilings);
  if (!o.plot_data.empty()) {
    std::ofstream p(o.plot_data);
    p << "label\te2e_p50\te2e_p95\te2e_p99\tdispatch_p50\tdispatch_p99\ttasks_per_s\t"
         "workflows_per_s\n";
    for (auto& r : rows) {
      std::string label{r.at("workload").as_string()};
      if (auto* h = r.if_contains("history_workflows"))
        label += "@" + std::to_string(h->to_number<long long>());
      if (o.transports.size() > 1)
        label += "/" + std::string{r.at("transport").as_string()};
      p << label;
      for (auto* k : {"e2e_p50_ms", "e2e_p95_ms", "e2e_p99_ms", "dispatch_p50_ms",
                      "dispatch_p99_ms", "tasks_per_s", "workflows_per_s"})
        p << "\t" << r.at(k).to_number<double>();
      p << "\n";
    }
  }
  return all_completed ? 0 : 1;
}

} // namespace nf::bench
