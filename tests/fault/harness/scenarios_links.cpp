// Faults of Postgres and of the links through the proxy: backends terminated, an
// immediate restart, links cut right after a COMMIT, nodes partitioned from each other,
// delay and loss.

#include <algorithm>
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

// A plan of the background load whose starts spread over `span_ms`.
start_plan spread_plan(const options& o, const std::string& name, int64_t span_ms) {
  start_plan plan;
  plan.prefix = name + "-" + std::to_string(now_ms());
  plan.count = o.load_workflows;
  plan.fan_every = o.fan_every;
  plan.pace = std::chrono::milliseconds(span_ms * o.starters / std::max(1, o.load_workflows));
  return plan;
}

std::string lost_text(const load_outcome& out) {
  std::ostringstream f;
  f << "acknowledged starts lost " << out.lost_starts << ", completions lost "
    << out.lost_completions << ", duplicates " << out.dup_accepted + out.dup_db << ", not ended "
    << out.not_ended << ", checker " << out.checker_word();
  // Refusals fail a row too: a request answered with an error a client would not retry.
  if (out.refused_starts + out.rejected + out.abandoned_starts > 0)
    f << "; refused: " << out.refused_starts << " starts, " << out.rejected << " reports, "
      << out.abandoned_starts << " starts never answered (`"
      << (out.rejected_example.empty() ? out.refused_example : out.rejected_example).substr(0, 120)
      << "`)";
  return f.str();
}

} // namespace

row pg_terminate_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int64_t every_ms = o.long_form ? 200 : 300;
  auto plan = spread_plan(o, "pg-terminate", every_ms * o.terminates);
  int64_t terminated = 0;
  auto out = run_load(ctx, plan, [&](load_probe&) {
    for (int i = 0; i < o.terminates; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
      terminated += ctx.pg.terminate_backends(ctx.db);
    }
  });
  row r;
  r.scenario = "pg-terminate";
  r.fault = std::to_string(o.terminates) + " × pg_terminate_backend of every engine backend, "
            + std::to_string(every_ms) + " ms apart, under load";
  r.bar = "0 acknowledged writes lost";
  r.figure = std::to_string(terminated) + " backends terminated; " + lost_text(out);
  r.pass = out.clean() && terminated > 0;
  r.command = command_for("pg-terminate", "--terminates " + std::to_string(o.terminates));
  return r;
}

row pg_restart_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  auto plan = spread_plan(o, "pg-restart", 3000LL * o.pg_restarts);
  std::vector<double> first_commit;
  auto out = run_load(ctx, plan, [&](load_probe& p) {
    for (int i = 0; i < o.pg_restarts; ++i) {
      std::this_thread::sleep_for(1s);
      ctx.pg.restart_immediate();
      auto back = steady::now();
      // The first commit after Postgres is back: a start acknowledged by a node.
      client c{ctx.nodes.client_opts(i % ctx.nodes.size(), 2s)};
      msg::start_request req;
      req.workflow_name = "fh_chain";
      req.input_json = "{\"n\": 0}";
      req.idempotency_key = plan.prefix + "-probe-" + std::to_string(i);
      req.correlation_id = plan.prefix;
      double took = -1;
      while (since(back) < 60) {
        auto rep = c.start(req);
        if (rep) {
          took = since(back);
          p.extra_acks[rep->workflow_id] = now_ms();
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
      first_commit.push_back(took < 0 ? 60.0 : took);
      std::cout << "Postgres restarted (-m immediate): first commit after "
                << seconds_text(first_commit.back()) << "\n" << std::flush;
      // The harness's own connection died with the server.
      ctx.sql = ctx.pg.connect(ctx.db);
    }
  });
  double worst = first_commit.empty() ? 0 : *std::max_element(first_commit.begin(), first_commit.end());
  row r;
  r.scenario = "pg-restart";
  r.fault = std::to_string(o.pg_restarts) + " × Postgres `pg_ctl -m immediate` restart under load";
  r.bar = "0 acknowledged writes lost, first commit ≤ 5 s after Postgres is back";
  r.figure = "first commit after " + seconds_text(worst) + " at worst; " + lost_text(out);
  // The time to the first commit is measured in both forms; only the long form judges it.
  r.pass = out.clean() && first_commit.size() == static_cast<size_t>(o.pg_restarts)
           && (!o.long_form || worst <= 5.0);
  r.command = command_for("pg-restart", "--pg-restarts " + std::to_string(o.pg_restarts));
  return r;
}

row cut_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  auto plan = spread_plan(o, "cut-after-commit", 100LL * o.cuts);
  const int n = ctx.nodes.size();
  int64_t cuts = 0;
  auto link_cuts = [&](int i) { return ctx.proxy.stats(ctx.nodes.at(i).pg_link)["cuts"]; };
  auto out = run_load(ctx, plan, [&](load_probe&) {
    // Each link armed for one cut at a time, armed again once it cut, so the cuts
    // spread over the nodes and the run (a node's heartbeats commit even when the load
    // is done). `cut-after-commit` sets a link's pending cuts, it does not add.
    std::vector<int64_t> base(static_cast<size_t>(n)), armed_at(static_cast<size_t>(n), -1);
    for (int i = 0; i < n; ++i)
      base[static_cast<size_t>(i)] = link_cuts(i);
    auto t = steady::now();
    while (since(t) < 30.0 + o.cuts * 0.5) {
      std::vector<int64_t> now(static_cast<size_t>(n));
      int64_t pending = 0;
      cuts = 0;
      for (int i = 0; i < n; ++i) {
        auto k = static_cast<size_t>(i);
        now[k] = link_cuts(i);
        cuts += now[k] - base[k];
        pending += armed_at[k] >= 0 && now[k] == armed_at[k] ? 1 : 0;
      }
      if (cuts >= o.cuts)
        break;
      for (int i = 0; i < n; ++i) {
        auto k = static_cast<size_t>(i);
        if ((armed_at[k] < 0 || now[k] > armed_at[k]) && cuts + pending < o.cuts) {
          ctx.proxy.cut_after_commit(ctx.nodes.at(i).pg_link, 1);
          armed_at[k] = now[k];
          ++pending;
        } else if (armed_at[k] >= 0 && now[k] > armed_at[k]) {
          armed_at[k] = -1; // cut, and no more wanted from this link
        }
      }
      std::this_thread::sleep_for(20ms);
    }
    for (int i = 0; i < n; ++i) // cuts armed but not taken are withdrawn
      ctx.proxy.cut_after_commit(ctx.nodes.at(i).pg_link, 0);
    cuts = 0;
    for (int i = 0; i < n; ++i)
      cuts += link_cuts(i) - base[static_cast<size_t>(i)];
  });
  row r;
  r.scenario = "cut-after-commit";
  r.fault = std::to_string(o.cuts) + " × a node's Postgres link cut right after a COMMIT is sent";
  r.bar = "0 acknowledged starts or completions lost";
  r.figure = std::to_string(cuts) + " links cut; " + lost_text(out);
  r.pass = out.clean() && cuts >= o.cuts;
  r.command = command_for("cut-after-commit", "--cuts " + std::to_string(o.cuts));
  return r;
}

row partition_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  auto plan = spread_plan(o, "partition", 1000LL * (o.partition_s + 2));
  auto& a = ctx.nodes.at(0);
  auto& b = ctx.nodes.at(1);
  auto linked = [&](const node_proc& from, const node_proc& to) {
    auto s = ctx.proxy.sources(to.door_link);
    return std::find(s.begin(), s.end(), from.source()) != s.end();
  };
  bool had_link = false;
  auto out = run_load(ctx, plan, [&](load_probe&) {
    std::this_thread::sleep_for(1s);
    // Each node's connections to the other's door are held (peers reach a node only
    // through its door link, each from its own address); node 2 still reaches both.
    had_link = linked(a, b) || linked(b, a);
    ctx.proxy.set(b.door_link, "blackhole from " + a.source());
    ctx.proxy.set(a.door_link, "blackhole from " + b.source());
    std::cout << "nodes 0 and 1 partitioned for " << o.partition_s << " s\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::seconds(o.partition_s));
    ctx.proxy.set(a.door_link, "pass");
    ctx.proxy.set(b.door_link, "pass");
  });
  // The longest a task waited: for a worker after it was first scheduled (retries
  // included), or for the decider to schedule a chain's next step after one ended.
  auto wait = ctx.number(
    "WITH t AS (SELECT te.\"workflowId\", te.\"refName\", min(te.\"scheduledAt\") AS \"first\", "
    "max(te.\"startedAt\") FILTER (WHERE te.\"status\" = 'COMPLETED') AS \"took\", "
    "max(te.\"endedAt\") FILTER (WHERE te.\"status\" = 'COMPLETED') AS \"done\" "
    "FROM \"TaskExecutions\" te JOIN \"WorkflowExecutions\" w ON w.\"id\" = te.\"workflowId\" "
    "WHERE w.\"correlationId\" = '" + plan.prefix + "' AND te.\"taskType\"::text = 'SIMPLE' "
    "GROUP BY 1, 2) SELECT greatest((SELECT max(extract(epoch FROM \"took\" - \"first\")) FROM t), "
    "(SELECT max(extract(epoch FROM b.\"first\" - a.\"done\")) FROM t a JOIN t b ON "
    "b.\"workflowId\" = a.\"workflowId\" AND a.\"refName\" ~ '^s[0-9]$' AND b.\"refName\" = "
    "'s' || (substr(a.\"refName\", 2)::int + 1)::text))::float8 AS \"n\"");
  double bar = o.lease_ms / 1000.0 + 5;
  row r;
  r.scenario = "partition";
  r.fault = "nodes 0 and 1 unable to reach each other for " + std::to_string(o.partition_s)
            + " s (each one's connections to the other's door black-holed; node 2 reaches "
              "both) under load";
  r.bar = "no workflow waits longer than lease TTL + 5 s (" + seconds_text(bar) + ")";
  r.figure = "longest wait " + seconds_text(wait) + "; " + lost_text(out);
  if (!had_link)
    r.figure += "; nodes 0 and 1 had no link through the proxy to cut";
  // The longest wait is measured in both forms; only the long form judges it.
  r.pass = out.clean() && had_link && (!o.long_form || wait <= bar);
  r.command = command_for("partition", "--partition-s " + std::to_string(o.partition_s));
  return r;
}

row delay_loss_scenario(run_context& ctx) {
  const auto& o = ctx.opts;
  const int span_s = o.long_form ? 30 : 6;
  auto plan = spread_plan(o, "delay-loss", 1000LL * span_s);
  auto loss = std::to_string(o.loss_pct);
  const int n = ctx.nodes.size();
  auto out = run_load(ctx, plan, [&](load_probe&) {
    // Delay on node 0's Postgres link and node 1's door, loss on node 1's Postgres
    // link and the last node's door.
    ctx.proxy.set(ctx.nodes.at(0).pg_link,
                  "delay " + std::to_string(o.delay_ms) + " " + std::to_string(o.delay_ms / 2));
    ctx.proxy.set(ctx.nodes.at(1).door_link, "delay " + std::to_string(o.delay_ms));
    ctx.proxy.set(ctx.nodes.at(1).pg_link, "loss " + loss);
    ctx.proxy.set(ctx.nodes.at(n - 1).door_link, "loss " + loss);
    std::this_thread::sleep_for(std::chrono::seconds(span_s));
    for (int i = 0; i < n; ++i) {
      ctx.proxy.set(ctx.nodes.at(i).pg_link, "pass");
      ctx.proxy.set(ctx.nodes.at(i).door_link, "pass");
    }
  });
  row r;
  r.scenario = "delay-loss";
  r.fault = std::to_string(o.delay_ms) + " ms delay (± " + std::to_string(o.delay_ms / 2)
            + ") and " + loss + "% loss on Postgres and door links for "
            + std::to_string(span_s) + " s under load";
  r.bar = "0 acknowledged writes lost, every workflow ends";
  r.figure = "all ended in " + seconds_text(out.seconds) + "; " + lost_text(out);
  r.pass = out.clean();
  r.command = command_for("delay-loss", "--delay-ms " + std::to_string(o.delay_ms)
                                          + " --loss-pct " + loss);
  return r;
}

} // namespace nf::fault
