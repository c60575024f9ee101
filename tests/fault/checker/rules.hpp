#pragma once

// The rules of the history checker, one function each (one file per topic), and what they
// share: a rule's tally and the read that turns a failed query into a failed rule.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "store/pg/connection.hpp"
#include "tests/fault/checker/history_checker.hpp"

namespace nf::fault::detail {

/// Examples kept per rule: enough to start looking, short enough for one line.
constexpr int max_examples = 3;

/// One rule's count of what it checked and what broke it.
class tally {
public:
  explicit tally(std::string rule) { r_.rule = std::move(rule); }
  void checked(int64_t n = 1) { r_.checked += n; }
  void violation(const std::string& example);
  /// The rule could not read what it needs: it fails, naming why, rather than pass unchecked.
  void could_not_check(const std::string& why);
  rule_result done() const { return r_; }

private:
  rule_result r_;
};

/// Runs `sql` (ad hoc, parameterised); on an error notes it on `t` and returns nullopt.
std::optional<store::result> query(store::connection& conn, tally& t, const std::string& sql,
                                   const store::params& p);

/// The `since_ms` bound on an execution's "startedAt", for statements whose $1 is since_ms.
constexpr const char* since_sql = "to_timestamp($1::bigint / 1000.0)";

/// Milliseconds since the epoch of a timestamptz expression, floored, as a statement spells it.
std::string ms_of(const std::string& column);

rule_result check_ends(store::connection& conn, const check_options& o);
rule_result check_one_accepted_completion(store::connection& conn, const check_options& o);
rule_result check_no_attempt_after_completion(store::connection& conn, const check_options& o);
rule_result check_gap_free_seqs(store::connection& conn, const check_options& o);
rule_result check_no_early_timer(store::connection& conn, const check_options& o);
rule_result check_outbox_delivered(store::connection& conn, const check_options& o);
rule_result check_rows_in_right_partitions(store::connection& conn, const check_options& o);

} // namespace nf::fault::detail
