// nodeflow-check-history: the history checker as a command, for the fault harness's scripts
// and for a look at any database by hand. Prints one line per rule; exits 0 when every rule
// held, 1 when one did not, 2 on a bad command line.

#include <charconv>
#include <cstring>
#include <iostream>
#include <set>
#include <string>

#include "tests/fault/checker/history_checker.hpp"

namespace {

constexpr const char* usage =
  "usage: nodeflow-check-history --dsn DSN [--expect NAME=STATUS]... [--since-ms N] "
  "[--sink-log FILE]\n"
  "  --dsn DSN             the database the run used (libpq connection string or URI)\n"
  "  --expect NAME=STATUS  every started workflow named NAME must have ended STATUS\n"
  "                        (RUNNING, COMPLETED, FAILED, TIMED_OUT, TERMINATED or PAUSED)\n"
  "  --since-ms N          only executions started at or after N ms since the epoch\n"
  "  --sink-log FILE       the webhook sink's deliveries, one JSON body a line\n";

int refuse(const std::string& why) {
  std::cerr << "nodeflow-check-history: " << why << "\n" << usage;
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  static const std::set<std::string> statuses{"RUNNING",  "COMPLETED",  "FAILED",
                                              "TIMED_OUT", "TERMINATED", "PAUSED"};
  nf::fault::check_options o;
  bool have_dsn = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << usage;
      return 0;
    }
    if (flag != "--dsn" && flag != "--expect" && flag != "--since-ms" && flag != "--sink-log")
      return refuse("unknown argument '" + flag + "'");
    if (i + 1 >= argc)
      return refuse(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--dsn") {
      if (value.empty())
        return refuse("--dsn is empty");
      o.dsn = value;
      have_dsn = true;
    } else if (flag == "--expect") {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
        return refuse("--expect needs NAME=STATUS, got '" + value + "'");
      auto name = value.substr(0, eq), status = value.substr(eq + 1);
      if (statuses.count(status) == 0)
        return refuse("--expect " + name + ": '" + status + "' is no workflow status");
      if (auto [it, fresh] = o.expected_ends.emplace(name, status); !fresh && it->second != status)
        return refuse("--expect " + name + " is given twice with different statuses");
    } else if (flag == "--since-ms") {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || end != value.data() + value.size() || n < 0)
        return refuse("--since-ms needs a whole number of milliseconds >= 0, got '" + value + "'");
      o.since_ms = n;
    } else {
      if (value.empty())
        return refuse("--sink-log is empty");
      o.sink_log_path = value;
    }
  }
  if (!have_dsn)
    return refuse("--dsn is required");
  auto report = nf::fault::check_history(o);
  std::cout << report.text() << std::flush;
  return report.ok() ? 0 : 1;
}
