#include "tests/fault/checker/history_checker.hpp"

#include <functional>
#include <sstream>
#include <utility>

#include "proto/errors.hpp"
#include "tests/fault/checker/rules.hpp"

namespace nf::fault {

namespace detail {

void tally::violation(const std::string& example) {
  if (r_.violations < max_examples) {
    // One line per rule: a server message's line breaks become spaces.
    std::string flat;
    for (char c : example) {
      bool space = c == '\n' || c == '\r' || c == '\t';
      if (!space)
        flat += c;
      else if (!flat.empty() && flat.back() != ' ')
        flat += ' ';
    }
    r_.examples += (r_.examples.empty() ? "" : "; ") + flat;
  }
  ++r_.violations;
}

void tally::could_not_check(const std::string& why) {
  ++r_.checked; // the read itself, so the line says "1 of 1"
  violation("could not check: " + why);
}

std::optional<store::result> query(store::connection& conn, tally& t, const std::string& sql,
                                   const store::params& p) {
  auto r = conn.exec(sql, p);
  if (!r) {
    t.could_not_check(message_of(r.error()));
    return std::nullopt;
  }
  return std::move(*r);
}

std::string ms_of(const std::string& column) {
  return "floor(extract(epoch FROM " + column + ") * 1000)::bigint";
}

} // namespace detail

bool check_report::ok() const {
  for (const auto& r : rules)
    if (r.violations > 0)
      return false;
  return true;
}

std::string check_report::text() const {
  std::ostringstream out;
  for (const auto& r : rules) {
    if (r.violations == 0)
      out << "PASS " << r.rule << ": " << r.checked << " checked\n";
    else
      out << "FAIL " << r.rule << ": " << r.violations << " of " << r.checked << ", e.g. "
          << r.examples << "\n";
  }
  return out.str();
}

check_report check_history(const check_options& o) {
  using rule_fn = rule_result (*)(store::connection&, const check_options&);
  static const std::pair<const char*, rule_fn> rules[] = {
    {"ends", detail::check_ends},
    {"one_accepted_completion", detail::check_one_accepted_completion},
    {"no_attempt_after_completion", detail::check_no_attempt_after_completion},
    {"gap_free_seqs", detail::check_gap_free_seqs},
    {"no_early_timer", detail::check_no_early_timer},
    {"outbox_delivered", detail::check_outbox_delivered},
    {"rows_in_right_partitions", detail::check_rows_in_right_partitions},
  };
  check_report report;
  auto conn = store::connection::open(o.dsn);
  for (const auto& [name, fn] : rules) {
    if (!conn) {
      detail::tally t{name};
      t.could_not_check("no connection to the database: " + message_of(conn.error()));
      report.rules.push_back(t.done());
      continue;
    }
    report.rules.push_back(fn(*conn, o));
  }
  return report;
}

} // namespace nf::fault
