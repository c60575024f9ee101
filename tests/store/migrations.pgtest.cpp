#define CAF_SUITE store.migrations
#include "caf/test/unit_test.hpp"

#include <thread>

#include "store/schema/capabilities.hpp"
#include "store/schema/migrator.hpp"
#include "proto/errors.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::store;

namespace {

const statement count_tables{
  "test.count_tables",
  R"(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p'))"};

int64_t table_count(connection& conn) {
  auto r = conn.run1(count_tables);
  CAF_REQUIRE(r);
  return r->i64(0, 0);
}

const statement set_checksum{
  "test.set_checksum",
  R"(UPDATE "SchemaMigrations" SET "checksum" = $2 WHERE "name" = $1)"};

// Gives the ledger row of `name` the checksum an earlier build recorded for it.
void record_legacy(connection& conn, const migration& m) {
  CAF_REQUIRE(!m.legacy.empty());
  auto r = conn.run(set_checksum, params::of(m.name, m.legacy.front().recorded));
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->affected(), 1);
}

bool verifies(connection& conn, const std::vector<migration>& manifest) {
  auto r = migrator{manifest}.up(conn);
  if (!r)
    return false;
  auto ready = readiness(conn, manifest);
  CAF_REQUIRE(ready);
  return r->empty() && ready->ready;
}

const migration& find(const std::vector<migration>& manifest, const std::string& name) {
  for (const auto& m : manifest)
    if (m.name == name)
      return m;
  CAF_FAIL("no migration " << name);
  return manifest.front();
}

} // namespace

CAF_TEST(the server passes the capability check) {
  nf::test::test_database db{"caps", false};
  auto conn = db.connect();
  auto info = check_capabilities(conn);
  CAF_REQUIRE(info);
  CAF_CHECK_GREATER_OR_EQUAL(info->version_num, 180000);
}

CAF_TEST(up then down then up leaves the same schema and a current ledger) {
  nf::test::test_database db{"updown", false};
  auto conn = db.connect();
  migrator m;
  auto first = m.up(conn);
  CAF_REQUIRE(first);
  CAF_CHECK_EQUAL(first->size(), embedded_migrations().size());
  auto tables = table_count(conn);
  CAF_CHECK_GREATER(tables, 10);
  auto again = m.up(conn);
  CAF_REQUIRE(again);
  CAF_CHECK(again->empty());
  auto down = m.down_all(conn);
  CAF_REQUIRE(down);
  CAF_CHECK_EQUAL(down->size(), embedded_migrations().size());
  CAF_CHECK_EQUAL(table_count(conn), 1); // only the migrator's own ledger
  auto second = m.up(conn);
  CAF_REQUIRE(second);
  CAF_CHECK_EQUAL(table_count(conn), tables);
  auto ready = readiness(conn);
  CAF_REQUIRE(ready);
  CAF_CHECK(ready->ready);
}

CAF_TEST(a changed applied migration is refused by name) {
  nf::test::test_database db{"changed", false};
  auto conn = db.connect();
  std::vector<migration> manifest = embedded_migrations();
  CAF_REQUIRE(migrator{manifest}.up(conn));
  manifest[0].up += "\nSELECT 1;\n";
  auto r = migrator{manifest}.up(conn);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::invalid);
  CAF_CHECK(nf::message_of(r.error()).find("migration " + manifest[0].name + " was changed")
            != std::string::npos);
  auto ready = readiness(conn, manifest);
  CAF_REQUIRE(ready);
  CAF_CHECK(!ready->ready);
}

CAF_TEST(a failing migration rolls back whole and names itself) {
  nf::test::test_database db{"failing", false};
  auto conn = db.connect();
  std::vector<migration> manifest = embedded_migrations();
  manifest.push_back(migration{"9999_broken", true,
                               R"(CREATE TABLE "Half" ("a" INT); SELECT 1/0;)",
                               R"(DROP TABLE "Half";)"});
  auto r = migrator{manifest}.up(conn);
  CAF_REQUIRE(!r);
  CAF_CHECK(nf::message_of(r.error()).find("migration 9999_broken failed") != std::string::npos);
  auto half = conn.exec(R"(SELECT to_regclass('"Half"') IS NULL)");
  CAF_REQUIRE(half);
  CAF_CHECK(half->boolean(0, 0));
  auto states = migrator{manifest}.status(conn);
  CAF_REQUIRE(states);
  CAF_CHECK(!states->back().applied);
  CAF_CHECK(states->front().applied); // the good ones before it stay applied
}

CAF_TEST(four nodes migrating at once apply each migration exactly once) {
  nf::test::test_database db{"concurrent", false};
  std::vector<std::thread> nodes;
  std::vector<size_t> applied(4, 0);
  std::vector<bool> ok(4, false);
  for (int i = 0; i < 4; ++i)
    nodes.emplace_back([&, i] {
      auto conn = connection::open(db.dsn());
      if (!conn)
        return;
      auto r = migrator{}.up(*conn);
      ok[i] = static_cast<bool>(r);
      if (r)
        applied[i] = r->size();
    });
  for (auto& t : nodes)
    t.join();
  size_t total = 0;
  for (int i = 0; i < 4; ++i) {
    CAF_CHECK(ok[i]);
    total += applied[i];
  }
  CAF_CHECK_EQUAL(total, embedded_migrations().size());
}

CAF_TEST(a database migrated by an earlier build verifies) {
  // Earlier builds recorded the sha256 of each raw file; every migration released then has
  // that checksum in migrations/legacy_checksums.
  nf::test::test_database db{"legacy", false};
  auto conn = db.connect();
  const auto& manifest = embedded_migrations();
  CAF_REQUIRE(migrator{manifest}.up(conn));
  // Migrations released after the switch never had a raw-file checksum (the list is frozen).
  for (const auto& m : manifest) {
    if (m.legacy.empty())
      continue;
    CAF_MESSAGE(m.name);
    record_legacy(conn, m);
  }
  auto states = migrator{manifest}.status(conn);
  CAF_REQUIRE(states);
  for (const auto& s : *states)
    if (!s.checksum_matches)
      CAF_ERROR("migration " << s.name << ": its SQL is no longer the SQL earlier builds "
                                          "applied; add a new migration instead of editing it");
  CAF_CHECK(verifies(conn, manifest));
  // Edits to the comments and layout of a released migration still verify.
  std::vector<migration> edited = manifest;
  auto& m = edited.back();
  m.up = "-- a comment rewritten after release\n" + m.up + "\n\n/* and one added */\n";
  CAF_CHECK(verifies(conn, edited));
}

CAF_TEST(a change to the SQL of an applied migration is refused whichever checksum it has) {
  nf::test::test_database db{"sqlchange", false};
  auto conn = db.connect();
  const auto& manifest = embedded_migrations();
  CAF_REQUIRE(migrator{manifest}.up(conn));
  const std::string name = "0013_outbox_published_without_sinks";
  std::vector<migration> changed = manifest;
  for (auto& m : changed)
    if (m.name == name) {
      auto at = m.up.find("ELSE now() END");
      CAF_REQUIRE(at != std::string::npos);
      m.up.replace(at, 14, "ELSE NULL END");
    }
  // This build's checksum in the ledger.
  auto r = migrator{changed}.up(conn);
  CAF_REQUIRE(!r);
  CAF_CHECK(nf::message_of(r.error()).find("migration " + name + " was changed") != std::string::npos);
  CAF_CHECK(!verifies(conn, changed));
  // An earlier build's checksum in the ledger: it stands for the SQL as released only.
  record_legacy(conn, find(manifest, name));
  CAF_CHECK(verifies(conn, manifest));
  r = migrator{changed}.up(conn);
  CAF_REQUIRE(!r);
  CAF_CHECK(nf::message_of(r.error()).find("migration " + name + " was changed") != std::string::npos);
  auto ready = readiness(conn, changed);
  CAF_REQUIRE(ready);
  CAF_CHECK(!ready->ready);
}
