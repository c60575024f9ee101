#include "tests/fault/harness/run_context.hpp"

#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "proto/errors.hpp"
#include "tests/fault/checker/history_checker.hpp"

namespace nf::fault {

namespace {

using namespace std::chrono_literals;

// Correlation ids and keys are the harness's own words ([a-z0-9-]), safe in a literal.
std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

} // namespace

int64_t run_context::count(const std::string& text) {
  auto r = sql.exec(text);
  if (!r)
    throw std::runtime_error("SQL failed: " + message_of(r.error()) + "\n" + text);
  auto col = r->column_named("n");
  return r->rows() == 0 || r->is_null(0, col) ? 0 : r->i64(0, col);
}

double run_context::number(const std::string& text) {
  auto r = sql.exec(text);
  if (!r)
    throw std::runtime_error("SQL failed: " + message_of(r.error()) + "\n" + text);
  auto col = r->column_named("n");
  return r->rows() == 0 || r->is_null(0, col) ? 0.0 : std::stod(r->str(0, col));
}

int run_context::partitions() {
  return static_cast<int>(count(R"(SELECT "partitionCount" AS "n" FROM "ClusterSettings")"));
}

std::vector<client_options> run_context::clients(std::chrono::milliseconds timeout,
                                                 std::vector<int> only) {
  if (only.empty())
    for (int i = 0; i < nodes.size(); ++i)
      only.push_back(i);
  std::vector<client_options> out;
  for (int i : only)
    out.push_back(nodes.client_opts(i, timeout));
  return out;
}

bool load_outcome::clean() const {
  return lost_starts == 0 && not_ended == 0 && lost_completions == 0 && dup_accepted == 0
         && dup_db == 0 && rejected == 0 && refused_starts == 0 && abandoned_starts == 0
         && checker_ok;
}

std::string load_outcome::checker_word() const {
  if (checker_ok)
    return "ok";
  // The report's `FAIL <rule>: <n> of <checked>, e.g. …` lines, up to the examples.
  std::string rules;
  std::istringstream in{checker_text};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("FAIL ", 0) != 0)
      continue;
    auto cut = line.find(", e.g.");
    auto rule = line.substr(5, cut == std::string::npos ? std::string::npos : cut - 5);
    rules += (rules.empty() ? "" : "; ") + rule.substr(0, 120);
  }
  return "FAIL (" + rules + ")";
}

std::string load_outcome::summary() const {
  std::ostringstream s;
  s << prefix << ": " << acked << " acknowledged starts in " << seconds << " s; lost starts "
    << lost_starts << ", not ended " << not_ended << ", lost completions " << lost_completions
    << (lost_completion_examples.empty() ? "" : " (" + lost_completion_examples + ")")
    << ", duplicate completions " << dup_accepted << " (workers) / " << dup_db
    << " (database), stale reports refused " << lease_lost << ", other refusals " << rejected
    << (rejected_example.empty() ? "" : " (" + rejected_example + ")") << ", starts refused "
    << refused_starts << (refused_example.empty() ? "" : " (" + refused_example + ")")
    << ", starts never answered " << abandoned_starts << ", checker "
    << (checker_ok ? "ok" : "FAIL");
  return s.str();
}

bool run_checker(run_context& ctx, int64_t since_ms, std::string& text) {
  // The relay delivers after the commit: give it the time to drain the outbox, so
  // `outbox_delivered` judges deliveries, not their lag.
  for (int i = 0; i < 600; ++i) {
    if (ctx.count(R"(SELECT count(*) AS "n" FROM "OutboxEvents"
                      WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL)")
        == 0)
      break;
    std::this_thread::sleep_for(100ms);
  }
  check_options o;
  o.dsn = ctx.pg.dsn(ctx.db);
  o.expected_ends = expected_ends();
  o.since_ms = since_ms;
  o.sink_log_path = ctx.sink.log_path();
  auto report = check_history(o);
  text = report.text();
  std::cout << text << std::flush;
  return report.ok();
}

load_outcome run_load(run_context& ctx, start_plan plan,
                      const std::function<void(load_probe&)>& fault) {
  load_outcome out;
  out.prefix = plan.prefix;
  out.started_ms = now_ms();
  auto t0 = std::chrono::steady_clock::now();
  // Workers on the plan's nodes; the starter knows every node, as plan.nodes indexes them.
  workers work{ctx.clients(10s, plan.nodes), ctx.opts.workers};
  starter starts{ctx.clients(10s), ctx.opts.starters};
  starts.run(plan, std::chrono::seconds(300));
  load_probe probe{starts, work, {}};
  fault(probe);
  starts.wait();

  auto acked = starts.acknowledged();
  for (auto& kv : probe.extra_acks)
    acked.insert(kv);
  out.acked = static_cast<int64_t>(acked.size());
  out.acked_at = acked;
  const auto of_run = "\"correlationId\" = " + quoted(plan.prefix);
  const std::string terminal = "('COMPLETED','FAILED','TERMINATED','TIMED_OUT')";
  // Every acknowledged workflow must end; the deadline is generous (retries after
  // a lost lease wait out responseTimeoutSeconds).
  auto deadline = std::chrono::steady_clock::now() + plan.end_within;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ctx.count("SELECT count(*) AS \"n\" FROM \"WorkflowExecutions\" WHERE " + of_run
                  + " AND \"status\"::text IN " + terminal)
        >= out.acked)
      break;
    std::this_thread::sleep_for(200ms);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  work.stop();

  // What the database holds of the run.
  std::map<std::string, std::string> status_of;
  {
    auto r = ctx.sql.exec("SELECT \"id\"::text AS \"id\", \"status\"::text AS \"status\" FROM "
                          "\"WorkflowExecutions\" WHERE " + of_run);
    if (!r)
      throw std::runtime_error("reading the run's workflows: " + message_of(r.error()));
    for (int i = 0; i < r->rows(); ++i)
      status_of[r->str(i, r->column_named("id"))] = r->str(i, r->column_named("status"));
  }
  for (const auto& [id, at] : acked) {
    auto it = status_of.find(id);
    if (it == status_of.end())
      ++out.lost_starts;
    else if (it->second == "RUNNING" || it->second == "PAUSED")
      ++out.not_ended;
  }
  std::set<std::string> completed;
  {
    auto r = ctx.sql.exec(
      "SELECT t.\"id\"::text AS \"id\" FROM \"TaskExecutions\" t JOIN \"WorkflowExecutions\" w "
      "ON w.\"id\" = t.\"workflowId\" WHERE w." + of_run + " AND t.\"status\" = 'COMPLETED'");
    if (!r)
      throw std::runtime_error("reading the run's tasks: " + message_of(r.error()));
    for (int i = 0; i < r->rows(); ++i)
      completed.insert(r->str(i, 0));
  }
  for (const auto& [identity, ids] : work.accepted()) {
    // The workers poll a shared queue: a task of an earlier run's workflow (one a scenario
    // that stopped left running) is not this run's to account for.
    if (status_of.count(std::get<0>(identity)) == 0)
      continue;
    out.dup_accepted += ids.size() > 1 ? 1 : 0;
    for (const auto& id : ids)
      if (completed.count(id) == 0 && ++out.lost_completions <= 3)
        out.lost_completion_examples += (out.lost_completion_examples.empty() ? "" : "; ") + id
                                        + " (" + std::get<0>(identity) + ", "
                                        + std::get<1>(identity) + ", "
                                        + std::to_string(std::get<2>(identity)) + ")";
  }
  out.dup_db = ctx.count(
    "SELECT count(*) AS \"n\" FROM (SELECT 1 FROM \"TaskExecutions\" t JOIN "
    "\"WorkflowExecutions\" w ON w.\"id\" = t.\"workflowId\" WHERE w." + of_run
    + " AND t.\"status\" = 'COMPLETED' GROUP BY t.\"workflowId\", t.\"refName\", "
      "t.\"iteration\" HAVING count(*) > 1) d");
  out.lease_lost = work.lease_lost();
  out.rejected = work.rejected();
  out.rejected_example = work.rejected_example();
  auto refused = starts.refused();
  out.refused_starts = static_cast<int64_t>(refused.size());
  if (!refused.empty())
    out.refused_example = refused.begin()->first + ": " + refused.begin()->second;
  out.abandoned_starts = starts.abandoned();
  out.checker_ok = run_checker(ctx, out.started_ms - plan.check_lookback_ms, out.checker_text);
  std::cout << out.summary() << "\n" << std::flush;
  return out;
}

} // namespace nf::fault
