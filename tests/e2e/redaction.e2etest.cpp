#define CAF_SUITE e2e.redaction
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "tests/e2e/process.hpp"
#include "tests/support/test_database.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

// What `nodeflow serve --dsn DSN` prints before it exits (it must exit: the database is
// unusable). The suite's server trusts every local connection, so a password in the DSN
// is accepted and ignored, as a real server's would be after checking it.
std::string serve_output(const std::string& dsn, const std::string& name) {
  auto log = "/tmp/nf_e2e_redaction_" + std::to_string(::getpid()) + "_" + name + ".log";
  std::remove(log.c_str());
  test::child_process serve{{NF_NODEFLOW_BIN, "serve", "--dsn", dsn, "--port", "0",
                             "--http-port", "0"},
                            log, false};
  for (int i = 0; i < 300 && serve.running(); ++i)
    std::this_thread::sleep_for(100ms);
  CAF_CHECK(!serve.running());
  std::ifstream in{log};
  std::stringstream text;
  text << in.rdbuf();
  std::remove(log.c_str());
  return text.str();
}

// postgresql://user@host:port/db -> postgresql://user:PASSWORD@host:port/db
std::string with_password(const std::string& uri, const std::string& password) {
  auto at = uri.find('@');
  CAF_REQUIRE(at != std::string::npos);
  return uri.substr(0, at) + ":" + password + uri.substr(at);
}

} // namespace

CAF_TEST(serve names an unmigrated database without its password) {
  test::test_database db{"e2e_redaction", false};
  auto out = serve_output(with_password(db.dsn(), "Sekr1tPw7q"), "unmigrated");
  CAF_MESSAGE(out);
  CAF_CHECK(out.find("not migrated") != std::string::npos);
  CAF_CHECK(out.find("nodeflow migrate --dsn postgresql://postgres:***@") != std::string::npos);
  CAF_CHECK(out.find("Sekr1tPw7q") == std::string::npos);
}

CAF_TEST(a connection string libpq cannot read is not quoted back) {
  // libpq's complaint about this one quotes "Pw9x" ("missing = after ..."); the
  // password's second word has no key of its own for a pattern to find.
  auto out = serve_output("host=127.0.0.1 port=1 password=Sekr1t Pw9x", "malformed");
  CAF_MESSAGE(out);
  CAF_CHECK(out.find("cannot connect to Postgres") != std::string::npos);
  CAF_CHECK(out.find("Sekr1t") == std::string::npos);
  CAF_CHECK(out.find("Pw9x") == std::string::npos);
}
