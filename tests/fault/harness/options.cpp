#include "tests/fault/harness/options.hpp"

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>

namespace nf::fault {

namespace {

const char* usage =
  "usage: nodeflow-fault-harness (--short | --long) [--report FILE] [--scenario NAME]...\n"
  "         [--nodes N] [--lease-ms MS] [--workflows N] [--load-workflows N] [--fan-width N]\n"
  "         [--fan-every N] [--kills N] [--pg-restarts N] [--terminates N] [--cuts N]\n"
  "         [--partition-s S] [--stop-leases X] [--clock-shift-min M] [--wait-s S]\n"
  "         [--poison-pct P] [--scale-seconds S] [--scale-rounds R] [--starters N]\n"
  "         [--workers N] [--delay-ms MS] [--loss-pct P] [--response-timeout-s S] [--keep]\n"
  "         [--nodeflow BIN] [--proxy BIN] [--bench BIN] [--source DIR]\n"
  "scenarios: kill9 sigstop pg-terminate pg-restart cut-after-commit partition delay-loss\n"
  "           poison scale clock (--short runs all but scale; clock last, as a clock that\n"
  "           was off leaves rows stamped by it)\n";

// The long form's sizes: the reliability bars of docs/reliability.md.
void long_sizes(options& o) {
  o.workflows = 20000;
  o.load_workflows = 2000;
  o.kills = 10;
  o.pg_restarts = 10;
  o.terminates = 100;
  o.cuts = 1000;
  o.partition_s = 60;
  o.scale_seconds = 30;
  o.scale_rounds = 2;
  o.starters = 16;
  o.workers = 12;
}

} // namespace

const std::vector<std::string>& scenario_names() {
  static const std::vector<std::string> names{
    "kill9",     "sigstop",    "pg-terminate", "pg-restart", "cut-after-commit",
    "partition", "delay-loss", "poison",       "scale",      "clock"};
  return names;
}

std::optional<options> parse_options(int argc, char** argv) {
  options o;
  o.nodeflow_bin = NF_NODEFLOW_BIN;
  o.proxy_bin = NF_FAULT_PROXY_BIN;
  o.bench_bin = NF_BENCH_BIN;
  o.source_dir = NF_SOURCE_DIR;
  bool form_given = false;
  std::map<std::string, std::function<void(const std::string&)>> sized{
    {"--nodes", [&](auto v) { o.nodes = std::stoi(v); }},
    {"--lease-ms", [&](auto v) { o.lease_ms = std::stoi(v); }},
    {"--workflows", [&](auto v) { o.workflows = std::stoi(v); }},
    {"--load-workflows", [&](auto v) { o.load_workflows = std::stoi(v); }},
    {"--fan-width", [&](auto v) { o.fan_width = std::stoi(v); }},
    {"--fan-every", [&](auto v) { o.fan_every = std::stoi(v); }},
    {"--kills", [&](auto v) { o.kills = std::stoi(v); }},
    {"--pg-restarts", [&](auto v) { o.pg_restarts = std::stoi(v); }},
    {"--terminates", [&](auto v) { o.terminates = std::stoi(v); }},
    {"--cuts", [&](auto v) { o.cuts = std::stoi(v); }},
    {"--partition-s", [&](auto v) { o.partition_s = std::stoi(v); }},
    {"--stop-leases", [&](auto v) { o.stop_leases = std::stod(v); }},
    {"--clock-shift-min", [&](auto v) { o.clock_shift_min = std::stoi(v); }},
    {"--wait-s", [&](auto v) { o.wait_s = std::stoi(v); }},
    {"--poison-pct", [&](auto v) { o.poison_pct = std::stod(v); }},
    {"--scale-seconds", [&](auto v) { o.scale_seconds = std::stoi(v); }},
    {"--scale-rounds", [&](auto v) { o.scale_rounds = std::stoi(v); }},
    {"--starters", [&](auto v) { o.starters = std::stoi(v); }},
    {"--workers", [&](auto v) { o.workers = std::stoi(v); }},
    {"--delay-ms", [&](auto v) { o.delay_ms = std::stoi(v); }},
    {"--loss-pct", [&](auto v) { o.loss_pct = std::stoi(v); }},
    {"--response-timeout-s", [&](auto v) { o.response_timeout_s = std::stoi(v); }},
    {"--report", [&](auto v) { o.report_path = v; }},
    {"--scenario", [&](auto v) { o.scenarios.push_back(v); }},
    {"--nodeflow", [&](auto v) { o.nodeflow_bin = v; }},
    {"--proxy", [&](auto v) { o.proxy_bin = v; }},
    {"--bench", [&](auto v) { o.bench_bin = v; }},
    {"--source", [&](auto v) { o.source_dir = v; }},
  };
  // The form first, so a size flag overrides the form's size wherever it stands.
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--long") {
      o.long_form = true;
      long_sizes(o);
      form_given = true;
    } else if (a == "--short") {
      form_given = true;
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--long" || a == "--short")
      continue;
    if (a == "--keep") {
      o.keep = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return std::nullopt;
    }
    auto it = sized.find(a);
    if (it == sized.end()) {
      std::cerr << "nodeflow-fault-harness: unknown argument " << a << "\n" << usage;
      return std::nullopt;
    }
    if (i + 1 >= argc) {
      std::cerr << "nodeflow-fault-harness: " << a << " needs a value\n" << usage;
      return std::nullopt;
    }
    if (a != "--report" && a != "--scenario" && a != "--nodeflow" && a != "--proxy"
        && a != "--bench" && a != "--source")
      o.resized = true;
    try {
      it->second(argv[++i]);
    } catch (const std::exception&) {
      std::cerr << "nodeflow-fault-harness: " << a << ": expected a number, got " << argv[i]
                << "\n";
      return std::nullopt;
    }
  }
  if (!form_given) {
    std::cerr << "nodeflow-fault-harness: give --short or --long\n" << usage;
    return std::nullopt;
  }
  for (const auto& s : o.scenarios) {
    bool known = false;
    for (const auto& n : scenario_names())
      known = known || n == s;
    if (!known) {
      std::cerr << "nodeflow-fault-harness: --scenario: unknown scenario " << s << "\n" << usage;
      return std::nullopt;
    }
  }
  if (o.scenarios.empty())
    for (const auto& n : scenario_names())
      if (o.long_form || n != "scale")
        o.scenarios.push_back(n);
  if (o.nodes < 2 || o.lease_ms < 100 || o.workflows < 1 || o.load_workflows < 1
      || o.fan_every < 1 || o.fan_width < 1 || o.starters < 1 || o.workers < 1
      || o.scale_seconds < 1 || o.scale_rounds < 1) {
    std::cerr << "nodeflow-fault-harness: --nodes needs at least 2, --lease-ms at least 100, "
                 "the counts at least 1\n";
    return std::nullopt;
  }
  return o;
}

} // namespace nf::fault
