#define CAF_SUITE store.link
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <future>
#include <map>
#include <thread>

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/errors.hpp"
#include "store/pg/link_settings.hpp"
#include "store/pg/session.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::store;
using namespace std::chrono_literals;

namespace {

// `dsn` (a URI, as the test server's, or key=value) with more parameters, URI-encoded.
std::string with_params(const std::string& dsn, const std::string& query) {
  if (dsn.find("://") == std::string::npos) {
    std::string kv;
    for (char c : query)
      kv += c == '&' ? ' ' : c;
    return dsn + " " + kv;
  }
  return dsn + (dsn.find('?') == std::string::npos ? "?" : "&") + query;
}

std::string setting(connection& c, const std::string& name) {
  auto r = c.exec("SELECT setting FROM pg_settings WHERE name = '" + name + "'");
  CAF_REQUIRE(r);
  return r->str(0, 0);
}

std::string source(connection& c, const std::string& name) {
  auto r = c.exec("SELECT source FROM pg_settings WHERE name = '" + name + "'");
  CAF_REQUIRE(r);
  return r->str(0, 0);
}

// The libpq keys in effect on `c`.
std::map<std::string, std::string> libpq_keys(connection& c) {
  std::map<std::string, std::string> out;
  PQconninfoOption* opts = PQconninfo(c.native());
  for (auto* o = opts; o && o->keyword; ++o)
    if (o->val)
      out[o->keyword] = o->val;
  PQconninfoFree(opts);
  return out;
}

struct fixture {
  nf::test::test_database db{"link", false};
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(link_tests, fixture)

CAF_TEST(every connection carries the link timeouts keepalives and session timeouts) {
  auto c = connection::open(db.dsn());
  CAF_REQUIRE(c);
  // Sent in the startup packet (source "client"), not by a SET afterwards.
  CAF_CHECK_EQUAL(setting(*c, "statement_timeout"), "60000");
  CAF_CHECK_EQUAL(source(*c, "statement_timeout"), "client");
  CAF_CHECK_EQUAL(setting(*c, "lock_timeout"), "30000");
  CAF_CHECK_EQUAL(source(*c, "lock_timeout"), "client");
  CAF_CHECK_EQUAL(setting(*c, "idle_in_transaction_session_timeout"), "60000");
  auto keys = libpq_keys(*c);
  CAF_CHECK_EQUAL(keys["connect_timeout"], "10");
  CAF_CHECK_EQUAL(keys["keepalives"], "1");
  CAF_CHECK_EQUAL(keys["keepalives_idle"], "10");
  CAF_CHECK_EQUAL(keys["keepalives_interval"], "3");
  CAF_CHECK_EQUAL(keys["keepalives_count"], "3");
  CAF_CHECK_EQUAL(keys["tcp_user_timeout"], "20000");
}

CAF_TEST(a value the dsn names wins over the default and the rest still apply) {
  auto dsn = with_params(db.dsn(), "connect_timeout=7&keepalives_idle=42&options=-c%20"
                                   "statement_timeout%3D1234%20--search-path%3Dpg_catalog");
  auto c = connection::open(dsn);
  CAF_REQUIRE(c);
  CAF_CHECK_EQUAL(setting(*c, "statement_timeout"), "1234");
  CAF_CHECK_EQUAL(setting(*c, "search_path"), "pg_catalog"); // the DSN's own options kept
  CAF_CHECK_EQUAL(setting(*c, "lock_timeout"), "30000");     // merged in beside them
  CAF_CHECK_EQUAL(setting(*c, "idle_in_transaction_session_timeout"), "60000");
  auto keys = libpq_keys(*c);
  CAF_CHECK_EQUAL(keys["connect_timeout"], "7");
  CAF_CHECK_EQUAL(keys["keepalives_idle"], "42");
  CAF_CHECK_EQUAL(keys["keepalives_interval"], "3");
}

CAF_TEST(a statement or lock timeout is a retryable error and the connection lives on) {
  link_settings quick;
  quick.statement_timeout_ms = 200;
  quick.lock_timeout_ms = 200;
  auto c = connection::open(db.dsn(), quick);
  CAF_REQUIRE(c);
  auto t0 = std::chrono::steady_clock::now();
  auto slow = c->exec("SELECT pg_sleep(5)");
  CAF_REQUIRE(!slow);
  CAF_CHECK(nf::code_of(slow.error()) == nf::errc::unavailable);
  CAF_CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  CAF_CHECK(c->exec("SELECT 1"));

  auto holder = db.connect();
  CAF_REQUIRE(holder.exec(R"(CREATE TABLE "Held" ("k" int))"));
  CAF_REQUIRE(holder.exec(R"(BEGIN; LOCK TABLE "Held" IN ACCESS EXCLUSIVE MODE)"));
  auto locked = c->exec(R"(SELECT count(*) FROM "Held")");
  CAF_REQUIRE(!locked);
  CAF_CHECK(nf::code_of(locked.error()) == nf::errc::unavailable);
  CAF_CHECK(holder.exec("COMMIT"));
  CAF_CHECK(c->exec(R"(SELECT count(*) FROM "Held")"));
}

CAF_TEST(a session idle in a transaction past its timeout is closed and the session reconnects) {
  session s{with_params(db.dsn(), "options=-c%20idle_in_transaction_session_timeout%3D300")};
  auto c = s.get();
  CAF_REQUIRE(c);
  int first = (*c)->backend_pid();
  CAF_REQUIRE((*c)->exec("BEGIN"));
  std::this_thread::sleep_for(800ms);
  auto r = (*c)->exec("SELECT 1");
  CAF_REQUIRE(!r);
  CAF_CHECK(nf::code_of(r.error()) == nf::errc::conn_broken);
  s.on_error(r.error());
  auto again = s.get();
  CAF_REQUIRE(again);
  CAF_CHECK_NOT_EQUAL((*again)->backend_pid(), first);
  CAF_CHECK((*again)->exec("SELECT 1"));
}

CAF_TEST(a server that accepts and never answers is given up on within connect_timeout) {
  // A listening socket on loopback that never accepts: the kernel completes the
  // handshake, libpq sends its first packet and waits for an answer that never comes.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  CAF_REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CAF_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  CAF_REQUIRE(::listen(fd, 8) == 0);
  socklen_t len = sizeof addr;
  CAF_REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  auto dsn = "host=127.0.0.1 port=" + std::to_string(ntohs(addr.sin_port))
             + " dbname=none user=none";
  link_settings s;
  s.connect_timeout_s = 2; // libpq's least
  auto t0 = std::chrono::steady_clock::now();
  auto attempt = std::async(std::launch::async, [&] { return connection::open(dsn, s); });
  bool gave_up = attempt.wait_for(10s) == std::future_status::ready;
  ::close(fd); // resets the pending connection: a hung attempt ends too
  auto c = attempt.get();
  auto took = std::chrono::steady_clock::now() - t0;
  CAF_REQUIRE(gave_up);
  CAF_REQUIRE(!c);
  CAF_CHECK(nf::code_of(c.error()) == nf::errc::conn_broken);
  CAF_CHECK(took >= 1500ms);
  CAF_CHECK(took < 5s);
  CAF_MESSAGE("gave up after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                               << " ms: " << nf::message_of(c.error()));
}

CAF_TEST_FIXTURE_SCOPE_END()
