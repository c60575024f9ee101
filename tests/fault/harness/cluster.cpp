#include "tests/fault/harness/cluster.hpp"

#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/free_port.hpp"
#include "tests/support/http_client.hpp"

namespace nf::fault {

namespace {

using namespace std::chrono_literals;

// libfaketime's thread-safe build, preloaded the way `faketime -f` does it. Not the
// `faketime` wrapper itself: it forks, and a kill -9 of the wrapper would leave the
// node behind.
constexpr const char* libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

// The harness's lines in a node's log carry the time as the node's own lines do.
std::string stamp() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", std::gmtime(&t));
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03d", buf, static_cast<int>(ms));
  return out;
}

} // namespace

cluster::cluster(const options& opts, fault_proxy& proxy, pg_server& pg, std::string dir,
                 std::string db)
  : opts_(opts), proxy_(proxy), pg_(pg), dir_(std::move(dir)), db_(std::move(db)) {
}

cluster::~cluster() {
  for (auto& n : nodes_)
    if (n->proc) {
      if (n->paused)
        ::kill(n->proc->pid(), SIGCONT);
      n->proc->stop(SIGKILL);
    }
}

void cluster::add_node() {
  auto n = std::make_unique<node_proc>();
  n->index = size();
  auto i = std::to_string(n->index);
  n->port = test::free_loopback_port();
  n->pg_link = "pg-" + i;
  n->door_link = "door-" + i;
  auto pg_port = proxy_.add(n->pg_link, "127.0.0.1:" + std::to_string(pg_.port()));
  n->door_port = proxy_.add(n->door_link, "127.0.0.1:" + std::to_string(n->port));
  n->dsn = "postgresql://postgres@127.0.0.1:" + std::to_string(pg_port) + "/" + db_
           + "?sslmode=disable";
  n->config = dir_ + "/node" + i + ".conf";
  n->log = dir_ + "/node" + i + ".log";
  // Short polls and leases, so a fault resolves within seconds (the bars count in
  // lease TTLs); the relay retries a failed delivery soon.
  // Closed (so flushed) before the node starts: a node reading a half-written file would
  // run on the defaults, 10 s leases among them.
  {
    std::ofstream cfg{n->config};
    cfg << "decider.poll_interval_ms = \"200\"\n"
        << "lessor.poll_interval_ms = \"200\"\n"
        << "timer.poll_interval_ms = \"200\"\n"
        << "relay.poll_interval_ms = \"200\"\n"
        << "relay.base_backoff_ms = \"50\"\n"
        << "relay.max_backoff_ms = \"1000\"\n"
        << "membership.heartbeat_ms = \"" << std::max(50, opts_.lease_ms / 6) << "\"\n"
        << "membership.lease_ms = \"" << opts_.lease_ms << "\"\n"
        << "system_tasks.poll_timeout_ms = \"1000\"\n"
        << "log.level = \"info\"\n";
  }
  nodes_.push_back(std::move(n));
  start(size() - 1);
}

void cluster::start(int idx, const std::string& clock_offset, const std::string& other_dsn) {
  const bool direct = !other_dsn.empty();
  auto& n = at(idx);
  if (n.proc && n.proc->running())
    throw std::runtime_error("node " + std::to_string(idx) + " still runs");
  n.clock_offset = clock_offset;
  n.paused = false;
  // Through the proxy, the node's connections leave from its own address (node_proc::source);
  // direct, they reach Postgres itself, whose pg_hba.conf trusts 127.0.0.1 alone.
  std::vector<std::string> preload;
  if (!direct)
    preload.push_back(NF_FAULT_SOURCE_LIB);
  if (!clock_offset.empty())
    preload.push_back(libfaketime);
  std::vector<std::string> argv{"/usr/bin/env", "NF_FAULT_SOURCE_ADDR=" + n.source()};
  if (!preload.empty()) {
    std::string list;
    for (const auto& lib : preload)
      list += (list.empty() ? "" : ":") + lib;
    argv.push_back("LD_PRELOAD=" + list);
  }
  if (!clock_offset.empty())
    argv.insert(argv.end(), {"FAKETIME=" + clock_offset, "FAKETIME_DONT_FAKE_MONOTONIC=1"});
  auto dsn = direct ? other_dsn : n.dsn;
  auto advertise = direct ? "127.0.0.1:" + std::to_string(n.port) : n.advertise();
  for (auto a : {opts_.nodeflow_bin, std::string{"serve"}, std::string{"--dsn"}, dsn,
                 std::string{"--config"}, n.config, std::string{"--port"},
                 std::to_string(n.port), std::string{"--http-port"}, std::string{"-1"},
                 std::string{"--auth"}, std::string{"off"}, std::string{"--node.advertise"},
                 advertise})
    argv.push_back(a);
  {
    std::ofstream{n.log, std::ios::app}
      << "---- " << stamp() << " nodeflow serve starts" << (clock_offset.empty() ? "" : " (clock " + clock_offset + ")")
      << (direct ? " (on " + other_dsn + ", not through the proxy)" : "")
      << "\n";
  }
  n.proc = std::make_unique<test::child_process>(argv, n.log, true);
  if (auto http = n.proc->wait_for_line("http ", 60s))
    n.http_port = static_cast<uint16_t>(std::stoi(http->substr(http->rfind(':') + 1)));
  if (!n.proc->wait_for_line("listening ", 60s))
    throw std::runtime_error("node " + std::to_string(idx) + " did not print `listening`:\n"
                             + test::tail_of(n.log));
}

void cluster::kill9(int idx) {
  auto& n = at(idx);
  n.proc->stop(SIGKILL);
  n.paused = false;
  std::ofstream{n.log, std::ios::app} << "---- " << stamp() << " nodeflow serve killed (SIGKILL)\n";
}

bool cluster::stop(int idx) {
  auto& n = at(idx);
  if (!n.proc)
    return true;
  if (n.paused)
    resume(idx);
  auto st = n.proc->stop(SIGTERM);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

void cluster::pause(int idx) {
  auto& n = at(idx);
  ::kill(n.proc->pid(), SIGSTOP);
  n.paused = true;
  std::ofstream{n.log, std::ios::app} << "---- " << stamp() << " nodeflow serve stopped (SIGSTOP)\n";
}

void cluster::resume(int idx) {
  auto& n = at(idx);
  ::kill(n.proc->pid(), SIGCONT);
  n.paused = false;
  std::ofstream{n.log, std::ios::app} << "---- " << stamp() << " nodeflow serve continued (SIGCONT)\n";
}

bool cluster::running(int idx) {
  auto& n = at(idx);
  return n.proc && n.proc->running();
}

client_options cluster::client_opts(int idx, std::chrono::milliseconds timeout) const {
  client_options o;
  o.host = "127.0.0.1";
  o.port = nodes_.at(static_cast<size_t>(idx))->port;
  o.timeout = timeout;
  o.min_backoff = 20ms;
  o.max_backoff = 500ms;
  return o;
}

int64_t cluster::metric_sum(int idx, const std::string& part) {
  auto& n = at(idx);
  if (n.http_port == 0)
    return -1;
  try {
    test::http_client http{"127.0.0.1", n.http_port, 5s};
    auto reply = http.get("/metrics");
    if (reply.status != 200)
      return -1;
    std::istringstream in{reply.body};
    int64_t sum = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#')
        continue;
      auto sp = line.rfind(' ');
      auto name = line.substr(0, line.find_first_of("{ "));
      if (sp != std::string::npos && name.find(part) != std::string::npos)
        sum += static_cast<int64_t>(std::stod(line.substr(sp + 1)));
    }
    return sum;
  } catch (const std::exception&) {
    return -1;
  }
}

std::string cluster::log_tails(size_t bytes) const {
  std::string out;
  for (const auto& n : nodes_)
    out += "---- node " + std::to_string(n->index) + " log (tail): " + n->log + "\n"
           + test::tail_of(n->log, bytes) + "\n";
  return out;
}

std::vector<std::string> cluster::complaints(size_t max) const {
  std::vector<std::string> out;
  for (const auto& n : nodes_) {
    std::ifstream in{n->log};
    for (std::string line; std::getline(in, line) && out.size() < max;)
      if ((line.find(" warning [") != std::string::npos || line.find(" error [") != std::string::npos)
          && line.find("AUTH_OFF") == std::string::npos)
        out.push_back("node " + std::to_string(n->index) + ": " + line);
  }
  return out;
}

} // namespace nf::fault
