// nodeflow-bench: the engine benchmark (bench/README.md). bench/run drives it;
// it can also run on its own against a node and its Postgres:
//
//   nodeflow-bench run --node HOST:PORT --dsn DSN [--workload W1|W1lat|W1cache|W2|W3|W4]... [sizes]
//   nodeflow-bench ceiling --dsn DSN [--batch N] [--connections N] [--seconds S]
//   nodeflow-bench worker --node HOST:PORT --queue Q --out FILE [--pollers N] [--batch N]
//                         [--reports batch|each]
//   nodeflow-bench worker --transport http --http HOST:PORT --queue Q --out FILE [--pollers N]
//                         [--batch N] [--report-conns N] [--pipeline N]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

#include "bench/engine/ceiling.hpp"
#include "bench/engine/driver.hpp"
#include "bench/engine/pg.hpp"
#include "bench/engine/worker.hpp"

using namespace nf::bench;

namespace {

const char* usage = R"(usage:
  nodeflow-bench run --node HOST:PORT [--node HOST:PORT]... --dsn DSN [options]
      --workload W1|W1lat|W1cache|W2|W3|W4   (repeatable; default: all)
      --quick                        tiny sizes (CI)
      --json                         JSON lines on stdout (the table goes to stderr)
      --out FILE                     keep the JSON lines (ceiling lines included)
      --plot-data FILE               a TSV of the plotted figures
      --statements DIR               top pg_stat_statements per workload into DIR
      --latencies DIR                every workflow's start time and latencies, a TSV per workload
      --serve-pid PID (repeatable) --pg-pid PID   processes whose CPU/RSS are reported
      --w1-workflows N --w1lat-rate R --w1lat-seconds S --w2-workflows N --w2-tasks N
      --w1cache-rate R --w1cache-seconds S
      --w3-workflows N --w3-fanout N --w4-workflows N --w4-history N[,N...]
      --duration S                   W2 and W3 start for S seconds (as many workflows as
                                     the engine takes) and measure tasks/s over the steady
                                     part, from a ramp of min(10 s, S/3) to the last start
      --w4-writers N                 connections generating W4's history (default: one per core)
      --w4-control-node HOST:PORT --w4-control-dsn DSN [--w4-control-serve-pid PID]
                                     a node on an empty database beside each W4 step
      --worker-procs N --pollers N --batch N
                                     worker processes (default 2, at least one per
                                     --node), long polls in each, tasks a poll may take
      --transport caf|http           how the workers poll and report (repeatable: each
                                     workload runs once per transport; default caf)
      --http HOST:PORT               a node's HTTP door, once per --node in the same order
                                     (needed by --transport http)
      --w4-control-http HOST:PORT    the control node's HTTP door (W4 over HTTP)
      --reports batch|each           a worker reports a poll's tasks together (default; over
                                     HTTP: POST /api/tasks/batch) or each task alone (over
                                     HTTP: Conductor's POST /api/tasks)
      --report-conns N --pipeline N  with --reports each, an HTTP worker's reporting connections per poller
                                     (default 16) and reports written back to back on
                                     each (default 1)
      --start-concurrency N          start calls in flight in W2, W3, W4 (default 64)
      --w1-start-concurrency N       start calls in flight in W1 (default 512)
      --ceiling-seconds S --ceiling-connections N --no-ceiling --timeout S --work-dir DIR
  nodeflow-bench ceiling --dsn DSN [--batch N] [--connections N] [--seconds S]
  nodeflow-bench worker --node HOST:PORT --queue Q --out FILE [--pollers N] [--batch N]
                        [--reports batch|each] [--id ID]
  nodeflow-bench worker --transport http --http HOST:PORT --queue Q --out FILE [--pollers N]
                        [--batch N] [--report-conns N] [--pipeline N] [--id ID]
  nodeflow-bench createdb|dropdb|dsn --dsn DSN --name NAME   (a scratch database for bench/run)
)";

[[noreturn]] void bad(const std::string& what) {
  std::fprintf(stderr, "nodeflow-bench: %s\n%s", what.c_str(), usage);
  std::exit(2);
}

long long integer(const std::string& flag, const std::string& v, long long lo, long long hi) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 12)
    bad(flag + ": expected an integer " + std::to_string(lo) + " … " + std::to_string(hi)
        + ", got \"" + v + "\"");
  auto x = std::stoll(v);
  if (x < lo || x > hi)
    bad(flag + ": expected an integer " + std::to_string(lo) + " … " + std::to_string(hi)
        + ", got " + v);
  return x;
}

// --reports batch|each: a poll's tasks reported in one message, or one report per task.
bool reports_mode(const std::string& v) {
  if (v != "batch" && v != "each")
    bad("--reports: expected batch or each, got \"" + v + "\"");
  return v == "batch";
}

// --transport caf|http: how the workers poll and report.
std::string transport(const std::string& v) {
  if (v != "caf" && v != "http")
    bad("--transport: expected caf or http, got \"" + v + "\"");
  return v;
}

double number(const std::string& flag, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || x < lo || x > hi)
    bad(flag + ": expected a number " + std::to_string(lo) + " … " + std::to_string(hi)
        + ", got \"" + v + "\"");
  return x;
}

std::string self_path(const char* argv0) {
  char buf[4096];
  auto n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return argv0;
  buf[n] = '\0';
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    bad("missing command");
  std::string cmd = argv[1];
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc)
      bad(std::string{argv[i]} + " needs a value");
    return argv[++i];
  };
  if (cmd == "worker") {
    worker_options w;
    std::string http_only; // a flag of the HTTP worker's, given
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--transport") w.transport = transport(value(i));
      else if (a == "--http") w.http = value(i);
      else if (a == "--report-conns") { w.report_conns = static_cast<int>(integer(a, value(i), 1, 64)); http_only = a; }
      else if (a == "--pipeline") { w.pipeline = static_cast<int>(integer(a, value(i), 1, 256)); http_only = a; }
      else if (a == "--node") w.node = value(i);
      else if (a == "--queue") w.queue = value(i);
      else if (a == "--out") w.out = value(i);
      else if (a == "--id") w.id = value(i);
      else if (a == "--pollers") w.pollers = static_cast<int>(integer(a, value(i), 1, 256));
      else if (a == "--batch") w.batch = static_cast<int>(integer(a, value(i), 1, 1000));
      else if (a == "--reports") w.batch_reports = reports_mode(value(i));
      else bad("unknown flag " + a);
    }
    if (w.queue.empty() || w.out.empty())
      bad("worker needs --queue and --out");
    if (w.transport == "http") {
      if (w.http.empty())
        bad("worker --transport http needs --http HOST:PORT (the node's HTTP port)");
      return run_http_worker(w);
    }
    if (!http_only.empty() || !w.http.empty())
      bad((http_only.empty() ? std::string{"--http"} : http_only) + ": only with --transport http");
    return run_worker(w);
  }
  if (cmd == "ceiling") {
    std::string dsn;
    int batch = 100, connections = 16;
    double seconds = 5;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--dsn") dsn = value(i);
      else if (a == "--batch") batch = static_cast<int>(integer(a, value(i), 1, 10000));
      else if (a == "--connections") connections = static_cast<int>(integer(a, value(i), 1, 256));
      else if (a == "--seconds") seconds = number(a, value(i), 0.1, 3600);
      else bad("unknown flag " + a);
    }
    if (dsn.empty())
      bad("ceiling needs --dsn");
    auto r = run_ceiling(dsn, batch, connections, seconds);
    std::printf("{\"workload\":\"ceiling\",\"batch\":%d,\"connections\":%d,\"seconds\":%.2f,"
                "\"lifecycles_per_s\":%.0f}\n",
                r.batch, r.connections, r.seconds, r.lifecycles_per_s);
    return 0;
  }
  if (cmd == "createdb" || cmd == "dropdb" || cmd == "dsn") {
    std::string dsn, name;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--dsn") dsn = value(i);
      else if (a == "--name") name = value(i);
      else bad("unknown flag " + a);
    }
    if (dsn.empty() || name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      bad(cmd + " needs --dsn and --name (lower case letters, digits, _)");
    if (cmd == "dsn") {
      std::printf("%s\n", with_database(dsn, name).c_str());
      return 0;
    }
    sql_conn admin{dsn};
    admin.exec("SET client_min_messages = warning");
    if (cmd == "createdb") {
      admin.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      admin.exec("CREATE DATABASE " + name);
      std::fprintf(stderr, "nodeflow-bench: created database %s\n", name.c_str());
    } else {
      admin.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
    return 0;
  }
  if (cmd != "run")
    bad("unknown command " + cmd);
  run_options o;
  o.exe = self_path(argv[0]);
  std::vector<std::string> workloads;
  bool node_given = false;
  bool worker_procs_given = false;
  bool transport_given = false;
  std::string http_only; // a flag of the HTTP workers', given
  // --quick first, so explicit sizes after it still win.
  for (int i = 2; i < argc; ++i)
    if (std::string{argv[i]} == "--quick") {
      o.quick = true;
      o.w1_workflows = 200;
      o.w1lat_rate = 20;
      o.w1lat_seconds = 3;
      o.w1cache_rate = 20;
      o.w1cache_seconds = 2;
      o.w2_workflows = 30;
      o.w3_workflows = 4;
      o.w4_workflows = 20;
      o.w4_history = {2000, 10000};
      o.ceiling_seconds = 1.5;
      o.settle_seconds = 1.2;
      o.timeout_seconds = 60;
    }
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") continue;
    else if (a == "--node") {
      if (node_given) o.more_nodes.push_back(value(i));
      else o.node = value(i);
      node_given = true;
    }
    else if (a == "--dsn") o.dsn = value(i);
    else if (a == "--http") o.http.push_back(value(i));
    else if (a == "--transport") {
      if (!transport_given) o.transports.clear();
      transport_given = true;
      auto t = transport(value(i));
      if (std::find(o.transports.begin(), o.transports.end(), t) == o.transports.end())
        o.transports.push_back(t);
    }
    else if (a == "--report-conns") { o.report_conns = static_cast<int>(integer(a, value(i), 1, 64)); http_only = a; }
    else if (a == "--pipeline") { o.pipeline = static_cast<int>(integer(a, value(i), 1, 256)); http_only = a; }
    else if (a == "--w4-control-http") o.w4_control_http = value(i);
    else if (a == "--workload") workloads.push_back(value(i));
    else if (a == "--json") o.json = true;
    else if (a == "--out") o.out = value(i);
    else if (a == "--plot-data") o.plot_data = value(i);
    else if (a == "--statements") o.statements_dir = value(i);
    else if (a == "--latencies") o.latencies_dir = value(i);
    else if (a == "--work-dir") o.work_dir = value(i);
    else if (a == "--serve-pid") o.serve_pids.push_back(static_cast<pid_t>(integer(a, value(i), 1, 1 << 30)));
    else if (a == "--pg-pid") o.pg_pid = static_cast<pid_t>(integer(a, value(i), 1, 1 << 30));
    else if (a == "--w1-workflows") o.w1_workflows = static_cast<int>(integer(a, value(i), 1, 10000000));
    else if (a == "--w1lat-rate") o.w1lat_rate = number(a, value(i), 1, 100000);
    else if (a == "--w1lat-seconds") o.w1lat_seconds = number(a, value(i), 0.1, 3600);
    else if (a == "--w1cache-rate") o.w1cache_rate = number(a, value(i), 1, 100000);
    else if (a == "--w1cache-seconds") o.w1cache_seconds = number(a, value(i), 0.1, 3600);
    else if (a == "--duration") o.duration_seconds = static_cast<double>(integer(a, value(i), 0, 3600));
    else if (a == "--w2-workflows") o.w2_workflows = static_cast<int>(integer(a, value(i), 1, 10000000));
    else if (a == "--w2-tasks") o.w2_tasks = static_cast<int>(integer(a, value(i), 1, 1000));
    else if (a == "--w3-workflows") o.w3_workflows = static_cast<int>(integer(a, value(i), 1, 1000000));
    else if (a == "--w3-fanout") o.w3_fanout = static_cast<int>(integer(a, value(i), 1, 1000));
    else if (a == "--w4-writers") o.w4_writers = static_cast<int>(integer(a, value(i), 1, 64));
    else if (a == "--w4-control-node") o.w4_control_node = value(i);
    else if (a == "--w4-control-dsn") o.w4_control_dsn = value(i);
    else if (a == "--w4-control-serve-pid") o.w4_control_serve_pid = static_cast<pid_t>(integer(a, value(i), 1, 1 << 30));
    else if (a == "--w4-workflows") o.w4_workflows = static_cast<int>(integer(a, value(i), 1, 10000000));
    else if (a == "--w4-history") {
      o.w4_history.clear();
      std::string v = value(i);
      size_t at = 0;
      while (at <= v.size()) {
        auto comma = v.find(',', at);
        auto part = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        o.w4_history.push_back(integer(a, part, 1, 1000000000));
        if (comma == std::string::npos)
          break;
        at = comma + 1;
      }
    }
    else if (a == "--worker-procs") {
      o.worker_procs = static_cast<int>(integer(a, value(i), 1, 64));
      worker_procs_given = true;
    }
    else if (a == "--pollers") o.pollers = static_cast<int>(integer(a, value(i), 1, 256));
    else if (a == "--batch") o.batch = static_cast<int>(integer(a, value(i), 1, 1000));
    else if (a == "--reports") o.batch_reports = reports_mode(value(i));
    else if (a == "--start-concurrency") o.start_concurrency = static_cast<int>(integer(a, value(i), 1, 100000));
    else if (a == "--w1-start-concurrency") o.w1_start_concurrency = static_cast<int>(integer(a, value(i), 1, 100000));
    else if (a == "--ceiling-seconds") o.ceiling_seconds = number(a, value(i), 0.1, 3600);
    else if (a == "--ceiling-connections") o.ceiling_connections = static_cast<int>(integer(a, value(i), 1, 256));
    else if (a == "--no-ceiling") o.ceiling = false;
    else if (a == "--timeout") o.timeout_seconds = number(a, value(i), 1, 86400);
    else bad("unknown flag " + a);
  }
  if (!workloads.empty())
    o.workloads = workloads;
  for (auto& w : o.workloads)
    if (w != "W1" && w != "W1lat" && w != "W1cache" && w != "W2" && w != "W3" && w != "W4")
      bad("--workload: expected W1, W1lat, W1cache, W2, W3 or W4, got \"" + w + "\"");
  if (o.dsn.empty())
    bad("run needs --dsn (the node's Postgres)");
  // Every node gets workers of its own unless the count was asked for.
  if (!worker_procs_given)
    o.worker_procs = std::max(o.worker_procs, static_cast<int>(o.more_nodes.size()) + 1);
  if (o.w4_control_node.empty() != o.w4_control_dsn.empty())
    bad("--w4-control-node and --w4-control-dsn go together (the control node and its database)");
  bool over_http = std::find(o.transports.begin(), o.transports.end(), "http") != o.transports.end();
  bool over_caf = std::find(o.transports.begin(), o.transports.end(), "caf") != o.transports.end();
  if (!over_http && !http_only.empty())
    bad(http_only + ": only with --transport http (the HTTP workers' reporting)");
  if (over_http && o.http.size() != o.more_nodes.size() + 1)
    bad("--transport http needs --http HOST:PORT once per --node (" + std::to_string(o.more_nodes.size() + 1)
        + " nodes, " + std::to_string(o.http.size()) + " --http)");
  if (over_http && !o.w4_control_node.empty() && o.w4_control_http.empty()
      && std::find(o.workloads.begin(), o.workloads.end(), "W4") != o.workloads.end())
    bad("--transport http with W4 needs --w4-control-http HOST:PORT (the control node's HTTP door)");
  if (o.w4_writers == 0)
    o.w4_writers = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  return run_benchmark(o);
}
