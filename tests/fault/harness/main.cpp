// nodeflow-fault-harness: N real `nodeflow serve` processes on a Postgres 18 of the
// harness's own, real workers, faults injected through signals, Postgres and the fault
// proxy, every scenario ended by the history checker. `--short` is the ctest
// `fault.short`; `--long --report docs/reliability.md` writes the reliability table.

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fault/harness/cluster.hpp"
#include "tests/fault/harness/options.hpp"
#include "tests/fault/harness/postgres.hpp"
#include "tests/fault/harness/proxy.hpp"
#include "tests/fault/harness/report.hpp"
#include "tests/fault/harness/run_context.hpp"
#include "tests/fault/harness/scenarios.hpp"
#include "tests/fault/harness/sink.hpp"

using namespace nf;
using namespace nf::fault;
using namespace std::chrono_literals;

namespace {

// Postgres runs detached from the harness (pg_ctl): whatever ends the harness stops it.
extern "C" void on_fatal_signal(int sig) {
  stop_all_servers();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::string make_scratch_dir() {
  std::string tmpl = "/tmp/nodeflow-fault-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  // Postgres runs as its own user and must reach its data directory below this one.
  ::chmod(tmpl.c_str(), 0755);
  return tmpl;
}

void await_leases(run_context& ctx, int partitions) {
  for (int i = 0; i < 300; ++i) {
    if (ctx.count(R"(SELECT count(*) AS "n" FROM "PartitionLeases" WHERE "expiresAt" > now())")
        >= partitions)
      return;
    std::this_thread::sleep_for(100ms);
  }
  throw std::runtime_error("the nodes did not lease every partition within 30 s");
}

int run(const options& o, const std::string& command_line) {
  auto t0 = std::chrono::steady_clock::now();
  auto dir = make_scratch_dir();
  std::cout << "scratch directory " << dir << "\n" << std::flush;
  bool all_pass = false;
  {
    pg_server pg{o.source_dir, dir};
    const std::string db = "nodeflow";
    {
      auto admin = pg.connect("postgres");
      if (!admin.exec("CREATE DATABASE \"" + db + "\""))
        throw std::runtime_error("CREATE DATABASE failed");
    }
    shell_output(o.nodeflow_bin + " migrate --dsn '" + pg.dsn(db) + "' >" + dir
                 + "/migrate.log 2>&1");
    fault_proxy proxy{o.proxy_bin, dir + "/proxy.log"};
    webhook_sink sink{dir + "/sink.jsonl"};
    cluster nodes{o, proxy, pg, dir, db};
    for (int i = 0; i < o.nodes; ++i)
      nodes.add_node();
    run_context ctx{o, pg, proxy, nodes, sink, db, pg.connect(db)};
    await_leases(ctx, ctx.partitions());
    {
      client c{nodes.client_opts(0, 30s)};
      auto defined = c.register_definitions(
        workload_definitions(o.fan_width, o.wait_s, o.response_timeout_s));
      if (!defined)
        throw std::runtime_error("defining the workload: " + describe(defined.error()));
    }
    add_webhook_sink(nodes.at(0).http_port, sink.url());
    std::cout << o.nodes << " nodes up after "
              << seconds_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                                .count())
              << "\n" << std::flush;

    std::vector<row> rows;
    for (const auto& name : o.scenarios) {
      auto ts = std::chrono::steady_clock::now();
      std::cout << "\n==== scenario " << name << "\n" << std::flush;
      row r;
      try {
        r = run_scenario(name, ctx);
      } catch (const std::exception& e) {
        r.scenario = name;
        r.fault = name;
        r.figure = std::string{"the scenario stopped: "} + e.what();
        r.pass = false;
        r.command = command_for(name, "");
        // A scenario that threw may have left its fault in place.
        for (int i = 0; i < nodes.size(); ++i) {
          if (nodes.at(i).paused)
            nodes.resume(i);
          if (!nodes.running(i))
            nodes.start(i);
        }
        try {
          ctx.sql = pg.connect(db);
        } catch (const std::exception&) {
        }
      }
      // A node that died on its own (no scenario leaves one down) fails the row, by name
      // and exit status, and is started again so the next scenario runs on three.
      for (int i = 0; i < nodes.size(); ++i) {
        if (nodes.at(i).paused || nodes.running(i))
          continue;
        auto st = nodes.at(i).proc ? nodes.at(i).proc->status() : std::nullopt;
        std::string how = !st                ? "exited"
                          : WIFSIGNALED(*st) ? "died of signal " + std::to_string(WTERMSIG(*st))
                                             : "exited " + std::to_string(WEXITSTATUS(*st));
        r.pass = false;
        r.figure += "; node " + std::to_string(i) + " " + how + " on its own (its log: "
                    + nodes.at(i).log + ")";
        try {
          nodes.start(i);
        } catch (const std::exception& e) {
          r.figure += std::string{"; starting it again failed: "} + e.what();
        }
      }
      std::cout << (r.pass ? "PASS " : "FAIL ") << name << " ("
                << seconds_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - ts)
                                  .count())
                << "): " << r.figure << "\n" << std::flush;
      if (!r.pass) {
        std::cout << "---- warnings and errors the nodes logged (first 40)\n";
        for (const auto& line : nodes.complaints(40))
          std::cout << line << "\n";
        std::cout << nodes.log_tails() << std::flush;
      }
      rows.push_back(r);
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_rows(rows);
    all_pass = !rows.empty();
    for (const auto& r : rows)
      all_pass = all_pass && r.pass;
    if (!o.report_path.empty() && !write_report(o.report_path, o, rows, seconds, command_line))
      all_pass = false;
    for (int i = 0; i < nodes.size(); ++i)
      nodes.stop(i);
    std::cout << (all_pass ? "all scenarios pass" : "FAILED") << " in " << seconds_text(seconds)
              << "\n" << std::flush;
  }
  if (all_pass && !o.keep) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } else {
    std::cout << "logs kept in " << dir << "\n";
  }
  return all_pass ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  auto o = parse_options(argc, argv);
  if (!o)
    return 2;
  std::string command_line = "build/tests/fault/nodeflow-fault-harness";
  for (int i = 1; i < argc; ++i)
    command_line += std::string{" "} + argv[i];
  std::atexit(stop_all_servers);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGSEGV})
    std::signal(sig, on_fatal_signal);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run(*o, command_line);
  } catch (const std::exception& e) {
    std::cerr << "nodeflow-fault-harness: " << e.what() << "\n";
    stop_all_servers();
    return 1;
  }
}
