#pragma once

// The scenarios: each runs the workload under one kind of fault and answers one row of
// the reliability table (docs/reliability.md): the fault, its bar, what was measured,
// whether the bar was met (every run also passes the history checker), and the command
// that runs it again.

#include <string>

#include "tests/fault/harness/run_context.hpp"

namespace nf::fault {

struct row {
  std::string scenario;
  std::string fault;
  std::string bar;
  std::string figure;
  bool pass = false;
  std::string command;
};

/// Runs scenario `name` (one of scenario_names()).
row run_scenario(const std::string& name, run_context& ctx);

// One per file group: scenarios_nodes.cpp (processes and clocks), scenarios_links.cpp
// (Postgres and the links), scenarios_load.cpp (poisoned input, scale).
row kill9_scenario(run_context& ctx);
row sigstop_scenario(run_context& ctx);
row clock_scenario(run_context& ctx);
row pg_terminate_scenario(run_context& ctx);
row pg_restart_scenario(run_context& ctx);
row cut_scenario(run_context& ctx);
row partition_scenario(run_context& ctx);
row delay_loss_scenario(run_context& ctx);
row poison_scenario(run_context& ctx);
row scale_scenario(run_context& ctx);

/// `build/tests/fault/nodeflow-fault-harness --long --scenario NAME` and `flags`.
std::string command_for(const std::string& name, const std::string& flags);
/// Shortest form of a number of seconds ("3.42 s").
std::string seconds_text(double s);

} // namespace nf::fault
