#include "tests/support/test_database.hpp"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <unistd.h>

#include "store/schema/migrator.hpp"
#include "proto/errors.hpp"

namespace nf::test {

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "test_database: %s\n", msg.c_str());
  std::abort();
}

store::connection open_or_die(const std::string& dsn) {
  auto c = store::connection::open(dsn);
  if (!c)
    die(nf::message_of(c.error()));
  return std::move(*c);
}

} // namespace

std::string server_dsn() {
  if (const char* env = std::getenv("NF_TEST_DSN"))
    return env;
  std::ifstream in{std::string{NF_TEST_PG_DIR} + "/dsn"};
  std::string dsn;
  if (!std::getline(in, dsn) || dsn.empty())
    die("no test Postgres: run the tests through ctest (its `pg` fixture starts one) "
        "or set NF_TEST_DSN to a Postgres 18 DSN");
  return dsn;
}

test_database::test_database(const std::string& suite, bool migrated) {
  static std::atomic<int> counter{0};
  name_ = "nft_";
  for (char c : suite)
    name_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  name_ += "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  auto admin = open_or_die(server_dsn());
  if (auto r = admin.exec("CREATE DATABASE \"" + name_ + "\""); !r)
    die("CREATE DATABASE " + name_ + ": " + nf::message_of(r.error()));
  dsn_ = with_database(server_dsn(), name_);
  if (migrated) {
    auto conn = open_or_die(dsn_);
    store::migrator m;
    if (auto applied = m.up(conn); !applied)
      die("migrating " + name_ + ": " + nf::message_of(applied.error()));
  }
}

test_database::~test_database() {
  auto admin = store::connection::open(server_dsn());
  if (admin)
    (void) admin->exec("DROP DATABASE IF EXISTS \"" + name_ + "\" WITH (FORCE)");
}

store::connection test_database::connect() const {
  return open_or_die(dsn_);
}

} // namespace nf::test
