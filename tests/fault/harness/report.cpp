#include "tests/fault/harness/report.hpp"

#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

namespace nf::fault {

namespace {

// A table cell: a `|` would end the cell early.
std::string cell(std::string s) {
  for (size_t i = s.find('|'); i != std::string::npos; i = s.find('|', i + 2))
    s.replace(i, 1, "\\|");
  return s;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

/// A row of an earlier report, kept as written.
struct earlier_row {
  std::string line;  ///< the table line, with its own "when" cell
  std::string when;
};

/// The rows of the report at `path` by scenario (read from each row's `--scenario NAME`), when
/// it was written by a long run at the bars' sizes; none otherwise. A line of a report from
/// before rows carried their time gets the run's "- when:" date as its own.
std::map<std::string, earlier_row> earlier_rows(const std::string& path) {
  std::map<std::string, earlier_row> out;
  std::ifstream in{path};
  std::string line, run_when;
  bool sized = false;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (line.rfind("- when: ", 0) == 0) {
      auto comma = line.find(',');
      run_when = line.substr(8, comma == std::string::npos ? std::string::npos : comma - 8);
    }
    if (line.rfind("- command: ", 0) == 0)
      sized = line.find(" --long") != std::string::npos;
    if (line.rfind("- reduced: ", 0) == 0)
      sized = false;
    lines.push_back(line);
  }
  if (!sized)
    return out;
  for (const auto& l : lines) {
    if (l.rfind("| ", 0) != 0 || l.rfind("| fault |", 0) == 0)
      continue;
    auto at = l.find("--scenario ");
    if (at == std::string::npos)
      continue;
    at += 11;
    auto name = l.substr(at, l.find_first_of(" `", at) - at);
    // Cells: fault, bar, measured, result, [when,] command: 6 pipes, or 7 with the time.
    size_t pipes = 0;
    for (size_t i = 0; i < l.size(); ++i)
      if (l[i] == '|' && (i == 0 || l[i - 1] != '\\'))
        ++pipes;
    earlier_row r;
    if (pipes >= 7) {
      r.line = l;
      auto end = l.rfind(" | `");
      auto start = l.rfind(" | ", end - 1);
      r.when = l.substr(start + 3, end - start - 3);
    } else {
      auto cmd = l.rfind(" | `");
      r.line = l.substr(0, cmd) + " | " + run_when + l.substr(cmd);
      r.when = run_when;
    }
    out[name] = r;
  }
  return out;
}

} // namespace

void print_rows(const std::vector<row>& rows) {
  std::cout << "\n==== fault harness results ====\n";
  for (const auto& r : rows)
    std::cout << (r.pass ? "PASS " : "FAIL ") << r.scenario << ": " << r.fault << "\n     bar: "
              << r.bar << "\n     measured: " << r.figure << "\n";
  std::cout << std::flush;
}

bool write_report(const std::string& path, const options& o, const std::vector<row>& rows,
                  double seconds, const std::string& command_line) {
  // A long run at the bars' sizes of some scenarios only replaces those rows: the others
  // stay as an earlier such run measured them, each with its own time and command.
  std::map<std::string, earlier_row> kept;
  if (o.long_form && !o.resized)
    kept = earlier_rows(path);
  for (const auto& r : rows)
    kept.erase(r.scenario);
  std::ofstream out{path};
  if (!out) {
    std::cerr << "nodeflow-fault-harness: cannot write " << path << "\n";
    return false;
  }
  int passed = 0;
  for (const auto& r : rows)
    passed += r.pass ? 1 : 0;
  int kept_passed = 0;
  std::string kept_list;
  for (const auto& [name, k] : kept) {
    kept_passed += k.line.find("| pass |") != std::string::npos ? 1 : 0;
    kept_list += (kept_list.empty() ? "" : ", ") + name + " (" + k.when + ")";
  }
  const auto now = utc_now();
  out << "# Reliability under faults\n\n"
      << "Written by the fault harness (tests/fault/README.md, `## harness`): "
      << o.nodes << " real `nodeflow serve` processes on one Postgres 18 with real workers, "
         "every node's Postgres connection and cluster door through the fault proxy on "
         "loopback, and every scenario ended by the history checker, which reads the database "
         "and the webhook sink's log. A row passes when its bar holds and the checker finds "
         "nothing.\n\n"
      << "The long form, with the sizes of the bars, is one command:\n\n"
      << "```\nbuild/tests/fault/nodeflow-fault-harness --long --report docs/reliability.md\n```\n\n"
      << "Each row's command runs that row alone; its flags size it. A long run of some rows "
         "only replaces those: each row says when it was measured.\n\n"
      << "## This run\n\n"
      << "- command: `" << command_line << "`\n"
      << "- when: " << now << ", " << seconds_text(seconds) << " in all, on "
      << std::thread::hardware_concurrency() << " cores\n"
      << "- nodes " << o.nodes << ", lease TTL (membership.lease_ms) " << o.lease_ms
      << " ms, task responseTimeoutSeconds " << o.response_timeout_s << ", workers "
      << o.workers << " threads, starters " << o.starters << " threads\n"
      << "- sizes: kill scenario " << o.workflows << " workflows, other scenarios "
      << o.load_workflows << " each (one in " << o.fan_every << " a " << o.fan_width
      << "-way fan-out, the rest 10-step chains); kills " << o.kills << ", Postgres restarts "
      << o.pg_restarts << ", terminate rounds " << o.terminates << ", cuts " << o.cuts
      << ", partition " << o.partition_s << " s, scale: W2 started for " << o.scale_seconds
      << " s per node count, " << o.scale_rounds << " pass" << (o.scale_rounds > 1 ? "es" : "")
      << " over the counts\n"
      << (o.resized ? "- reduced: this run was sized by the flags of its command, smaller than the "
                      "bars ask; the bars' sizes are the defaults of `--long`\n"
                    : "")
      << "- result: " << passed << " of " << rows.size() << " rows pass\n"
      << (kept.empty() ? std::string{}
                       : "- kept from earlier long runs (" + std::to_string(kept_passed) + " of "
                           + std::to_string(kept.size()) + " pass): " + kept_list + "\n")
      << "\n| fault | bar | measured | result | when | command |\n|---|---|---|---|---|---|\n";
  std::map<std::string, std::string> lines;
  for (const auto& r : rows)
    lines[r.scenario] = "| " + cell(r.fault) + " | " + cell(r.bar) + " | " + cell(r.figure) + " | "
                        + (r.pass ? "pass" : "**FAIL**") + " | " + now + " | `" + cell(r.command)
                        + "` |";
  for (const auto& [name, k] : kept)
    lines[name] = k.line;
  for (const auto& name : scenario_names())
    if (auto it = lines.find(name); it != lines.end())
      out << it->second << "\n";
  return static_cast<bool>(out);
}

} // namespace nf::fault
