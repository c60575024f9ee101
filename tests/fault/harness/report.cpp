#include "tests/fault/harness/report.hpp"

#include <ctime>
#include <fstream>
#include <iostream>
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
  std::ofstream out{path};
  if (!out) {
    std::cerr << "nodeflow-fault-harness: cannot write " << path << "\n";
    return false;
  }
  int passed = 0;
  for (const auto& r : rows)
    passed += r.pass ? 1 : 0;
  out << "# Reliability under faults\n\n"
      << "Written by the fault harness (tests/fault/README.md, `## harness`): "
      << o.nodes << " real `nodeflow serve` processes on one Postgres 18 with real workers, "
         "every node's Postgres connection and cluster door through the fault proxy on "
         "loopback, and every scenario ended by the history checker, which reads the database "
         "and the webhook sink's log. A row passes when its bar holds and the checker finds "
         "nothing.\n\n"
      << "The long form, with the sizes of the bars, is one command:\n\n"
      << "```\nbuild/tests/fault/nodeflow-fault-harness --long --report docs/reliability.md\n```\n\n"
      << "Each row's command runs that row alone; its flags size it.\n\n"
      << "## This run\n\n"
      << "- command: `" << command_line << "`\n"
      << "- when: " << utc_now() << ", " << seconds_text(seconds) << " in all, on "
      << std::thread::hardware_concurrency() << " cores\n"
      << "- nodes " << o.nodes << ", lease TTL (membership.lease_ms) " << o.lease_ms
      << " ms, task responseTimeoutSeconds " << o.response_timeout_s << ", workers "
      << o.workers << " threads, starters " << o.starters << " threads\n"
      << "- sizes: kill scenario " << o.workflows << " workflows, other scenarios "
      << o.load_workflows << " each (one in " << o.fan_every << " a " << o.fan_width
      << "-way fan-out, the rest 10-step chains); kills " << o.kills << ", Postgres restarts "
      << o.pg_restarts << ", terminate rounds " << o.terminates << ", cuts " << o.cuts
      << ", partition " << o.partition_s << " s, scale: W2 started for " << o.scale_seconds
      << " s per node count\n"
      << (o.resized ? "- reduced: this run was sized by the flags of its command, smaller than the "
                      "bars ask; the bars' sizes are the defaults of `--long`\n"
                    : "")
      << "- result: " << passed << " of " << rows.size() << " rows pass\n\n"
      << "| fault | bar | measured | result | command |\n|---|---|---|---|---|\n";
  for (const auto& r : rows)
    out << "| " << cell(r.fault) << " | " << cell(r.bar) << " | " << cell(r.figure) << " | "
        << (r.pass ? "pass" : "**FAIL**") << " | `" << cell(r.command) << "` |\n";
  return static_cast<bool>(out);
}

} // namespace nf::fault
