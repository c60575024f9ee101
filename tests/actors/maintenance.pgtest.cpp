#define CAF_SUITE actors.maintenance
#include "tests/actors/actor_fixture.hpp"

#include <caf/exit_reason.hpp>

#include "actors/maintenance/maintenance.hpp"

using namespace nf;

namespace {

struct fixture : test::actor_fixture {
  fixture() : actor_fixture("actors_maintenance", 16) {
  }

  int64_t partitions_of(const std::string& parent) {
    return count(R"(SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
                     WHERE p.relname = $1)",
                 store::params::of(parent));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(maintenance_tests, fixture)

CAF_TEST(a pass at start creates partitions ahead and prunes expired cached outputs) {
  sql(R"(INSERT INTO "TaskOutputCache" ("namespaceId", "taskDefName", "key", "output", "expiresAt")
         VALUES ($1, 'work', 'old', '{}', now() - interval '1 minute'),
                ($1, 'work', 'fresh', '{}', now() + interval '1 hour'))",
      store::params::of(default_namespace));
  // The migrations create the current month and two ahead; a pass adds the third.
  auto months = partitions_of("WorkflowExecutions");
  auto m = actors::spawn_maintenance(sys, db->dsn(), config::values::defaults());
  CAF_CHECK(test::wait_until([&] { return partitions_of("WorkflowExecutions") == months + 1; }));
  CAF_CHECK(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "TaskOutputCache" WHERE "key" = 'old')") == 0;
  }));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskOutputCache" WHERE "key" = 'fresh')"), 1);
  caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
}

CAF_TEST(a pass deletes outbox events delivered before the retention horizon) {
  // Default horizon: relay.published_retention_s = 7 days.
  sql(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType", "createdAt",
                                     "publishedAt")
         VALUES (0, $1, 'delivered_long_ago', now() - interval '9 days', now() - interval '8 days'),
                (0, $1, 'delivered_yesterday', now() - interval '9 days', now() - interval '1 day'),
                (0, $1, 'never_delivered', now() - interval '9 days', NULL))",
      store::params::of(default_namespace));
  auto m = actors::spawn_maintenance(sys, db->dsn(), config::values::defaults());
  CAF_CHECK(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "eventType" = 'delivered_long_ago')")
           == 0;
  }));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents"
                            WHERE "eventType" IN ('delivered_yesterday', 'never_delivered'))"),
                  2);
  caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
}

CAF_TEST_FIXTURE_SCOPE_END()
