#include "store/pg/connection.hpp"

#include <cstring>
#include <type_traits>
#include <vector>

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include "store/pg/binary_params.hpp"
#include "store/pg/dsn.hpp"
#include "store/pg/errors.hpp"
#include "store/pg/hour_window.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/pruning.hpp"

namespace nf::store {

void connection::deleter::operator()(pg_conn* c) const {
  PQfinish(c);
}

connection::connection(pg_conn* c) : conn_(c) {
}

connection::connection(connection&&) noexcept = default;
connection& connection::operator=(connection&&) noexcept = default;
connection::~connection() = default;

pg_conn* connect_libpq(const std::string& dsn, const link_settings& link) {
  // The DSN is expanded after the default, so a gssencmode it names wins. The link keys
  // are only those the DSN does not name, and their `options` already holds the DSN's
  // own: it goes last, to replace the DSN's with the merged one.
  auto extra = link_keys(dsn, link);
  std::vector<const char*> keys{"gssencmode", "dbname"};
  std::vector<const char*> values{"disable", dsn.c_str()};
  for (const auto& k : extra) {
    keys.push_back(k.key.c_str());
    values.push_back(k.value.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  return PQconnectdbParams(keys.data(), values.data(), 1);
}

caf::expected<connection> connection::open(const std::string& dsn) {
  return open(dsn, link_defaults());
}

caf::expected<connection> connection::open(const std::string& dsn, const link_settings& link) {
  pg_conn* c = connect_libpq(dsn, link);
  if (c == nullptr)
    return make_error(errc::conn_broken, "cannot allocate a libpq connection");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    PQfinish(c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
      msg.pop_back();
    // libpq may quote the connection string (a malformed one, or a URI it cannot read).
    return make_error(errc::conn_broken, "cannot connect to Postgres: " + redact_secrets(msg, dsn));
  }
  connection result{c};
  // Server time is the only clock for deadlines; UTC keeps partition names stable.
  if (auto r = result.exec("SET TIME ZONE 'UTC'"); !r)
    return std::move(r.error());
  // Every statement is prepared once and run many times against partitioned tables
  // ("Timers" alone has ~50 partitions). Left on `auto`, the planner keeps choosing
  // custom plans (they prune at plan time, so they look cheaper) and re-plans on every
  // call, and planning costs more than executing. Generic plans prune at
  // executor start-up instead.
  if (auto r = result.exec("SET plan_cache_mode = force_generic_plan"); !r)
    return std::move(r.error());
  // At its default ("partition") the planner reads and parses every CHECK constraint of
  // every partition a plan names, to exclude partitions by them: the inheritance-era
  // mechanism. Declarative partitions are pruned by their bounds whatever this says, and no
  // statement here relies on a CHECK to skip a table. Plans are rebuilt whenever autovacuum
  // updates a partition's statistics (every few seconds on the queue tables), in every
  // backend, so planning time counts; off, a "Timers" statement plans in ~28% less time.
  if (auto r = result.exec("SET constraint_exclusion = off"); !r)
    return std::move(r.error());
  return result;
}

namespace {

// The node's log keeps what clients do not get, with the SQLSTATE to find it by (CONTEXT
// alone, a PL/pgSQL line number, is not worth a line). A serialization failure, a deadlock
// or a compare-and-set that lost is handled by its caller and says nothing new: debug.
void log_details(const char* what, const char* state, const std::string& msg, errc code,
                 const char* detail, const char* hint, const char* context) {
  if (!detail && !hint)
    return;
  auto level = code == errc::retry_tx || code == errc::stale ? spdlog::level::debug
                                                             : spdlog::level::warn;
  if (!spdlog::default_logger_raw()->should_log(level))
    return;
  std::string text = std::string{"postgres error "} + (state ? state : "-----") + " in " + what
                     + ": " + msg;
  if (detail)
    text += std::string{"; DETAIL: "} + detail;
  if (hint)
    text += std::string{"; HINT: "} + hint;
  if (context)
    text += std::string{"; CONTEXT: "} + context;
  spdlog::log(level, "{}", text);
}

} // namespace

caf::error error_from(pg_conn* conn, pg_result* res, const char* what) {
  auto field = [res](int code) -> const char* {
    return res ? PQresultErrorField(res, code) : nullptr;
  };
  const char* state = field(PG_DIAG_SQLSTATE);
  // The error goes to clients (over the protocol and HTTP) with the primary text alone:
  // DETAIL, HINT and CONTEXT may quote row values (a unique violation names the existing
  // key, a check violation the whole row) and the statements of server-side functions.
  // PQresultErrorMessage would carry them all, so it is only the fallback for an error
  // libpq made up itself.
  const char* primary = field(PG_DIAG_MESSAGE_PRIMARY);
  std::string msg = primary ? primary : res ? PQresultErrorMessage(res) : "";
  if (msg.empty() && conn)
    msg = PQerrorMessage(conn);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
    msg.pop_back();
  auto code = classify_sqlstate(state);
  // A FATAL ends the session even while libpq, in a pipeline, has not yet read the end of
  // the link (a backend terminated during COMMIT): the connection is gone all the same.
  const char* severity = field(PG_DIAG_SEVERITY_NONLOCALIZED);
  bool fatal = severity && (std::strcmp(severity, "FATAL") == 0 || std::strcmp(severity, "PANIC") == 0);
  if (code == errc::conn_broken && conn && PQstatus(conn) == CONNECTION_OK && state && !fatal)
    code = errc::internal;
  log_details(what, state, msg, code, field(PG_DIAG_MESSAGE_DETAIL), field(PG_DIAG_MESSAGE_HINT),
              field(PG_DIAG_CONTEXT));
  return make_error(code, std::string{what} + ": " + msg, state ? state : "");
}

caf::expected<result> connection::check(pg_result* res, const char* what) {
  auto status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
    return result{res};
  auto err = error_from(conn_.get(), res, what);
  PQclear(res);
  return err;
}

caf::expected<result> connection::exec(const std::string& sql) {
  // Several statements in one simple query: the result is the last one's, and an error
  // stops the rest.
  if (const char* begin = take_begin())
    return check(PQexec(conn_.get(), (std::string{begin} + "; " + sql).c_str()), "exec");
  return check(PQexec(conn_.get(), sql.c_str()), "exec");
}

namespace {

std::vector<const char*> raw_values(const params& p) {
  std::vector<const char*> out;
  out.reserve(p.size());
  for (const auto& v : p.values())
    out.push_back(v ? v->c_str() : nullptr);
  return out;
}

} // namespace

caf::expected<result> connection::exec(const std::string& sql, const params& p) {
  // Rare (ad-hoc statements): the deferred BEGIN goes in a round trip of its own.
  if (const char* begin = take_begin())
    if (auto b = check(PQexec(conn_.get(), begin), "exec"); !b)
      return b;
  auto values = raw_values(p);
  return check(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()),
                            nullptr, values.data(), nullptr, nullptr, 0),
               "exec");
}

bool connection::is_prepared(const char* name) const {
  return prepared_.count(name) > 0;
}

void connection::mark_prepared(const char* name) {
  prepared_.emplace(name);
}

std::string deallocate_sql(const std::string& name) {
  return "DEALLOCATE \"" + name + "\"";
}

std::vector<std::string> connection::superseded_by(const char* name) const {
  std::vector<std::string> out;
  for (const auto& p : prepared_)
    if (supersedes(name, p))
      out.push_back(p);
  return out;
}

// prepared_types hands libpq the oids as uint32_t.
static_assert(std::is_same_v<Oid, uint32_t>);

caf::expected<void> connection::prepare(const statement& st) {
  if (is_prepared(st.name))
    return {};
  // An hour window's older variants go, as in a pipeline (store/pg/pipeline.cpp), whether
  // or not a transaction is open: the timer prepares its claim inside one. A DEALLOCATE
  // that failed there has aborted the transaction, so its error is this prepare's.
  for (const auto& old : superseded_by(st.name)) {
    auto d = check(PQexec(conn_.get(), deallocate_sql(old).c_str()), "DEALLOCATE");
    if (d || sqlstate_of(d.error()) == "26000")  // 26000: the server does not have it
      forget_prepared(old);
    if (!d && PQtransactionStatus(conn_.get()) != PQTRANS_IDLE)
      return std::move(d.error());
  }
  prepared_types types{st};
  auto r = check(PQprepare(conn_.get(), st.name, st.sql, types.count, types.types), st.name);
  // 42P05: an aborted pipeline prepared it already; the statement is usable.
  if (!r && sqlstate_of(r.error()) != "42P05")
    return std::move(r.error());
  mark_prepared(st.name);
  return {};
}

caf::expected<result> connection::run(const statement& st, const params& p) {
  if (st.prune_on > 0 || st.started_on > 0) {
    params keyed = p;
    if (const statement& v = with_pruning_keys(st, keyed); &v != &st)
      return run_prepared(v, keyed);
  }
  return run_prepared(st, p);
}

caf::expected<result> connection::run_prepared(const statement& st, const params& p) {
  if (pending_begin_) {
    // The first statement of a transaction: BEGIN goes in the same pipeline.
    pipeline batch{*this};
    batch.add_exact(st, p);
    auto rs = batch.run();
    if (!rs)
      return std::move(rs.error());
    return std::move(rs->front());
  }
  if (auto prep = prepare(st); !prep)
    return prep.error();
  wire_params wire{st, p};
  return check(PQexecPrepared(conn_.get(), st.name, wire.count(), wire.values(), wire.lengths(),
                              wire.formats(), 0),
               st.name);
}

caf::expected<result> connection::run1(const statement& st, const params& p) {
  auto r = run(st, p);
  if (!r)
    return r;
  if (r->rows() == 0)
    return make_error(errc::not_found, std::string{st.name} + ": no row");
  if (r->rows() > 1)
    return make_error(errc::internal, std::string{st.name} + ": expected one row, got "
                                        + std::to_string(r->rows()));
  return r;
}

caf::expected<std::optional<result>> connection::run01(const statement& st, const params& p) {
  auto r = run(st, p);
  if (!r)
    return std::move(r.error());
  if (r->rows() > 1)
    return make_error(errc::internal, std::string{st.name} + ": expected at most one row, got "
                                        + std::to_string(r->rows()));
  if (r->rows() == 0)
    return std::optional<result>{};
  return std::optional<result>{std::move(*r)};
}

caf::expected<result> connection::run_n(const statement& st, const params& p, int rows) {
  auto r = run(st, p);
  if (!r)
    return r;
  if (r->rows() != rows)
    return make_error(errc::internal, std::string{st.name} + ": expected " + std::to_string(rows)
                                        + " rows, got " + std::to_string(r->rows()));
  return r;
}

bool connection::ok() const {
  return conn_ && PQstatus(conn_.get()) == CONNECTION_OK;
}

std::string connection::last_error() const {
  return conn_ ? PQerrorMessage(conn_.get()) : "no connection";
}

int connection::backend_pid() const {
  return PQbackendPID(conn_.get());
}

} // namespace nf::store
