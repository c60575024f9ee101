#pragma once

// A small libpq helper for the benchmark only: the ceiling, the metric
// snapshots, the history generator and the commit listener need plain SQL on
// connections the benchmark owns. Failures end the benchmark with a message
// (bench_die); nothing here is linked into nodeflow.

#include <memory>
#include <string>
#include <vector>

#include <libpq-fe.h>
#include <sys/types.h>

#include "store/pg/dsn.hpp"

namespace nf::bench {

/// Ends the benchmark with `what`, killing the worker processes it started.
[[noreturn]] void bench_die(const std::string& what);

/// A child process bench_die must not leave behind; forget it once it was reaped.
void adopt_child(pid_t pid);
void forget_child(pid_t pid);

class sql_result {
public:
  explicit sql_result(PGresult* r) : r_(r, PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string str(int row, int col) const { return PQgetvalue(r_.get(), row, col); }
  long long i64(int row, int col) const { return std::stoll(str(row, col)); }
  double f64(int row, int col) const { return null(row, col) ? 0.0 : std::stod(str(row, col)); }

private:
  std::shared_ptr<PGresult> r_;
};

class sql_conn {
public:
  explicit sql_conn(const std::string& dsn);
  sql_conn(sql_conn&&) = default;
  /// Runs `sql` with text parameters $1…; ends the benchmark on an error.
  sql_result exec(const std::string& sql, const std::vector<std::string>& params = {});
  /// As exec, but answers false (and keeps the message) on an error.
  bool try_exec(const std::string& sql, const std::vector<std::string>& params,
                std::string& error);
  /// Prepares `sql` under `name` once; run it with run().
  void prepare(const std::string& name, const std::string& sql);
  sql_result run(const std::string& name, const std::vector<std::string>& params = {});
  int backend_pid() const { return PQbackendPID(c_.get()); }
  PGconn* native() const { return c_.get(); }

private:
  std::unique_ptr<PGconn, void (*)(PGconn*)> c_;
};

using store::with_database;

} // namespace nf::bench
