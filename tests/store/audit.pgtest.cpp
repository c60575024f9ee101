#define CAF_SUITE store.audit
#include "caf/test/unit_test.hpp"

// "AuditEvents" (migration 0024) is append-only: the connecting role (a superuser here, the
// strongest case) can neither UPDATE, DELETE nor TRUNCATE it, through the parent or a
// partition, and an expired month's dropped partition is the only way rows leave.

#include <chrono>

#include "proto/errors.hpp"
#include "store/audit.hpp"
#include "store/pg/transaction.hpp"
#include "store/schema/partitions.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::store;

namespace {

struct fixture {
  nf::test::test_database db{"audit"};
  connection conn = db.connect();

  int64_t count(const std::string& sql) {
    auto r = conn.exec(sql);
    CAF_REQUIRE(r);
    return r->i64(0, 0);
  }

  std::string one(const std::string& sql) {
    auto r = conn.exec(sql);
    CAF_REQUIRE(r);
    CAF_REQUIRE_EQUAL(r->rows(), 1);
    return r->str(0, 0);
  }

  int64_t rows() { return count(R"(SELECT count(*) FROM "AuditEvents")"); }

  audit_event event(std::string action, std::string target) {
    audit_event e;
    e.actor = "user:ada";
    e.origin = "http 127.0.0.1:5312";
    e.ns = nf::default_namespace;
    e.action = std::move(action);
    e.target = std::move(target);
    e.details = {{"reason", "because"}};
    return e;
  }

  // `sql` fails, refused by the table (the trigger's SQLSTATE), and changes nothing.
  void refused(const std::string& sql) {
    auto before = one(R"(SELECT count(*)::text || string_agg("target", ',' ORDER BY "id")
                           FROM "AuditEvents")");
    auto r = conn.exec(sql);
    CAF_CHECK(!r);
    if (!r) {
      CAF_CHECK_EQUAL(nf::sqlstate_of(r.error()), "42501");
      CAF_CHECK(nf::message_of(r.error()).find("append-only") != std::string::npos);
    }
    CAF_CHECK_EQUAL(one(R"(SELECT count(*)::text || string_agg("target", ',' ORDER BY "id")
                             FROM "AuditEvents")"),
                    before);
  }

  std::string current_partition() {
    return one(R"(SELECT 'AuditEvents_' || to_char(now() AT TIME ZONE 'UTC', '"y"YYYY"m"MM'))");
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(audit_tests, fixture)

CAF_TEST(events are written in order with the namespace name and read back a page at a time) {
  CAF_REQUIRE(append_audits(conn, {event("workflow.pause", "w1"), event("workflow.resume", "w1"),
                                   event("definitions.register", "task:a")}));
  auto first = read_audit(conn, audit_query{std::nullopt, std::nullopt, std::nullopt, 2});
  CAF_REQUIRE(first);
  CAF_REQUIRE_EQUAL(first->rows.size(), 2u);
  CAF_CHECK_EQUAL(first->rows[0].action, "workflow.pause");
  CAF_CHECK_EQUAL(first->rows[1].action, "workflow.resume");
  CAF_CHECK_EQUAL(first->rows[0].actor, "user:ada");
  CAF_CHECK_EQUAL(first->rows[0].origin, "http 127.0.0.1:5312");
  CAF_CHECK(first->rows[0].ns == std::optional<std::string>{"default"});
  CAF_CHECK_EQUAL(first->rows[0].details, R"({"reason": "because"})");
  CAF_REQUIRE(first->next);
  auto second = read_audit(conn, audit_query{std::nullopt, std::nullopt, first->next, 2});
  CAF_REQUIRE(second);
  CAF_REQUIRE_EQUAL(second->rows.size(), 1u);
  CAF_CHECK_EQUAL(second->rows[0].target, "task:a");
  CAF_CHECK(!second->next);
  auto pauses = read_audit(conn, audit_query{std::nullopt, std::string{"workflow.pause"},
                                             std::nullopt, 10});
  CAF_REQUIRE(pauses);
  CAF_CHECK_EQUAL(pauses->rows.size(), 1u);
  // An event without a name for who did it is refused, and nothing is written.
  auto nobody = event("workflow.pause", "w2");
  nobody.actor.clear();
  auto r = append_audit(conn, nobody);
  CAF_REQUIRE(!r);
  CAF_CHECK(nf::message_of(r.error()).find("actor") != std::string::npos);
  CAF_CHECK_EQUAL(rows(), 3);
}

CAF_TEST(an event written in a transaction that rolls back is gone with it) {
  {
    transaction tx{conn};
    CAF_REQUIRE(tx.begin());
    CAF_REQUIRE(append_audit(tx.conn(), event("workflow.pause", "w1")));
  } // rolled back
  CAF_CHECK_EQUAL(rows(), 0);
}

CAF_TEST(update delete and truncate are refused even for a superuser) {
  CAF_REQUIRE_EQUAL(one("SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user"),
                    "true");
  CAF_REQUIRE(append_audit(conn, event("workflow.pause", "w1")));
  refused(R"(UPDATE "AuditEvents" SET "actor" = 'user:mallory')");
  refused(R"(DELETE FROM "AuditEvents")");
  refused(R"(TRUNCATE "AuditEvents")");
  // A partition is a table of its own: the same, whichever way it is named.
  auto part = "\"" + current_partition() + "\"";
  refused("UPDATE " + part + R"( SET "target" = 'elsewhere')");
  refused("DELETE FROM " + part);
  refused("TRUNCATE " + part);
  // Nor may PUBLIC: the privileges are revoked as well.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM information_schema.role_table_grants
                            WHERE table_name = 'AuditEvents' AND grantee = 'PUBLIC'
                              AND privilege_type IN ('UPDATE', 'DELETE', 'TRUNCATE'))"),
                  0);
  CAF_CHECK_EQUAL(rows(), 1);
}

CAF_TEST(a month without a partition refuses the event rather than losing it) {
  auto r = conn.exec(R"(INSERT INTO "AuditEvents" ("at", "actor", "origin", "action", "target")
                        VALUES (now() - interval '20 years', 'anonymous', 'caf', 'x', 't'))");
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::sqlstate_of(r.error()), "23514"); // no partition of relation found
}

CAF_TEST(only a dropped partition past retention removes rows) {
  auto now = server_now(conn);
  CAF_REQUIRE(now);
  // The server's clock `n` calendar months away.
  auto months_away = [&](int n) {
    auto s = count("SELECT floor(extract(epoch FROM now() + make_interval(months => "
                   + std::to_string(n) + ")))::bigint");
    return std::chrono::system_clock::time_point{std::chrono::seconds{s}};
  };
  // Months 100 and 50 ago get partitions (and every managed table with them).
  partition_manager mgr;
  for (int back : {100, 50})
    CAF_REQUIRE(mgr.ensure_ahead(conn, months_away(-back)));
  for (int back : {100, 50})
    CAF_REQUIRE(conn.exec(R"(INSERT INTO "AuditEvents" ("at", "actor", "origin", "action", "target")
                             VALUES (now() - make_interval(months => )"
                          + std::to_string(back) + R"(), 'anonymous', 'caf', 'old', ')"
                          + std::to_string(back) + "')"));
  CAF_REQUIRE(append_audit(conn, event("workflow.pause", "now")));
  CAF_REQUIRE_EQUAL(rows(), 3);
  auto dropped = mgr.drop_expired(conn, *now);
  CAF_REQUIRE(dropped);
  // 84 months kept: the row of 100 months ago went with its partition, the others stay.
  CAF_CHECK_EQUAL(one(R"(SELECT string_agg("target", ',' ORDER BY "at") FROM "AuditEvents")"),
                  "50,now");
  int audit_dropped = 0;
  for (const auto& name : dropped->dropped)
    audit_dropped += name.rfind("AuditEvents_", 0) == 0 ? 1 : 0;
  CAF_CHECK_EQUAL(audit_dropped, 4); // 100 months ago and the three ensure_ahead made after it
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM pg_inherits
                            WHERE inhparent = '"AuditEvents"'::regclass)"),
                  4 + 4); // 50 months ago and three after it, and the migration's four
  // A shorter retention drops the other old month; the current one stays.
  partition_manager short_lived{partition_settings{3, 48, 12, 48, 24}};
  CAF_REQUIRE(short_lived.drop_expired(conn, *now));
  CAF_CHECK_EQUAL(one(R"(SELECT string_agg("target", ',') FROM "AuditEvents")"), "now");
  // A new partition made by the manager refuses TRUNCATE like the migration's.
  CAF_REQUIRE(mgr.ensure_ahead(conn, months_away(12)));
  auto later = one(R"(SELECT 'AuditEvents_' || to_char((now() + interval '12 months')
                            AT TIME ZONE 'UTC', '"y"YYYY"m"MM'))");
  CAF_CHECK_EQUAL(count("SELECT count(*) FROM pg_trigger WHERE tgname = '" + later
                        + "_no_truncate_trg'"),
                  1);
  refused("TRUNCATE \"" + later + "\"");
}

CAF_TEST_FIXTURE_SCOPE_END()
