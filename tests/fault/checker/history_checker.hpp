#pragma once

// The history checker that ends every run of the fault harness: it reads what a run left in
// the database (and the webhook sink's log) and says, rule by rule, whether nodeflow kept its
// invariants (DESIGN.md §4) through the faults. tests/fault/README.md "checker" lists what
// each rule reads.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nf::fault {

struct check_options {
  std::string dsn;
  /// workflowName -> the status every started workflow of that name must have reached (e.g. "COMPLETED").
  std::map<std::string, std::string> expected_ends;
  /// Only executions created at or after this (ms since the epoch, Postgres clock); 0 = all.
  int64_t since_ms = 0;
  /// JSON lines, one per webhook delivery the sink received, each the POST body as sent:
  /// {"eventId","type","workflowId","payload"}; empty = skip the delivery rule.
  std::string sink_log_path;
};

struct rule_result {
  std::string rule;
  int64_t checked = 0;
  int64_t violations = 0;
  std::string examples;
};

struct check_report {
  std::vector<rule_result> rules;
  bool ok() const;          // no rule has violations
  std::string text() const; // one line per rule: "PASS <rule>: <checked> checked" or "FAIL <rule>: <n> of <checked>, e.g. <examples>"
};

/// Runs every rule against `o.dsn`. Never throws: a rule that could not read what it needs
/// (no connection, a failed query, an unreadable sink log) fails with the error as its example,
/// so a run is never called clean unchecked.
check_report check_history(const check_options& o);

} // namespace nf::fault
