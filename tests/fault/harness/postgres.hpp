#pragma once

// The harness's own Postgres 18: scripts/pg18.sh's server binaries, a data directory
// under the run's scratch directory, a free loopback port kept across restarts (the
// proxy links point at it). Stopped by the destructor, and by stop_all_servers() from
// the harness's signal handlers, so a failed or interrupted run leaves none behind.

#include <chrono>
#include <cstdint>
#include <string>

#include "store/pg/connection.hpp"

namespace nf::fault {

class pg_server {
public:
  /// Creates and starts the cluster in `dir`/pg; throws std::runtime_error on failure.
  pg_server(const std::string& source_dir, const std::string& dir);
  ~pg_server();
  pg_server(const pg_server&) = delete;
  pg_server& operator=(const pg_server&) = delete;

  uint16_t port() const { return port_; }
  /// The DSN of database `db`, straight to the server (not through a proxy link).
  std::string dsn(const std::string& db = "postgres") const;

  /// `pg_ctl -m immediate stop` (a crash: no checkpoint, clients cut), then a start on
  /// the same port; returns when the server accepts connections again.
  void restart_immediate();
  /// pg_terminate_backend of every client backend of `db` but the caller's own: the
  /// nodes' connections. Returns how many were terminated.
  int terminate_backends(const std::string& db);

  /// `-m fast` stop; idempotent.
  void stop();

  /// A connection to `db`, for the harness's own SQL (throws when it cannot connect).
  store::connection connect(const std::string& db) const;

private:
  int pg_ctl(const std::string& args) const;

  std::string pg_bin_;
  std::string data_;
  uint16_t port_ = 0;
  bool running_ = false;
};

/// Stops every pg_server still running (signal handlers, std::atexit).
void stop_all_servers();

/// `sh -c command`, its stdout; throws when it exits non-zero.
std::string shell_output(const std::string& command);

} // namespace nf::fault
