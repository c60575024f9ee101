#define CAF_SUITE actors.standby_reset
#include "tests/actors/missing_standby.hpp"

#include "tests/support/test_database.hpp"

// Runs after actors.in_doubt whatever became of it (a ctest fixture's cleanup): the
// server's other users commit with synchronous_commit = on and would wait forever for
// a standby left named.

CAF_TEST(no synchronous standby is left named on the shared server) {
  auto admin = nf::test::missing_standby::open(nf::test::server_dsn());
  CAF_REQUIRE(nf::test::missing_standby::reset(admin));
  auto fresh = nf::test::missing_standby::open(nf::test::server_dsn());
  for (int i = 0; i < 200; ++i) {
    auto r = fresh.exec("SHOW synchronous_standby_names");
    CAF_REQUIRE(r);
    if (r->text(0, 0).empty())
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    fresh = nf::test::missing_standby::open(nf::test::server_dsn());
  }
  CAF_FAIL("synchronous_standby_names is still set after the reset");
}
