#pragma once

// What the store-level benchmark programs share: giving up on the first store error, a
// scratch database of their own, and timing on the steady clock.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <caf/expected.hpp>

#include "proto/errors.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/dsn.hpp"
#include "store/schema/migrator.hpp"

namespace nf::bench {

using clock_type = std::chrono::steady_clock;

/// The program's name, which its error messages start with; its main sets it first.
inline std::string program = "bench";

/// Reports `what` failed with `err` on stderr and ends the run: a benchmark has no retries.
[[noreturn]] inline void die(const std::string& what, const caf::error& err) {
  std::fprintf(stderr, "%s: %s: %s\n", program.c_str(), what.c_str(),
               nf::message_of(err).c_str());
  std::exit(1);
}

/// `x`'s value, or `die(what, ...)` with its error.
template <class T>
T must(caf::expected<T> x, const std::string& what) {
  if (!x)
    die(what, x.error());
  return std::move(*x);
}

/// A database `name` created on the server `dsn` names, and dropped (FORCE) when this goes:
/// a run never leaves its rows behind, nor sees another's.
struct scratch_database {
  std::string dsn;
  std::string name;
  store::connection admin;

  scratch_database(std::string server_dsn, std::string db)
    : dsn{std::move(server_dsn)}, name{std::move(db)},
      admin{must(store::connection::open(dsn), "connect")} {
    must(admin.exec("CREATE DATABASE \"" + name + "\""), "create database");
  }
  ~scratch_database() {
    (void) admin.exec("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
  }
  scratch_database(const scratch_database&) = delete;
  scratch_database& operator=(const scratch_database&) = delete;

  /// A connection to it, migrated to the latest schema.
  store::connection connect_migrated() const {
    auto conn = must(store::connection::open(store::with_database(dsn, name)),
                     "connect bench database");
    must(store::migrator{}.up(conn), "migrate");
    return conn;
  }
};

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

inline double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

} // namespace nf::bench
