#define CAF_SUITE e2e.old_postgres
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "proto/errors.hpp"
#include "tests/e2e/process.hpp"
#include "tests/support/test_database.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// A server that says it is PostgreSQL 17.5. current_setting resolves by the search path,
// and a search path that names pg_catalog explicitly after another schema lets that
// schema's function of the same signature win: nodeflow's own capability query (an
// unqualified current_setting) then reads these, while everything else is the real
// server's.
constexpr const char* pg17_shim = R"(
CREATE SCHEMA "pg17";
CREATE FUNCTION "pg17"."current_setting"("name" text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE "name" WHEN 'server_version_num' THEN '170005' WHEN 'server_version' THEN '17.5'
         ELSE pg_catalog.current_setting("name") END $$;
CREATE FUNCTION "pg17"."current_setting"("name" text, "missing_ok" boolean) RETURNS text
  LANGUAGE sql STABLE AS $$
  SELECT CASE "name" WHEN 'server_version_num' THEN '170005' WHEN 'server_version' THEN '17.5'
         ELSE pg_catalog.current_setting("name", "missing_ok") END $$;
)";

struct fixture {
  test::test_database db{"e2e_old_postgres", false};
  std::string dsn = db.dsn() + "?options=-csearch_path%3Dpg17,pg_catalog";

  fixture() {
    auto c = db.connect();
    CAF_REQUIRE(c.exec(pg17_shim));
  }

  // Runs `nodeflow ARGS --dsn DSN` to its end: its exit status and what it printed.
  std::pair<int, std::string> run(std::vector<std::string> args) {
    auto log = "/tmp/nf_e2e_old_postgres_" + std::to_string(::getpid()) + "_" + args[0] + ".log";
    std::remove(log.c_str());
    args.insert(args.begin(), NF_NODEFLOW_BIN);
    args.push_back("--dsn");
    args.push_back(dsn);
    test::child_process p{args, log, false};
    for (int i = 0; i < 300 && p.running(); ++i)
      std::this_thread::sleep_for(100ms);
    CAF_REQUIRE(!p.running());
    auto out = test::read_file(log);
    std::remove(log.c_str());
    CAF_REQUIRE(p.status());
    CAF_REQUIRE(WIFEXITED(*p.status()));
    return {WEXITSTATUS(*p.status()), out};
  }

  // Tables, views, sequences and functions outside the system schemas, besides the shim.
  int64_t objects_written() {
    auto c = db.connect();
    auto r = c.exec(R"(
      SELECT (SELECT count(*) FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
               WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast'))
           + (SELECT count(*) FROM pg_proc f JOIN pg_namespace n ON n.oid = f.pronamespace
               WHERE n.nspname NOT IN ('pg_catalog', 'information_schema'))
           - 2 AS "written")");
    CAF_REQUIRE(r);
    return r->i64(0, 0);
  }

  void check_refusal(const std::string& out) {
    CAF_CHECK(out.find("PostgreSQL 18") != std::string::npos);
    CAF_CHECK(out.find("17.5") != std::string::npos);
    CAF_CHECK(out.find("170005") != std::string::npos);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(old_postgres_tests, fixture)

CAF_TEST(the shim makes the server look like PostgreSQL 17 to nodeflow s connection) {
  auto c = store::connection::open(dsn);
  CAF_REQUIRE(c);
  auto r = c->exec("SELECT current_setting('server_version_num'), current_setting('TimeZone')");
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->str(0, 0), "170005");
  CAF_CHECK_EQUAL(r->str(0, 1), "UTC"); // everything else is the real server's
}

CAF_TEST(migrate refuses a server older than PostgreSQL 18 and writes nothing) {
  auto [code, out] = run({"migrate"});
  CAF_MESSAGE(out);
  CAF_CHECK_NOT_EQUAL(code, 0);
  check_refusal(out);
  CAF_CHECK_EQUAL(objects_written(), 0);
}

CAF_TEST(serve refuses a server older than PostgreSQL 18 and writes nothing) {
  auto [code, out] = run({"serve", "--migrate", "--port", "0", "--http-port", "0"});
  CAF_MESSAGE(out);
  CAF_CHECK_NOT_EQUAL(code, 0);
  check_refusal(out);
  CAF_CHECK_EQUAL(objects_written(), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
