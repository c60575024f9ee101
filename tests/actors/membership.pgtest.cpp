#define CAF_SUITE actors.membership
#include "tests/actors/actor_fixture.hpp"

#include <algorithm>

#include <caf/exit_reason.hpp>

#include "actors/membership/membership.hpp"

using namespace nf;

namespace {

// "PartitionLeases" rows cannot be deleted: every test gets a fresh database.
struct fixture : test::actor_fixture {
  fixture() : actor_fixture("actors_membership", 4, true) {
  }

  caf::actor member(const std::string& address, int64_t lease_ms = 2000, int partitions = 4,
                    int deciding_nodes = 0) {
    actors::membership_options m;
    m.deciding_nodes = deciding_nodes;
    m.dsn = db->dsn();
    m.address = address;
    m.partition_count = partitions;
    m.heartbeat_ms = 20;
    m.lease_ms = lease_ms;
    m.node = probe_actor;
    return actors::spawn_membership(sys, m);
  }

  std::string node_of(const std::string& address) {
    return scalar(R"(SELECT "id"::text FROM "Nodes" WHERE "address" = $1)",
                  store::params::of(address));
  }

  int64_t live_leases(const std::string& node) {
    if (node.empty()) // not registered yet
      return 0;
    return count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "nodeId" = $1
                      AND "expiresAt" > now())",
                 store::params::of(node));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(membership_tests, fixture)

CAF_TEST(a lone node owns every partition and releases them when it stops) {
  auto a = member("a:1");
  CAF_REQUIRE(test::wait_until([&] { return !node_of("a:1").empty(); }));
  auto id = node_of("a:1");
  CAF_REQUIRE(test::wait_until([&] { return live_leases(id) == 4; }));
  CAF_CHECK(test::wait_until([&] { return hints->count("partitions") >= 1; }));
  auto status = ask<std::string>(a, status_atom_v);
  NF_REQUIRE_OK(status);
  CAF_CHECK_NOT_EQUAL(status->find(id), std::string::npos);
  CAF_CHECK_NOT_EQUAL(status->find(R"("epoch":1)"), std::string::npos);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  CAF_CHECK(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "Nodes" WHERE "id" = $1 AND "stoppedAt" IS NOT NULL)",
                 store::params::of(id))
           == 1;
  }));
  CAF_CHECK_EQUAL(live_leases(id), 0);
}

CAF_TEST(a joining node receives its fair share and epochs only grow) {
  auto a = member("a:1");
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("a:1")) == 4; }));
  auto b = member("b:1");
  CAF_REQUIRE(test::wait_until([&] {
    auto ida = node_of("a:1"), idb = node_of("b:1");
    return !idb.empty() && live_leases(ida) == 2 && live_leases(idb) == 2;
  }));
  // The two moved partitions changed hands with a bumped epoch.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "epoch" = 2)"), 2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "epoch" = 1)"), 2);
  // The node hears who owns each partition (what it forwards requests by).
  CAF_CHECK(test::wait_until([&] {
    auto o = hints->owners_now();
    return o.size() == 4 && std::count(o.begin(), o.end(), "a:1") == 2
           && std::count(o.begin(), o.end(), "b:1") == 2;
  }));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
}

CAF_TEST(the partitions of a dead node are taken over after their leases expire) {
  auto a = member("a:1", 400);
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("a:1")) == 4; }));
  // kill: no exit handler runs, so nothing is released, as with kill -9.
  caf::anon_send_exit(a, caf::exit_reason::kill);
  auto b = member("b:1", 400);
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("b:1")) == 4; }));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "epoch" = 2)"), 4);
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
}

// cluster.deciding_nodes: the longest registered nodes share the partitions; a node beyond
// them owns none until one of them is gone, and then takes its share over.
CAF_TEST(beyond the deciding nodes a node owns no partition until a deciding node is gone) {
  auto a = member("a:1", 400, 4, 2);
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("a:1")) == 4; }));
  auto b = member("b:1", 400, 4, 2);
  CAF_REQUIRE(test::wait_until([&] {
    return live_leases(node_of("a:1")) == 2 && live_leases(node_of("b:1")) == 2;
  }));
  auto c = member("c:1", 400, 4, 2);
  CAF_REQUIRE(test::wait_until([&] { return !node_of("c:1").empty(); }));
  // Over many rounds of c's, every lease looks free between a's and b's renewals: c takes
  // none of them (a node that counted itself deciding would, with a share of 2).
  for (int i = 0; i < 30; ++i) {
    NF_REQUIRE_OK(conn.exec(R"(UPDATE "PartitionLeases" SET "expiresAt" = now() - interval '1 s')"));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "nodeId" = ')"
                        + node_of("c:1") + "'"),
                  0);
  CAF_CHECK_EQUAL(live_leases(node_of("c:1")), 0);
  CAF_CHECK_EQUAL(live_leases(node_of("a:1")), 2);
  CAF_CHECK_EQUAL(live_leases(node_of("b:1")), 2);
  auto status = ask<std::string>(c, status_atom_v);
  NF_REQUIRE_OK(status);
  CAF_CHECK_NOT_EQUAL(status->find(R"("deciding":false)"), std::string::npos);
  // a dies as with kill -9: c takes its two partitions over once they expire.
  caf::anon_send_exit(a, caf::exit_reason::kill);
  CAF_CHECK(test::wait_until([&] {
    return live_leases(node_of("c:1")) == 2 && live_leases(node_of("b:1")) == 2;
  }));
  status = ask<std::string>(c, status_atom_v);
  NF_REQUIRE_OK(status);
  CAF_CHECK_NOT_EQUAL(status->find(R"("deciding":true)"), std::string::npos);
  // A node joining now is the one beyond: it receives nothing.
  auto d = member("d:1", 400, 4, 2);
  CAF_REQUIRE(test::wait_until([&] { return !node_of("d:1").empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CAF_CHECK_EQUAL(live_leases(node_of("d:1")), 0);
  for (const auto& x : {b, c, d})
    caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
}

// A round heartbeats and renews in one round trip, so in one transaction: its leases'
// "expiresAt" is its heartbeat's now() + lease_ms to the microsecond. Separate statements
// (a round trip each, each waiting for a busy server) would stamp different now()s.
CAF_TEST(a round heartbeats and renews its leases in one round trip) {
  auto a = member("a:1", 2000);
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("a:1")) == 4; }));
  auto id = node_of("a:1");
  CAF_CHECK(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "PartitionLeases" l JOIN "Nodes" n ON n."id" = l."nodeId"
                     WHERE n."id" = $1
                       AND l."expiresAt" = n."heartbeatAt" + interval '2000 milliseconds')",
                 store::params::of(id))
           == 4;
  }));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

CAF_TEST(with the database gone a node serves until its leases would expire then drops them) {
  auto a = member("a:1", 600);
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("a:1")) == 4; }));
  CAF_REQUIRE(test::wait_until([&] { return hints->owned_now() == 4; }));
  auto name = scalar("SELECT current_database()");
  // Nobody can connect any more (said from another database: Postgres refuses it for
  // the current one), and membership's connection is cut.
  auto admin = store::connection::open(test::server_dsn());
  NF_REQUIRE_OK(admin);
  auto allow = [&](bool yes) {
    NF_REQUIRE_OK(admin->exec("ALTER DATABASE \"" + name + "\" ALLOW_CONNECTIONS "
                              + (yes ? "true" : "false")));
  };
  allow(false);
  sql(R"(SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid())");
  auto cut = std::chrono::steady_clock::now();
  CAF_REQUIRE(test::wait_until([&] { return hints->owned_now() == 0; }));
  // Not long before the lease ends: 600 ms from its last renewal's send (at most a
  // heartbeat and a round before the cut), less the tenth kept as a safety margin.
  CAF_CHECK(std::chrono::steady_clock::now() - cut >= std::chrono::milliseconds{400});
  allow(true);
  CAF_CHECK(test::wait_until([&] { return hints->owned_now() == 4; }));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

CAF_TEST(a membership stuck in the database stops serving its partitions when their leases lapse) {
  auto a = member("a:1", 600);
  CAF_REQUIRE(test::wait_until([&] { return live_leases(node_of("a:1")) == 4; }));
  CAF_REQUIRE(test::wait_until([&] { return hints->owned_now() == 4; }));
  // The next renewal waits on this lock: membership neither fails nor gets an answer, as
  // with a half-open link. Reads (the test's own) still pass.
  auto blocker = db->connect();
  NF_REQUIRE_OK(blocker.exec(R"(BEGIN; LOCK TABLE "PartitionLeases" IN EXCLUSIVE MODE)"));
  auto cut = std::chrono::steady_clock::now();
  CAF_REQUIRE(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM pg_stat_activity
                     WHERE datname = current_database() AND wait_event_type = 'Lock')")
           >= 1;
  }));
  // Stopped within the lease (600 ms from the last renewal, which was before the cut),
  // and not long before it.
  CAF_CHECK(test::wait_until([&] { return hints->owned_now() == 0; },
                             std::chrono::milliseconds{900}));
  auto stopped = std::chrono::steady_clock::now() - cut;
  CAF_CHECK(stopped >= std::chrono::milliseconds{400});
  CAF_CHECK(stopped <= std::chrono::milliseconds{900});
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM pg_stat_activity
                            WHERE datname = current_database() AND wait_event_type = 'Lock')"),
                  1); // still stuck: the stop came from the lease's clock, not from an error
  // Stuck past a whole lease from the stuck renewal's start: what it renews has lapsed.
  std::this_thread::sleep_until(cut + std::chrono::milliseconds{800});
  NF_REQUIRE_OK(blocker.exec("COMMIT"));
  // Taken back only by acquiring them again, each with a new epoch.
  CAF_CHECK(test::wait_until([&] { return hints->owned_now() == 4; }));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases" WHERE "epoch" = 2)"), 4);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

CAF_TEST(a partition count that disagrees with the database stops membership) {
  caf::scoped_actor self{sys};
  auto a = member("a:1", 2000, 3);
  self->monitor(a);
  caf::error reason;
  self->receive([&](caf::down_msg& dm) { reason = dm.reason; },
                caf::after(std::chrono::seconds{20}) >> [&] { CAF_FAIL("membership did not stop"); });
  CAF_CHECK(nf::code_of(reason) == nf::errc::invalid);
  CAF_CHECK_NOT_EQUAL(nf::message_of(reason).find("ClusterSettings.partitionCount is 4"),
                      std::string::npos);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PartitionLeases")"), 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
