// Scenarios of the load itself: poisoned requests mixed into it, and W2's throughput on one,
// two and three nodes of one Postgres. Also the scenario table.

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/json.hpp>

#include "tests/e2e/process.hpp"
#include "tests/fault/checker/history_checker.hpp"
#include "tests/fault/harness/scenarios.hpp"

namespace nf::fault {

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// An error that names what was wrong: an answer, not a lost connection or a timeout.
bool clear_error(const caf::error& e) {
  return !is_unavailable(e) && !describe(e).empty();
}

} // namespace

std::string command_for(const std::string& name, const std::string& flags) {
  return "build/tests/fault/nodeflow-fault-harness --long --scenario " + name
         + (flags.empty() ? "" : " " + flags);
}

row poison_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int poisoned = std::max(2, static_cast<int>(std::lround(o.load_workflows * o.poison_pct / 100)));
  const int keys = poisoned / 2, outputs = poisoned - keys;
  start_plan plan;
  plan.prefix = "poison-" + std::to_string(now_ms());
  plan.count = o.load_workflows;
  plan.fan_every = o.fan_every;
  plan.pace = std::chrono::milliseconds(3000LL * o.starters / std::max(1, o.load_workflows));
  int key_clear = 0, output_clear = 0;
  std::string key_example, output_example;
  auto out = run_load(ctx, plan, [&](load_probe& p) {
    // Poisoned starts: a 3.5 KB idempotency key each.
    client c{ctx.nodes.client_opts(0, 10s)};
    for (int i = 0; i < keys; ++i) {
      msg::start_request r;
      r.workflow_name = "fh_chain";
      r.input_json = "{\"n\": 0}";
      r.idempotency_key = plan.prefix + "-" + std::to_string(i) + "-" + std::string(3500, 'k');
      r.correlation_id = plan.prefix;
      auto rep = c.start(r);
      if (!rep && clear_error(rep.error())) {
        ++key_clear;
        key_example = describe(rep.error()).substr(0, 160);
      } else if (rep) {
        p.extra_acks[rep->workflow_id] = now_ms(); // taken: it must then run as any other
      }
    }
    // Poisoned outputs: a worker reports a 16 MB output; refused, it fails the task
    // for good, so the workflow ends FAILED (the checker's `ends`).
    client pc{ctx.nodes.client_opts(1 % ctx.nodes.size(), 60s)};
    for (int i = 0; i < outputs; ++i) {
      msg::start_request r;
      r.workflow_name = "fh_poison";
      r.idempotency_key = plan.prefix + "-poison-" + std::to_string(i);
      r.correlation_id = plan.prefix;
      if (auto rep = c.start(r))
        p.extra_acks[rep->workflow_id] = now_ms();
    }
    const std::string big = "{\"blob\": \"" + std::string(16u << 20, 'x') + "\"}";
    auto t = steady::now();
    int handled = 0;
    while (handled < outputs && steady::now() - t < 60s) {
      msg::poll_request req;
      req.queue = "fh_poison_step";
      req.worker_id = "fault-harness-poison";
      req.max_tasks = 1;
      req.timeout_ms = 1000;
      auto got = pc.poll(req);
      if (!got || got->empty())
        continue;
      const auto& task = got->front();
      auto rep = pc.complete(task, big);
      if (!rep && clear_error(rep.error())) {
        ++output_clear;
        output_example = describe(rep.error()).substr(0, 160);
      }
      pc.fail(task, "the harness's poisoned output was refused", true);
      ++handled;
    }
  });
  row r;
  r.scenario = "poison";
  r.fault = std::to_string(poisoned) + " poisoned requests (" + std::to_string(keys)
            + " starts with 3.5 KB idempotency keys, " + std::to_string(outputs)
            + " completions with 16 MB outputs) among " + std::to_string(o.load_workflows)
            + " workflows";
  r.bar = "0 failures of the other requests, each poisoned one gets a clear error";
  std::ostringstream f;
  f << key_clear << "/" << keys << " keys and " << output_clear << "/" << outputs
    << " outputs refused clearly";
  if (!key_example.empty())
    f << " (`" << key_example << "`)";
  if (!output_example.empty())
    f << " (`" << output_example << "`)";
  f << "; other requests: " << out.refused_starts + out.rejected + out.abandoned_starts
    << " failed, " << out.lost_starts + out.lost_completions << " lost, checker "
    << out.checker_word();
  r.figure = f.str();
  r.pass = out.clean() && key_clear == keys && output_clear == outputs;
  r.command = command_for("poison", "--poison-pct " + std::to_string(o.poison_pct).substr(0, 4));
  return r;
}

/// W2 (bench/README.md: 10-step chains of one task, started for `seconds`, each start to the
/// next node, worker processes polling each node) on nodes 0 … k-1, run by nodeflow-bench with
/// its own driver and `worker_procs` worker processes. Its tasks/s over the steady part; 0 and
/// `problem` when the run did not complete.
struct w2_run {
  double tasks_per_s = 0;
  double cpu_ms_per_task = 0; ///< the nodes' and Postgres' CPU
  std::string problem;
};

w2_run run_w2(run_context& ctx, const std::string& dsn, int k, int worker_procs, int seconds,
              const std::string& dir) {
  w2_run out;
  auto json = dir + "/w2.jsonl";
  std::vector<std::string> argv{ctx.opts.bench_bin, "run", "--dsn", dsn,
                                "--workload", "W2", "--duration", std::to_string(seconds),
                                "--worker-procs", std::to_string(worker_procs),
                                "--no-ceiling", "--out", json, "--work-dir", dir};
  for (int i = 0; i < k; ++i) {
    argv.insert(argv.end(), {"--node", "127.0.0.1:" + std::to_string(ctx.nodes.at(i).port)});
    if (ctx.nodes.at(i).proc)
      argv.insert(argv.end(), {"--serve-pid", std::to_string(ctx.nodes.at(i).proc->pid())});
  }
  std::filesystem::create_directories(dir);
  test::child_process bench{argv, dir + "/bench.log", false};
  auto deadline = steady::now() + std::chrono::seconds(seconds + 300);
  while (bench.running() && steady::now() < deadline)
    std::this_thread::sleep_for(200ms);
  if (bench.running()) {
    bench.stop(SIGKILL);
    out.problem = "nodeflow-bench did not end (its log: " + dir + "/bench.log)";
    return out;
  }
  std::istringstream lines{test::read_file(json)};
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (ec || !v.is_object() || v.as_object().if_contains("workload") == nullptr
        || v.as_object().at("workload") != "W2")
      continue;
    const auto& o = v.as_object();
    if (!o.at("completed").as_bool()) {
      out.problem = "W2 did not complete (its log: " + dir + "/bench.log)";
      return out;
    }
    out.tasks_per_s = o.at("tasks_per_s").to_number<double>();
    auto tasks = o.at("tasks").to_number<double>();
    out.cpu_ms_per_task = tasks > 0 ? 1000
                                        * (o.at("nodeflow_cpu_s").to_number<double>()
                                           + o.at("postgres_cpu_s").to_number<double>())
                                        / tasks
                                    : 0;
    return out;
  }
  out.problem = "nodeflow-bench wrote no W2 result (its log: " + dir + "/bench.log)";
  return out;
}

row scale_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int n = ctx.nodes.size();
  std::vector<std::vector<w2_run>> runs(n); // by node count - 1
  bool clean = true, checker_ok = true;
  std::string problem;
  const auto since = now_ms();
  for (int i = 0; i < n; ++i)
    if (ctx.nodes.running(i))
      ctx.nodes.stop(i);
  // The machine's speed drifts over minutes: the counts run in alternating passes
  // (1 … n, then n … 1), so no count always runs first or last.
  std::vector<int> order;
  for (int round = 0; round < o.scale_rounds; ++round)
    for (int j = 1; j <= n; ++j)
      order.push_back(round % 2 == 0 ? j : n + 1 - j);
  int pass = 0;
  for (int k : order) {
    ++pass;
    // W2 as bench/run runs it: a database of its own for each run, so no run goes
    // on the rows the one before it left (no webhook sink: the harness's would deliver every
    // event), the nodes not through the proxy (it relays every byte on the same cores, and
    // more nodes send it more: reports forwarded between them).
    const std::string scale_db = "nodeflow_scale";
    for (int i = 0; i < n; ++i)
      if (ctx.nodes.running(i))
        ctx.nodes.stop(i);
    ctx.sql.exec("DROP DATABASE IF EXISTS \"" + scale_db + "\"");
    if (!ctx.sql.exec("CREATE DATABASE \"" + scale_db + "\""))
      throw std::runtime_error("CREATE DATABASE " + scale_db + " failed");
    const auto dsn = ctx.pg.dsn(scale_db);
    const auto migrate_log =
      std::filesystem::path{ctx.nodes.at(0).log}.parent_path() / "migrate_scale.log";
    if (std::system((o.nodeflow_bin + " migrate --dsn '" + dsn + "' >" + migrate_log.string()
                     + " 2>&1").c_str())
        != 0)
      throw std::runtime_error("nodeflow migrate of " + scale_db + " failed: "
                               + test::read_file(migrate_log.string()));
    for (int i = 0; i < k; ++i)
      ctx.nodes.start(i, "", dsn);
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * o.lease_ms));
    auto dir = std::filesystem::path{ctx.nodes.at(0).log}.parent_path()
               / ("scale" + std::to_string(k) + "-" + std::to_string(pass));
    // The same workers whatever the node count (nodeflow-bench's default grows with it):
    // only the nodes change between the runs compared.
    auto run = run_w2(ctx, dsn, k, n, o.scale_seconds, dir.string());
    if (!run.problem.empty()) {
      clean = false;
      problem = run.problem;
    }
    std::cout << k << " node(s): W2 " << run.tasks_per_s << " tasks/s " << run.problem << "\n"
              << std::flush;
    runs[k - 1].push_back(run);
    check_options check;
    check.dsn = dsn;
    check.since_ms = since;
    auto report = check_history(check);
    std::cout << report.text() << std::flush;
    checker_ok = checker_ok && report.ok();
  }
  // Back through the proxy, for the scenarios after this one.
  for (int i = 0; i < n; ++i) {
    ctx.nodes.stop(i);
    ctx.nodes.start(i);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * o.lease_ms));
  auto mean = [](const std::vector<w2_run>& v, double w2_run::*field) {
    double sum = 0;
    for (const auto& r : v)
      sum += r.*field;
    return v.empty() ? 0 : sum / v.size();
  };
  const double one = mean(runs.front(), &w2_run::tasks_per_s);
  const double ratio = one > 0 ? mean(runs.back(), &w2_run::tasks_per_s) / one : 0;
  row r;
  r.scenario = "scale";
  r.fault = "W2 (bench/README.md) started for " + std::to_string(o.scale_seconds)
            + " s on 1 … " + std::to_string(n) + " nodes of one Postgres, "
            + (o.scale_rounds > 1 ? std::to_string(o.scale_rounds)
                                      + " alternating passes (1 … n, n … 1), "
                                  : std::string{})
            + "each run on a fresh database, " + std::to_string(n)
            + " worker processes each time, no fault (the nodes not through the proxy)";
  r.bar = std::to_string(n) + " nodes ≥ 1.0 × one node";
  std::ostringstream f;
  f << std::fixed;
  for (size_t i = 0; i < runs.size(); ++i) {
    f << (i ? "; " : "") << i + 1 << " node" << (i ? "s " : " ");
    if (runs[i].size() > 1) {
      f << std::setprecision(0) << "mean " << mean(runs[i], &w2_run::tasks_per_s) << " tasks/s (";
      for (size_t j = 0; j < runs[i].size(); ++j)
        f << (j ? ", " : "") << runs[i][j].tasks_per_s;
      f << ")";
    } else {
      f << std::setprecision(0) << mean(runs[i], &w2_run::tasks_per_s) << " tasks/s";
    }
    f << ", " << std::setprecision(3) << mean(runs[i], &w2_run::cpu_ms_per_task)
      << " ms of node and Postgres CPU a task";
  }
  f << "; ratio " << std::setprecision(3) << ratio
    << (o.scale_rounds > 1 ? " of the means" : "") << "; checker "
    << (checker_ok ? "ok" : "FAIL");
  if (!problem.empty())
    f << "; " << problem;
  r.figure = f.str();
  // Throughput is judged in the long form only, where each figure rests on enough steady state.
  r.pass = clean && checker_ok && (!o.long_form || ratio >= 1.0);
  r.command = command_for("scale", "--scale-seconds " + std::to_string(o.scale_seconds)
                                       + " --scale-rounds " + std::to_string(o.scale_rounds));
  return r;
}

row run_scenario(const std::string& name, run_context& ctx) {
  if (name == "kill9")
    return kill9_scenario(ctx);
  if (name == "sigstop")
    return sigstop_scenario(ctx);
  if (name == "pg-terminate")
    return pg_terminate_scenario(ctx);
  if (name == "pg-restart")
    return pg_restart_scenario(ctx);
  if (name == "cut-after-commit")
    return cut_scenario(ctx);
  if (name == "partition")
    return partition_scenario(ctx);
  if (name == "delay-loss")
    return delay_loss_scenario(ctx);
  if (name == "clock")
    return clock_scenario(ctx);
  if (name == "poison")
    return poison_scenario(ctx);
  if (name == "scale")
    return scale_scenario(ctx);
  throw std::runtime_error("unknown scenario " + name);
}

} // namespace nf::fault
