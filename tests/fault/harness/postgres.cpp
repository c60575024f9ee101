#include "tests/fault/harness/postgres.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "proto/errors.hpp"
#include <cstdlib>

namespace nf::fault {

namespace {

std::mutex registry_mx;
std::set<pg_server*> registry;

// pg18.sh runs the server as its own user when we are root (Postgres refuses root).
std::string as_pg() {
  return ::geteuid() == 0 ? "runuser -u nodeflow-pg -- " : "";
}

std::string last_line(const std::string& s) {
  auto t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
    t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

} // namespace

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr)
    throw std::runtime_error("cannot run: " + command);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int st = ::pclose(p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw std::runtime_error("`" + command + "` failed: " + out);
  return out;
}

pg_server::pg_server(const std::string& source_dir, const std::string& dir)
  : data_(dir + "/pg") {
  auto script = source_dir + "/scripts/pg18.sh";
  pg_bin_ = last_line(shell_output(script + " install 2>&1"));
  auto dsn = last_line(shell_output(script + " start " + data_ + " 2>&1"));
  std::ifstream in{data_ + "/nodeflow.port"};
  int port = 0;
  if (!(in >> port) || port <= 0)
    throw std::runtime_error("pg18.sh started no server in " + data_ + ": " + dsn);
  port_ = static_cast<uint16_t>(port);
  running_ = true;
  std::lock_guard<std::mutex> g{registry_mx};
  registry.insert(this);
}

pg_server::~pg_server() {
  stop();
  std::lock_guard<std::mutex> g{registry_mx};
  registry.erase(this);
}

std::string pg_server::dsn(const std::string& db) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + db
         + "?sslmode=disable&application_name=nodeflow-fault-harness";
}

int pg_server::pg_ctl(const std::string& args) const {
  auto cmd = as_pg() + pg_bin_ + "/pg_ctl -D " + data_ + " " + args + " >>" + data_
             + ".pg_ctl.log 2>&1";
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void pg_server::restart_immediate() {
  if (pg_ctl("-m immediate -w stop") != 0)
    throw std::runtime_error("pg_ctl -m immediate stop failed (see " + data_ + ".pg_ctl.log)");
  // The same port: every proxy link and DSN names it. A client may hold it for a
  // moment after the crash, so a failed start is tried again. The wait covers crash
  // recovery: up to max_wal_size (4 GB) of WAL since the last checkpoint took 87 s to replay
  // after the kill scenario, and a start that stops waiting leaves the recovering server
  // running, so every later try would fail on its lock file.
  for (int i = 0;; ++i) {
    if (pg_ctl("-l " + data_ + "/server.log -w -t 900 -o \"-p " + std::to_string(port_)
               + "\" start")
        == 0)
      break;
    if (i >= 20)
      throw std::runtime_error("Postgres did not start again on port " + std::to_string(port_)
                               + " (see " + data_ + "/server.log)");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

int pg_server::terminate_backends(const std::string& db) {
  auto c = connect(db);
  auto r = c.exec(R"(SELECT count(*) FILTER (WHERE pg_terminate_backend("pid")) AS "n"
                       FROM pg_stat_activity
                      WHERE "datname" = current_database() AND "pid" <> pg_backend_pid()
                        AND "backend_type" = 'client backend'
                        AND "application_name" <> 'nodeflow-fault-harness')");
  if (!r)
    throw std::runtime_error("pg_terminate_backend: " + message_of(r.error()));
  return static_cast<int>(r->i64(0, r->column_named("n")));
}

void pg_server::stop() {
  if (!running_)
    return;
  running_ = false;
  pg_ctl("-m fast -w stop");
}

store::connection pg_server::connect(const std::string& db) const {
  auto c = store::connection::open(dsn(db));
  if (!c)
    throw std::runtime_error("cannot connect to " + db + ": " + message_of(c.error()));
  return std::move(*c);
}

void stop_all_servers() {
  std::set<pg_server*> copy;
  {
    std::lock_guard<std::mutex> g{registry_mx};
    copy = registry;
  }
  for (auto* s : copy)
    s->stop();
}

} // namespace nf::fault
