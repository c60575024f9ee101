#pragma once

// What every detached partition actor (lessor, timer) and the node's outbox relay does with its
// database: one connection of its own (sequential scans priced out, and for the lessor sorts
// too, store/index_scans.hpp), reopened after the link broke (a database restart costs one
// failed round, not the actor), and failures logged as rate-limited warnings (they repeat on
// every round while the database is away).

#include <cstdint>
#include <memory>
#include <string>

#include <caf/error.hpp>
#include <spdlog/logger.h>

#include "config/folder_logger.hpp"
#include "store/index_scans.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/session.hpp"

namespace nf::actors {

class partition_db {
public:
  /// `shard` names the partition in log lines; a node-wide actor passes none (-1). `setup`
  /// prepares each new connection's session (store/index_scans.hpp).
  partition_db(std::string dsn, const std::string& folder, int16_t shard = -1,
               store::session::setup_fn setup = &store::prefer_index_scans);

  /// The open connection, (re)connecting when needed; nullptr after logging why not.
  store::connection* get(const char* what);

  /// Logs a failed store call (`what` is the event name) and drops a connection whose
  /// link is gone or whose last commit is in doubt.
  void failed(const char* what, const caf::error& err);

  spdlog::logger& log() { return *log_; }

private:
  store::session session_;
  std::shared_ptr<spdlog::logger> log_;
  int16_t shard_;
  warn_limiter warn_;
};

} // namespace nf::actors
