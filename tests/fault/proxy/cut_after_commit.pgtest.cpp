#define CAF_SUITE fault.proxy
#include "caf/test/unit_test.hpp"

#include <libpq-fe.h>

#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"
#include "tests/fault/proxy/proxy_process.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::test;

namespace {

const nf::store::statement insert_t{"test.insert_t",
                                    R"(INSERT INTO "T" ("id") VALUES ($1::int) RETURNING "id")"};

// `dsn` with host and port replaced: the same database through the proxy.
std::string through(const std::string& dsn, std::uint16_t port) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), &err);
  CAF_REQUIRE(opts != nullptr);
  std::string out = "host=127.0.0.1 port=" + std::to_string(port) + " sslmode=disable";
  for (auto* o = opts; o->keyword; ++o) {
    std::string key = o->keyword;
    if (!o->val || key == "host" || key == "hostaddr" || key == "port" || key == "sslmode")
      continue;
    std::string value;
    for (const char* c = o->val; *c; ++c)
      value += (*c == '\'' || *c == '\\') ? std::string{'\\', *c} : std::string{*c};
    out += " " + key + "='" + value + "'";
  }
  PQconninfoFree(opts);
  return out;
}

// host:port of the server `dsn` names, for the proxy's --link.
std::string server_of(const std::string& dsn) {
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), nullptr);
  std::string host = "127.0.0.1";
  std::string port = "5432";
  for (auto* o = opts; o && o->keyword; ++o) {
    if (o->val && std::string{o->keyword} == "port")
      port = o->val;
    if (o->val && std::string{o->keyword} == "host" && o->val[0] != '/')
      host = o->val;
  }
  PQconninfoFree(opts);
  return host + ":" + port;
}

struct pg_fixture {
  test_database db{"fault_proxy", false};
  proxy_process proxy{{"pg=" + server_of(db.dsn())}};
  std::string proxied = through(db.dsn(), proxy.link_port("pg"));

  pg_fixture() {
    CAF_REQUIRE(db.connect().exec(R"(CREATE TABLE "T" ("id" INT PRIMARY KEY))"));
  }

  PGconn* open_proxied() {
    PGconn* c = PQconnectdb(proxied.c_str());
    CAF_REQUIRE_EQUAL(PQstatus(c), CONNECTION_OK);
    return c;
  }
  bool ok(PGconn* c, const char* sql) {
    PGresult* r = PQexec(c, sql);
    bool good = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return good;
  }
  bool row_exists(int id) {
    auto r = db.connect().exec(R"(SELECT 1 FROM "T" WHERE "id" = )" + std::to_string(id));
    CAF_REQUIRE(r);
    return r->rows() == 1;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(fault_proxy_cut_after_commit, pg_fixture)

CAF_TEST(a cut COMMIT is executed but its answer never reaches the client) {
  CAF_REQUIRE_EQUAL(proxy.ctl("cut-after-commit pg 1"), "ok");
  PGconn* c = open_proxied();
  CAF_REQUIRE(ok(c, "BEGIN"));
  CAF_REQUIRE(ok(c, R"(INSERT INTO "T" VALUES (1))"));
  CAF_CHECK(!ok(c, "COMMIT"));
  CAF_CHECK_EQUAL(PQstatus(c), CONNECTION_BAD);
  PQfinish(c);
  CAF_CHECK(row_exists(1));
  // Only one cut was asked for: the next connection commits and hears so.
  c = open_proxied();
  CAF_CHECK(ok(c, "BEGIN"));
  CAF_CHECK(ok(c, R"(INSERT INTO "T" VALUES (2))"));
  CAF_CHECK(ok(c, "  /* done */ commit"));
  PQfinish(c);
  CAF_CHECK(row_exists(2));
  auto stats = proxy.ctl("stats pg");
  CAF_CHECK_NOT_EQUAL(stats.find(" cuts=1 "), std::string::npos);
  CAF_CHECK_NOT_EQUAL(stats.find(" commits_seen=2"), std::string::npos);
}

// store/pg/pipeline sends BEGIN, the statements and COMMIT through
// PQsendQueryParams in pipeline mode: Parse/Bind/Describe/Execute each, one Sync.
CAF_TEST(a pipelined COMMIT as nodeflow sends it is cut after the server runs it) {
  CAF_REQUIRE_EQUAL(proxy.ctl("cut-after-commit pg 1"), "ok");
  PGconn* c = open_proxied();
  CAF_REQUIRE_EQUAL(PQenterPipelineMode(c), 1);
  for (const char* sql : {"BEGIN", R"(INSERT INTO "T" VALUES (3))", "COMMIT"})
    CAF_REQUIRE_EQUAL(PQsendQueryParams(c, sql, 0, nullptr, nullptr, nullptr, nullptr, 0), 1);
  CAF_REQUIRE_EQUAL(PQpipelineSync(c), 1);
  bool committed = false;
  // Read answers until the connection breaks (or, were nothing cut, the Sync's).
  for (int i = 0; i < 20 && PQstatus(c) == CONNECTION_OK; ++i) {
    PGresult* r = PQgetResult(c);
    if (r && PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    if (r && PQresultStatus(r) == PGRES_COMMAND_OK && std::string{PQcmdStatus(r)} == "COMMIT")
      committed = true;
    PQclear(r);
  }
  CAF_CHECK(!committed);
  CAF_CHECK_EQUAL(PQstatus(c), CONNECTION_BAD);
  PQfinish(c);
  CAF_CHECK(row_exists(3));
}

CAF_TEST(the transactions of nodeflow report a cut COMMIT as in doubt) {
  using namespace nf::store;
  CAF_REQUIRE_EQUAL(proxy.ctl("cut-after-commit pg 2"), "ok");
  {
    auto conn = connection::open(proxied);
    CAF_REQUIRE(conn);
    transaction tx{*conn};
    CAF_REQUIRE(tx.begin());
    auto inserted = conn->run1(insert_t, params::of(int64_t{4}));
    if (!inserted)
      CAF_FAIL("insert: " << nf::message_of(inserted.error()));
    auto done = tx.commit();
    CAF_REQUIRE(!done);
    CAF_CHECK_EQUAL(nf::code_of(done.error()), nf::errc::in_doubt);
  }
  CAF_CHECK(row_exists(4));
  {
    auto conn = connection::open(proxied);
    CAF_REQUIRE(conn);
    transaction tx{*conn};
    CAF_REQUIRE(tx.begin());
    pipeline p{*conn};
    p.add(insert_t, params::of(int64_t{5}));
    auto done = tx.run_and_commit(p);
    CAF_REQUIRE(!done);
    CAF_CHECK_EQUAL(nf::code_of(done.error()), nf::errc::in_doubt);
  }
  CAF_CHECK(row_exists(5));
  CAF_CHECK_NOT_EQUAL(proxy.ctl("stats pg").find(" cuts=2 "), std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
