// Scenarios of the load itself: poisoned requests mixed into it, and throughput on one,
// two and three nodes of one Postgres. Also the scenario table.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

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

row scale_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int n = ctx.nodes.size();
  std::vector<double> rate;
  bool clean = true;
  for (int k = 1; k <= n; ++k) {
    // k nodes: the others stopped (their partitions move within a lease).
    for (int i = k; i < n; ++i)
      if (ctx.nodes.running(i))
        ctx.nodes.stop(i);
    for (int i = 0; i < k; ++i)
      if (!ctx.nodes.running(i))
        ctx.nodes.start(i);
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * o.lease_ms));
    start_plan plan;
    plan.prefix = "scale" + std::to_string(k) + "-" + std::to_string(now_ms());
    plan.count = o.scale_workflows;
    plan.fan_every = o.fan_every;
    for (int i = 0; i < k; ++i)
      plan.nodes.push_back(i);
    auto out = run_load(ctx, plan, [](load_probe&) {});
    clean = clean && out.clean();
    rate.push_back(out.acked / std::max(0.001, out.seconds));
    std::cout << k << " node(s): " << rate.back() << " workflows/s\n" << std::flush;
  }
  for (int i = 0; i < n; ++i)
    if (!ctx.nodes.running(i))
      ctx.nodes.start(i);
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * o.lease_ms));
  double ratio = rate.front() > 0 ? rate.back() / rate.front() : 0;
  row r;
  r.scenario = "scale";
  r.fault = "the harness's workload (" + std::to_string(o.scale_workflows)
            + " workflows, no fault) on 1 … " + std::to_string(n) + " nodes of one Postgres";
  r.bar = std::to_string(n) + " nodes ≥ 1.0 × one node";
  std::ostringstream f;
  f.precision(3);
  for (size_t i = 0; i < rate.size(); ++i)
    f << (i ? ", " : "") << i + 1 << " node" << (i ? "s " : " ") << rate[i] << " workflows/s";
  f << "; ratio " << ratio;
  r.figure = f.str();
  // Throughput is measured in both forms; only the long form judges it.
  r.pass = clean && (!o.long_form || ratio >= 1.0);
  r.command = command_for("scale", "--scale-workflows " + std::to_string(o.scale_workflows));
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
