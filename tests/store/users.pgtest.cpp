#define CAF_SUITE store.users
#include "caf/test/unit_test.hpp"

// The users' repository against a migrated database: a user made, listed without its hash,
// given a new hash, disabled (kept, and the first time kept); what a node loads (the active
// users, no hash) and what a login reads (one active user's hash). Bad input names the
// field; the table's CHECKs refuse a name of another spelling and a hash that is not
// argon2id even from a statement that skips the repository.

#include "proto/errors.hpp"
#include "store/users.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

// crypto_pwhash_str's shape; the store neither makes nor checks hashes.
const std::string hash_a = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo";
const std::string hash_b = "$argon2id$v=19$m=65536,t=2,p=1$b3RoZXJzYWx0c2E$b3RoZXJoYXNoaGE";

struct fixture {
  test::test_database& db;
  connection conn;

  fixture() : db{test::suite_database("users")}, conn{db.connect()} {
    sql(R"(DELETE FROM "Users")");
  }

  result sql(const std::string& text, const params& p = {}) {
    auto r = conn.exec(text, p);
    if (!r)
      CAF_FAIL("sql failed: " << message_of(r.error()) << "\n" << text);
    return std::move(*r);
  }

  std::string make(const std::string& name, const std::string& role = "reader") {
    auto id = insert_user(conn, {name, hash_a, role, "default"});
    CAF_REQUIRE(id);
    return *id;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(users_tests, fixture)

CAF_TEST(a user is made listed and read without its hash) {
  auto id = make("ada", "operator");
  auto users = list_users(conn);
  CAF_REQUIRE(users);
  CAF_REQUIRE_EQUAL(users->size(), 1u);
  CAF_CHECK_EQUAL((*users)[0].id, id);
  CAF_CHECK_EQUAL((*users)[0].name, "ada");
  CAF_CHECK_EQUAL((*users)[0].role, "operator");
  CAF_CHECK_EQUAL((*users)[0].namespace_name, "default");
  CAF_CHECK(!(*users)[0].disabled_at);
  auto active = active_users(conn);
  CAF_REQUIRE(active && active->size() == 1u);
  CAF_CHECK_EQUAL((*active)[0].name, "ada");
  auto creds = user_credentials_of(conn, "ada");
  CAF_REQUIRE(creds && *creds);
  CAF_CHECK_EQUAL((*creds)->password_hash, hash_a);
  CAF_CHECK_EQUAL((*creds)->user.id, id);
  auto none = user_credentials_of(conn, "nobody");
  CAF_REQUIRE(none);
  CAF_CHECK(!*none);
}

CAF_TEST(a new password replaces the hash) {
  make("bo");
  CAF_REQUIRE(set_user_password(conn, "bo", hash_b));
  auto creds = user_credentials_of(conn, "bo");
  CAF_REQUIRE(creds && *creds);
  CAF_CHECK_EQUAL((*creds)->password_hash, hash_b);
  auto missing = set_user_password(conn, "nobody", hash_b);
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(code_of(missing.error()), errc::not_found);
}

CAF_TEST(a disabled user is kept but neither loaded nor read for a login) {
  make("cy");
  make("di");
  CAF_REQUIRE(disable_user(conn, "cy"));
  auto first = sql(R"(SELECT "disabledAt"::text AS at FROM "Users" WHERE "name" = 'cy')");
  CAF_REQUIRE(disable_user(conn, "cy")); // again: the first time is kept
  auto second = sql(R"(SELECT "disabledAt"::text AS at FROM "Users" WHERE "name" = 'cy')");
  CAF_CHECK_EQUAL(first.str(0, first.column_named("at")), second.str(0, second.column_named("at")));
  auto active = active_users(conn);
  CAF_REQUIRE(active && active->size() == 1u);
  CAF_CHECK_EQUAL((*active)[0].name, "di");
  auto creds = user_credentials_of(conn, "cy");
  CAF_REQUIRE(creds);
  CAF_CHECK(!*creds);
  auto users = list_users(conn);
  CAF_REQUIRE(users && users->size() == 2u);
  CAF_CHECK((*users)[0].disabled_at.has_value());
  auto missing = disable_user(conn, "nobody");
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(code_of(missing.error()), errc::not_found);
}

CAF_TEST(bad input names the field and writes nothing) {
  make("eve");
  auto taken = insert_user(conn, {"eve", hash_a, "reader", "default"});
  CAF_REQUIRE(!taken);
  CAF_CHECK_EQUAL(code_of(taken.error()), errc::conflict);
  CAF_CHECK(message_of(taken.error()).find("name:") == 0);
  auto role = insert_user(conn, {"fay", hash_a, "root", "default"});
  CAF_REQUIRE(!role);
  CAF_CHECK(message_of(role.error()).find("role:") == 0);
  auto ns = insert_user(conn, {"fay", hash_a, "reader", "nowhere"});
  CAF_REQUIRE(!ns);
  CAF_CHECK(message_of(ns.error()).find("namespace:") == 0);
  // The table's own rules, whoever writes.
  CAF_CHECK(!insert_user(conn, {"Eve", hash_a, "reader", "default"}));
  CAF_CHECK(!insert_user(conn, {".eve", hash_a, "reader", "default"}));
  CAF_CHECK(!insert_user(conn, {"fay", "plain-text-password", "reader", "default"}));
  auto n = sql(R"(SELECT count(*) AS n FROM "Users")");
  CAF_CHECK_EQUAL(n.i64(0, n.column_named("n")), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
