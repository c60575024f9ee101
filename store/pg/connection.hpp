#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/link_settings.hpp"
#include "store/pg/params.hpp"
#include "store/pg/result.hpp"
#include "store/schema/sql_check.hpp" // nf::store::statement, checked at compile time

struct pg_conn;

namespace nf::store {

/// One libpq connection. Not thread-safe: one owner (a detached store worker,
/// a test, a CLI command) at a time. Statements are prepared on first use.
/// PQconnectdb(dsn), except that GSS encryption is not tried unless the DSN asks for it
/// (`gssencmode`): libpq's default `prefer` probes the Kerberos credential cache on every
/// connect, which costs time and leaves Kerberos state that a process exiting while a
/// connection closes can trip over (an abort in k5_mutex_unlock). The link's timeouts,
/// keepalives and session timeouts come from `link` where the DSN does not name them
/// (store/pg/link_settings.hpp). The caller owns the result.
pg_conn* connect_libpq(const std::string& dsn, const link_settings& link = link_defaults());

class connection {
public:
  /// Connects with link_defaults(); a statement or lock timeout fails its statement with
  /// `unavailable` (the connection stays usable), a link found dead with `conn_broken`.
  static caf::expected<connection> open(const std::string& dsn);
  static caf::expected<connection> open(const std::string& dsn, const link_settings& link);

  connection(connection&&) noexcept;
  connection& operator=(connection&&) noexcept;
  ~connection();

  /// Runs `sql` with the simple-query protocol (may hold several statements,
  /// no parameters): for DDL, migrations and session settings.
  caf::expected<result> exec(const std::string& sql);

  /// Runs an ad-hoc parameterised statement without preparing it.
  caf::expected<result> exec(const std::string& sql, const params& p);

  /// Runs a named statement, preparing it on this connection the first time.
  caf::expected<result> run(const statement& st, const params& p = {});

  /// As `run`, but the statement must return exactly one row (else not_found
  /// for zero rows, internal for several).
  caf::expected<result> run1(const statement& st, const params& p = {});

  /// As `run`, but zero or one row: nullopt when there is none.
  caf::expected<std::optional<result>> run01(const statement& st, const params& p = {});

  /// As `run`, but exactly `rows` rows (internal otherwise): a read of one row per key of
  /// an earlier statement.
  caf::expected<result> run_n(const statement& st, const params& p, int rows);

  /// Makes sure `st` is prepared here (used by the pipeline before sending).
  caf::expected<void> prepare(const statement& st);
  bool is_prepared(const char* name) const;
  void mark_prepared(const char* name);
  /// The statements prepared here that preparing `name` makes useless (an hour window's
  /// older variants, store/pg/hour_window.hpp): prepare() and the pipeline deallocate them.
  std::vector<std::string> superseded_by(const char* name) const;
  /// `name` is no longer prepared here (deallocated, or the server does not know it).
  void forget_prepared(const std::string& name) { prepared_.erase(name); }

  /// Holds `sql` (a BEGIN) back to go with the next statement instead of in a round trip
  /// of its own: exec() prefixes it, a prepared statement and a pipeline send it first in
  /// the same flush (transaction::begin).
  void defer_begin(const char* sql) { pending_begin_ = sql; }
  /// The deferred BEGIN, now the caller's to send (or to drop: nothing ran after it);
  /// nullptr when there is none.
  const char* take_begin() {
    const char* sql = pending_begin_;
    pending_begin_ = nullptr;
    return sql;
  }

  /// Milliseconds this connection's pipelines waited for their answers, each from its sync
  /// to its last result: the server's work and the round trip. A caller's difference over a
  /// span of its own tells the server's share of it from the rest (the decider's log line).
  double waited_ms() const { return waited_ms_; }
  void add_waited_ms(double ms) { waited_ms_ += ms; }

  /// True while the server link is up.
  bool ok() const;
  /// The error libpq reports on this connection, for messages.
  std::string last_error() const;
  /// The server's process id, e.g. for pg_stat_activity in tests.
  int backend_pid() const;

  pg_conn* native() const { return conn_.get(); }

private:
  struct deleter {
    void operator()(pg_conn* c) const;
  };
  explicit connection(pg_conn* c);
  caf::expected<result> check(pg_result* res, const char* what);
  caf::expected<result> run_prepared(const statement& st, const params& p);

  std::unique_ptr<pg_conn, deleter> conn_;
  std::unordered_set<std::string> prepared_;
  const char* pending_begin_ = nullptr;
  double waited_ms_ = 0;
};

/// The DEALLOCATE of a statement this store prepared under `name`.
std::string deallocate_sql(const std::string& name);

/// Turns a failed PGresult (or its absence) into a store error.
caf::error error_from(pg_conn* conn, pg_result* res, const char* what);

} // namespace nf::store
