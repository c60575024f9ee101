// Faults of the node processes: kill -9 with restarts, SIGSTOP beyond the lease, and a
// node whose clock is off.

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

double since(steady::time_point t) {
  return std::chrono::duration<double>(steady::now() - t).count();
}

// The node ids a node's incarnations registered under its advertised address.
std::string node_ids_of(run_context& ctx, int idx) {
  auto r = ctx.sql.exec("SELECT string_agg(quote_literal(\"id\"::text), ',') AS \"ids\" FROM "
                        "\"Nodes\" WHERE \"address\" = '" + ctx.nodes.at(idx).advertise() + "'");
  if (!r || r->rows() == 0 || r->is_null(0, 0))
    throw std::runtime_error("no \"Nodes\" row has node " + std::to_string(idx)
                             + "'s address " + ctx.nodes.at(idx).advertise());
  return r->str(0, 0);
}

// Tasks a plan's workflows run (chains of 10, fan-outs of fan_width).
int64_t tasks_of(const options& o, int count) {
  int64_t fans = count / o.fan_every;
  return (count - fans) * 10 + fans * o.fan_width;
}

} // namespace

std::string seconds_text(double s) {
  std::ostringstream out;
  out.precision(s < 10 ? 3 : 4);
  out << s << " s";
  return out.str();
}

row kill9_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int partitions = ctx.partitions();
  std::vector<double> takeovers;
  start_plan plan;
  plan.prefix = "kill9-" + std::to_string(now_ms());
  plan.count = o.workflows;
  plan.fan_every = o.fan_every;
  const auto tasks = tasks_of(o, o.workflows);
  auto out = run_load(ctx, plan, [&](load_probe& p) {
    for (int k = 0; k < o.kills; ++k) {
      // Kills spread over the run: each after a further share of the tasks is done.
      auto want = tasks * (k + 1) / (o.kills + 1);
      auto t = steady::now();
      while (p.work.accepted_count() < want && since(t) < 60)
        std::this_thread::sleep_for(50ms);
      int victim = k % ctx.nodes.size();
      auto ids = node_ids_of(ctx, victim);
      auto killed = steady::now();
      ctx.nodes.kill9(victim);
      // Taken over: every partition leased, live, by another node.
      double took = -1;
      while (since(killed) < 60) {
        if (ctx.count("SELECT count(*) AS \"n\" FROM \"PartitionLeases\" WHERE \"expiresAt\" > "
                      "now() AND \"nodeId\"::text NOT IN (" + ids + ")")
            >= partitions) {
          took = since(killed);
          break;
        }
        std::this_thread::sleep_for(50ms);
      }
      takeovers.push_back(took < 0 ? 60.0 : took);
      std::cout << "kill -9 of node " << victim << ": partitions taken over in "
                << seconds_text(takeovers.back()) << "\n" << std::flush;
      ctx.nodes.start(victim);
    }
  });
  std::sort(takeovers.begin(), takeovers.end());
  double p99 = takeovers.empty()
                 ? 0
                 : takeovers[static_cast<size_t>(std::ceil(0.99 * takeovers.size())) - 1];
  double bar = o.lease_ms / 1000.0 + 2;
  row r;
  r.scenario = "kill9";
  r.fault = std::to_string(o.kills) + " × kill -9 spread over " + std::to_string(ctx.nodes.size())
            + " nodes, each restarted; " + std::to_string(o.workflows) + " workflows";
  r.bar = "0 lost, 0 duplicate accepted completions, 0 history gaps, takeover p99 ≤ lease TTL + 2 s ("
          + seconds_text(bar) + ")";
  std::ostringstream f;
  f << "lost starts " << out.lost_starts << ", lost completions " << out.lost_completions
    << ", duplicates " << out.dup_accepted + out.dup_db << ", not ended " << out.not_ended
    << ", checker " << out.checker_word() << "; takeover p99 "
    << seconds_text(p99) << " (max of " << takeovers.size() << ")";
  r.figure = f.str();
  // Takeover time is measured in both forms; only the long form's report judges it.
  r.pass = out.clean() && takeovers.size() == static_cast<size_t>(o.kills)
           && (!o.long_form || p99 <= bar);
  r.command = command_for("kill9", "--workflows " + std::to_string(o.workflows) + " --kills "
                                     + std::to_string(o.kills));
  return r;
}

row sigstop_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int victim = 1 % ctx.nodes.size();
  const auto stop_ms = static_cast<int64_t>(o.stop_leases * o.lease_ms);
  start_plan plan;
  plan.prefix = "sigstop-" + std::to_string(now_ms());
  plan.count = o.load_workflows;
  plan.fan_every = o.fan_every;
  // Starts spread over the pause, so the load runs across it.
  plan.pace = std::chrono::milliseconds(stop_ms * o.starters / std::max(1, o.load_workflows));
  // The stopped node's own count of the writes its partition fence refused (epoch
  // fencing): -1 when /metrics cannot be read.
  const std::string counter = "nodeflow_stale_writes_refused_total";
  const int64_t metric_before = ctx.nodes.metric_sum(victim, counter);
  auto out = run_load(ctx, plan, [&](load_probe& p) {
    auto t = steady::now();
    while (p.work.accepted_count() < 20 && since(t) < 20)
      std::this_thread::sleep_for(20ms);
    ctx.nodes.pause(victim);
    std::cout << "SIGSTOP node " << victim << " for " << stop_ms << " ms\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(stop_ms));
    ctx.nodes.resume(victim);
    // Its writes after waking are the stale ones: give them a lease to be tried.
    std::this_thread::sleep_for(std::chrono::milliseconds(o.lease_ms));
  });
  const int64_t metric_after = ctx.nodes.metric_sum(victim, counter);
  const bool metric_seen = metric_before >= 0 && metric_after >= 0;
  const int64_t stale_nodes = metric_seen ? metric_after - metric_before : 0;
  row r;
  r.scenario = "sigstop";
  r.fault = "SIGSTOP of node " + std::to_string(victim) + " for "
            + std::to_string(o.stop_leases).substr(0, 3) + " × lease TTL ("
            + std::to_string(stop_ms) + " ms) under load, then SIGCONT";
  r.bar = "every stale write refused (count shown, > 0), 0 duplicates";
  std::ostringstream f;
  f << "stale writes refused: " << out.lease_lost << " worker reports (`lease lost`) + "
    << stale_nodes << " node writes (node " << victim << "'s " << counter
    << (metric_seen ? "" : ": /metrics unreadable") << "); duplicates " << out.dup_accepted + out.dup_db << ", lost "
    << out.lost_starts + out.lost_completions << ", checker " << out.checker_word();
  r.figure = f.str();
  // The count is shown; the long form's bar also wants it above 0. A short run's pause
  // may fall where the node had nothing to write, so there it is correctness only.
  r.pass = out.clean() && (!o.long_form || (metric_seen && out.lease_lost + stale_nodes > 0));
  r.command = command_for("sigstop", "--stop-leases " + std::to_string(o.stop_leases).substr(0, 3));
  return r;
}

row clock_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int victim = ctx.nodes.size() - 1;
  std::vector<std::string> shifts{"+" + std::to_string(o.clock_shift_min) + "m"};
  if (o.long_form)
    shifts.push_back("-" + std::to_string(o.clock_shift_min) + "m");
  int64_t early = 0, checked = 0;
  double skew_max = 0, wait_min = 1e9;
  bool clean = true;
  std::string checks;
  for (const auto& shift : shifts) {
    ctx.nodes.stop(victim);
    ctx.nodes.start(victim, shift);
    std::cout << "node " << victim << " runs with its clock " << shift << "\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(o.lease_ms));
    start_plan plan;
    plan.prefix = "clock-" + std::to_string(now_ms());
    plan.count = std::max(10, o.load_workflows / 2);
    plan.workflow = "fh_wait";
    plan.nodes = {victim};
    // Behind: its executions are stamped before the run began (earlier rows come in too).
    plan.check_lookback_ms = shift[0] == '-' ? (o.clock_shift_min + 1) * 60000LL : 0;
    auto out = run_load(ctx, plan, [](load_probe&) {});
    clean = clean && out.clean();
    checks += (checks.empty() ? "" : "; ") + shift + ": checker " + out.checker_word();
    // A timer fired early when the step after the WAIT was scheduled sooner than the
    // WAIT's duration after the start was acknowledged (less the answer's latency).
    auto r = ctx.sql.exec(
      "SELECT w.\"id\"::text AS \"id\", (extract(epoch FROM w.\"startedAt\") * 1000)::bigint AS "
      "\"started\", (SELECT (extract(epoch FROM min(t.\"scheduledAt\")) * 1000)::bigint FROM "
      "\"TaskExecutions\" t WHERE t.\"workflowId\" = w.\"id\" AND t.\"refName\" = 'after') AS "
      "\"after\" FROM \"WorkflowExecutions\" w WHERE w.\"correlationId\" = '" + plan.prefix + "'");
    if (!r)
      throw std::runtime_error("reading the clock scenario's workflows");
    for (int i = 0; i < r->rows(); ++i) {
      auto it = out.acked_at.find(r->str(i, 0));
      if (it == out.acked_at.end())
        continue;
      ++checked;
      double skew = std::abs(static_cast<double>(r->i64(i, 1) - it->second)) / 1000.0;
      skew_max = std::max(skew_max, skew);
      if (!r->is_null(i, 2)) {
        double waited = static_cast<double>(r->i64(i, 2) - it->second) / 1000.0;
        wait_min = std::min(wait_min, waited);
        early += waited < o.wait_s - 0.25 ? 1 : 0;
      }
    }
    ctx.nodes.stop(victim);
    ctx.nodes.start(victim);
  }
  row r;
  r.scenario = "clock";
  r.fault = "node " + std::to_string(victim) + "'s clock " + std::to_string(o.clock_shift_min)
            + " minutes " + (o.long_form ? "ahead, then behind" : "ahead")
            + " (libfaketime); WAIT " + std::to_string(o.wait_s) + " s workflows started through it";
  r.bar = "no timer fires early, rows land in the right partitions";
  std::ostringstream f;
  f << early << " of " << checked << " timers early (shortest wait "
    << seconds_text(wait_min > 1e8 ? 0 : wait_min) << "); startedAt off the true time by at most "
    << seconds_text(skew_max) << "; " << checks;
  r.figure = f.str();
  r.pass = clean && checked > 0 && early == 0 && skew_max < 60;
  r.command = command_for("clock", "--clock-shift-min " + std::to_string(o.clock_shift_min));
  return r;
}

} // namespace nf::fault
