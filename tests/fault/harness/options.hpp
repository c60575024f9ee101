#pragma once

// The harness's command line: which scenarios run and how large each is. `--short`
// sizes everything to finish within three minutes on two cores; `--long` takes the
// reliability bars' sizes (docs/reliability.md). Any size flag given overrides either.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nf::fault {

struct options {
  bool long_form = false;
  std::vector<std::string> scenarios; ///< empty = every scenario of the form
  std::string report_path;            ///< --report: the markdown table written after a run
  std::string nodeflow_bin;
  std::string proxy_bin;
  std::string bench_bin;  ///< nodeflow-bench: the scale scenario's W2
  std::string source_dir; ///< the repository: scripts/pg18.sh
  bool keep = false;      ///< keep the scratch directory (logs, database) after the run
  bool resized = false;   ///< a size flag was given: not the form's own sizes

  int nodes = 3;
  int lease_ms = 3000;          ///< membership.lease_ms: the lease TTL of the bars
  int response_timeout_s = 4;   ///< the step task's responseTimeoutSeconds
  int workflows = 100;          ///< the kill scenario's workflows: chains and fan-outs
  int load_workflows = 60;      ///< every other scenario's background load
  int fan_width = 50;           ///< branches of a fan-out
  int fan_every = 10;           ///< one workflow in this many is a fan-out
  int kills = 2;                ///< kill -9 + restart, spread over the nodes
  int pg_restarts = 1;          ///< Postgres `-m immediate` restarts
  int terminates = 3;           ///< pg_terminate_backend rounds
  int cuts = 20;                ///< links cut right after a COMMIT
  int partition_s = 8;          ///< seconds two nodes cannot reach each other
  double stop_leases = 3.0;     ///< SIGSTOP length in lease TTLs
  int clock_shift_min = 15;     ///< the faked clock's offset (both signs in the long form)
  int wait_s = 5;               ///< WAIT duration of the clock scenario's workflows
  double poison_pct = 1.0;      ///< share of poisoned starts
  int scale_seconds = 10;       ///< W2's starts per node count in the scale scenario
  int scale_rounds = 1;         ///< the scale scenario's passes over the counts, alternating
  int starters = 8;             ///< threads starting workflows
  int workers = 8;              ///< threads polling and reporting
  int delay_ms = 50;            ///< the delay scenario's link delay
  int loss_pct = 1;             ///< the delay scenario's link loss, percent
};

/// Parses argv; on a bad flag prints why and the usage, and returns nullopt.
std::optional<options> parse_options(int argc, char** argv);

/// Every scenario name, in the order a full run takes them.
const std::vector<std::string>& scenario_names();

} // namespace nf::fault
