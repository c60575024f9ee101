#include "bench/engine/pg.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <signal.h>

#include "store/pg/connection.hpp"
#include "store/pg/dsn.hpp"

namespace nf::bench {

namespace {

std::mutex children_mx;
std::set<pid_t> children;

} // namespace

void adopt_child(pid_t pid) {
  std::lock_guard<std::mutex> g{children_mx};
  children.insert(pid);
}

void forget_child(pid_t pid) {
  std::lock_guard<std::mutex> g{children_mx};
  children.erase(pid);
}

void bench_die(const std::string& what) {
  std::fprintf(stderr, "nodeflow-bench: %s\n", what.c_str());
  {
    std::lock_guard<std::mutex> g{children_mx};
    for (auto pid : children)
      kill(pid, SIGKILL);
  }
  std::exit(1);
}

sql_conn::sql_conn(const std::string& dsn) : c_(store::connect_libpq(dsn), PQfinish) {
  if (PQstatus(c_.get()) != CONNECTION_OK)
    bench_die("cannot connect to " + store::redact_secrets(dsn) + ": "
              + store::redact_secrets(PQerrorMessage(c_.get()), dsn));
}

namespace {

std::vector<const char*> values_of(const std::vector<std::string>& params) {
  std::vector<const char*> v;
  for (const auto& p : params)
    v.push_back(p.c_str());
  return v;
}

bool ok(PGresult* r) {
  auto s = PQresultStatus(r);
  return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

} // namespace

sql_result sql_conn::exec(const std::string& sql, const std::vector<std::string>& params) {
  auto v = values_of(params);
  // Without parameters the simple protocol runs scripts of several statements.
  PGresult* r = v.empty() ? PQexec(c_.get(), sql.c_str())
                          : PQexecParams(c_.get(), sql.c_str(), static_cast<int>(v.size()),
                                         nullptr, v.data(), nullptr, nullptr, 0);
  if (!ok(r)) {
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    bench_die("SQL failed: " + msg + "  in: " + sql.substr(0, 200));
  }
  return sql_result{r};
}

bool sql_conn::try_exec(const std::string& sql, const std::vector<std::string>& params,
                       std::string& error) {
  auto v = values_of(params);
  // Without parameters the simple protocol runs scripts of several statements.
  PGresult* r = v.empty() ? PQexec(c_.get(), sql.c_str())
                          : PQexecParams(c_.get(), sql.c_str(), static_cast<int>(v.size()),
                                         nullptr, v.data(), nullptr, nullptr, 0);
  bool good = ok(r);
  if (!good)
    error = PQresultErrorMessage(r);
  PQclear(r);
  return good;
}

void sql_conn::prepare(const std::string& name, const std::string& sql) {
  PGresult* r = PQprepare(c_.get(), name.c_str(), sql.c_str(), 0, nullptr);
  if (!ok(r)) {
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    bench_die("prepare " + name + " failed: " + msg);
  }
  PQclear(r);
}

sql_result sql_conn::run(const std::string& name, const std::vector<std::string>& params) {
  auto v = values_of(params);
  PGresult* r = PQexecPrepared(c_.get(), name.c_str(), static_cast<int>(v.size()), v.data(),
                               nullptr, nullptr, 0);
  if (!ok(r)) {
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    bench_die(name + " failed: " + msg);
  }
  return sql_result{r};
}

} // namespace nf::bench
