#define CAF_SUITE store.pg_wrapper
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <functional>
#include <sstream>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::store;

namespace {

const statement select_sum{"test.sum", "SELECT $1::int + $2::int"};
const statement insert_kv{"test.insert_kv",
                          R"(INSERT INTO "Kv" ("k", "v") VALUES ($1, $2) RETURNING "k")"};
const statement count_kv{"test.count_kv", R"(SELECT count(*) FROM "Kv")"};

struct fixture {
  nf::test::test_database db{"pg_wrapper", false};
  connection conn = db.connect();
  fixture() {
    CAF_REQUIRE(conn.exec(R"(CREATE TABLE "Kv" ("k" TEXT PRIMARY KEY, "v" TEXT))"));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(pg_wrapper_tests, fixture)

CAF_TEST(named statements are prepared once and typed on read) {
  auto r = conn.run1(select_sum, params::of(int64_t{2}, int64_t{40}));
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->i64(0, 0), 42);
  CAF_CHECK(conn.is_prepared("test.sum"));
  auto again = conn.run1(select_sum, params::of(int64_t{1}, int64_t{1}));
  CAF_REQUIRE(again);
  CAF_CHECK_EQUAL(again->i64(0, 0), 2);
}

CAF_TEST(unique violation maps to conflict with its sqlstate) {
  CAF_REQUIRE(conn.run(insert_kv, params::of("a", "1")));
  auto dup = conn.run(insert_kv, params::of("a", "2"));
  CAF_REQUIRE(!dup);
  CAF_CHECK_EQUAL(nf::code_of(dup.error()), nf::errc::conflict);
  CAF_CHECK_EQUAL(nf::sqlstate_of(dup.error()), "23505");
}

CAF_TEST(a constraint error tells the client what broke and only the log which row) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.push_back(sink);
  CAF_REQUIRE(conn.run(insert_kv, params::of("row-secret-42", "1")));
  auto dup = conn.run(insert_kv, params::of("row-secret-42", "2"));
  sinks.pop_back();
  CAF_REQUIRE(!dup);
  auto text = nf::message_of(dup.error());
  CAF_MESSAGE(text);
  // DETAIL would say "Key (k)=(row-secret-42) already exists."
  CAF_CHECK_EQUAL(text.find("row-secret-42"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(text.find("duplicate key value violates unique constraint"),
                      std::string::npos);
  CAF_MESSAGE(log.str());
  CAF_CHECK_NOT_EQUAL(log.str().find("23505"), std::string::npos);
  CAF_CHECK_NOT_EQUAL(log.str().find("Key (k)=(row-secret-42) already exists"), std::string::npos);
}

CAF_TEST(a transaction rolls back unless committed) {
  {
    transaction tx{conn};
    CAF_REQUIRE(tx.begin());
    CAF_REQUIRE(conn.run(insert_kv, params::of("x", "1")));
  } // destructor rolls back
  auto n = conn.run1(count_kv);
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(n->i64(0, 0), 0);
}

CAF_TEST(the BEGIN of a transaction travels with its first statement on every path) {
  // transaction::begin sends nothing; the BEGIN goes with the first statement, whichever
  // way that is sent. Were it lost, each insert below would commit on its own.
  auto other = db.connect();
  auto visible = [&] {
    auto n = other.run1(count_kv);
    CAF_REQUIRE(n);
    return n->i64(0, 0);
  };
  auto first_statements = std::vector<std::function<bool(connection&)>>{
    [](connection& c) { return static_cast<bool>(c.run(insert_kv, params::of("p", "1"))); },
    [](connection& c) {
      pipeline p{c};
      p.add(insert_kv, params::of("q", "1"));
      return static_cast<bool>(p.run());
    },
    [](connection& c) { return static_cast<bool>(c.exec(R"(INSERT INTO "Kv" VALUES ('r', '1'))")); },
    [](connection& c) {
      return static_cast<bool>(c.exec(R"(INSERT INTO "Kv" VALUES ($1, '1'))", params::of("s")));
    }};
  int64_t committed = 0;
  for (auto& first : first_statements) {
    {
      transaction tx{conn};
      CAF_REQUIRE(tx.begin());
      CAF_REQUIRE(first(conn));
      CAF_CHECK_EQUAL(visible(), committed); // inside a transaction until the commit
      CAF_REQUIRE(tx.commit());
    }
    CAF_CHECK_EQUAL(visible(), ++committed);
  }
  // The isolation level asked for is the transaction's.
  transaction rr{conn};
  CAF_REQUIRE(rr.begin(isolation::repeatable_read));
  auto level = conn.exec("SELECT current_setting('transaction_isolation')");
  CAF_REQUIRE(level);
  CAF_CHECK_EQUAL(level->str(0, 0), "repeatable read");
  CAF_REQUIRE(rr.commit());
  // A transaction in which nothing ran commits and rolls back without a word to the server.
  transaction empty{conn};
  CAF_REQUIRE(empty.begin());
  CAF_REQUIRE(empty.commit());
  auto outside = conn.exec("SELECT now() = statement_timestamp()");
  CAF_REQUIRE(outside);
  CAF_CHECK_EQUAL(outside->str(0, 0), "t"); // not left inside a transaction
}

CAF_TEST(perform reruns the whole transaction on a serialization failure only) {
  // Two serializable transactions that each read then write the other's
  // premise: one must fail with 40001 and be rerun by perform().
  auto other = db.connect();
  CAF_REQUIRE(conn.exec(R"(INSERT INTO "Kv" VALUES ('a','0'), ('b','0'))"));
  int attempts = 0;
  auto r = perform(
    conn,
    [&](transaction& tx) -> caf::expected<int> {
      ++attempts;
      if (auto s = tx.conn().exec(R"(SELECT "v" FROM "Kv" WHERE "k" = 'b')"); !s)
        return std::move(s.error());
      if (attempts == 1) {
        // A concurrent serializable writer commits in between.
        CAF_REQUIRE(other.exec("BEGIN ISOLATION LEVEL SERIALIZABLE"));
        CAF_REQUIRE(other.exec(R"(SELECT "v" FROM "Kv" WHERE "k" = 'a')"));
        CAF_REQUIRE(other.exec(R"(UPDATE "Kv" SET "v" = '1' WHERE "k" = 'b')"));
        CAF_REQUIRE(other.exec("COMMIT"));
      }
      if (auto u = tx.conn().exec(R"(UPDATE "Kv" SET "v" = '1' WHERE "k" = 'a')"); !u)
        return std::move(u.error());
      return attempts;
    },
    8, isolation::serializable);
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(attempts, 2);
}

CAF_TEST(perform does not retry ordinary errors) {
  int attempts = 0;
  auto r = perform(conn, [&](transaction& tx) -> caf::expected<void> {
    ++attempts;
    auto bad = tx.conn().exec("SELECT 1/0");
    if (!bad)
      return std::move(bad.error());
    return {};
  });
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::invalid);
  CAF_CHECK_EQUAL(attempts, 1);
}

CAF_TEST(a pipeline returns one result per statement in order) {
  pipeline p{conn};
  for (int i = 0; i < 50; ++i)
    p.add(insert_kv, params::of("k" + std::to_string(i), "v"));
  p.add(count_kv, {});
  auto rs = p.run();
  CAF_REQUIRE(rs);
  CAF_REQUIRE_EQUAL(rs->size(), 51u);
  CAF_CHECK_EQUAL((*rs)[7].str(0, 0), "k7");
  CAF_CHECK_EQUAL((*rs)[50].i64(0, 0), 50);
}

CAF_TEST(a failing pipeline is one implicit transaction and reports the error) {
  pipeline p{conn};
  p.add(insert_kv, params::of("p1", "v"));
  p.add(insert_kv, params::of("p1", "again"));
  p.add(insert_kv, params::of("p2", "v"));
  auto rs = p.run();
  CAF_REQUIRE(!rs);
  CAF_CHECK_EQUAL(nf::code_of(rs.error()), nf::errc::conflict);
  auto n = conn.run1(count_kv);
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(n->i64(0, 0), 0); // nothing half-written
  // The connection stays usable and statements stay prepared.
  CAF_CHECK(conn.run(insert_kv, params::of("p3", "v")));
}

CAF_TEST(a pipeline rerun after its batch failed finds its statements prepared) {
  // What perform() does after a deadlock: the first batch parsed the statement,
  // then aborted; the rerun must not send a second prepare under the same name.
  pipeline first{conn};
  first.add(insert_kv, params::of("r1", "v"));
  first.add(insert_kv, params::of("r1", "again"));
  CAF_REQUIRE(!first.run());
  CAF_CHECK(conn.is_prepared("test.insert_kv"));
  pipeline rerun{conn};
  rerun.add(insert_kv, params::of("r1", "v"));
  rerun.add(count_kv, {});
  auto rs = rerun.run();
  CAF_REQUIRE(rs);
  CAF_CHECK_EQUAL((*rs)[1].i64(0, 0), 1);
}

CAF_TEST(arrays round-trip through unnest with quoting and NULLs) {
  auto r = conn.exec(R"(SELECT x FROM unnest($1::text[]) AS x)",
                     params::of(text_array(std::vector<std::optional<std::string>>{
                       std::string{"a\"b"}, std::nullopt, std::string{"c\\d"}, std::string{"{,}"}})));
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->rows(), 4);
  CAF_CHECK_EQUAL(r->str(0, 0), "a\"b");
  CAF_CHECK(r->is_null(1, 0));
  CAF_CHECK_EQUAL(r->str(2, 0), "c\\d");
  CAF_CHECK_EQUAL(r->str(3, 0), "{,}");
}

// A named statement's declared arrays go in the binary format (store/pg/binary_params.hpp);
// the server must read them exactly as it reads the text, on both paths that send them.
CAF_TEST(declared arrays reach the server as their text says on both paths) {
  const statement typed{"test.typed_arrays", R"(
    SELECT $1::uuid[]::text, $2::text[]::text, $3::smallint[]::text, $4::integer[]::text,
           $5::bigint[]::text, $6::boolean[]::text, $7::jsonb[]::text, $8::uuid[]::text)"};
  auto p = params::of(
    text_array(std::vector<std::optional<std::string>>{
      std::string{"0190f6a1-7c2e-7000-8000-00000000002a"}, std::nullopt,
      std::string{"0190F6A17C2E70008000FFFFFFFFFFFF"}}),
    text_array(std::vector<std::optional<std::string>>{
      std::string{"a\"b"}, std::string{"NULL"}, std::nullopt, std::string{"c\\d"},
      std::string{"{,}"}, std::string{""}, std::string{"\u00e9t\u00e9"}}),
    array_literal{"{-32768,32767,NULL}"}, array_literal{"{-2147483648,007,2147483647}"},
    int_array({INT64_MIN, -1, 0, INT64_MAX}), array_literal{"{t,f,NULL,true,false}"},
    array_literal{R"({"{\"a\": [1, \"x\"]}",null,"\"s\""})"}, array_literal{"{}"});
  const char* expected[] = {
    "{0190f6a1-7c2e-7000-8000-00000000002a,NULL,0190f6a1-7c2e-7000-8000-ffffffffffff}",
    R"({"a\"b","NULL",NULL,"c\\d","{,}","",été})",
    "{-32768,32767,NULL}",
    "{-2147483648,7,2147483647}",
    "{-9223372036854775808,-1,0,9223372036854775807}",
    "{t,f,NULL,t,f}",
    R"({"{\"a\": [1, \"x\"]}",NULL,"\"s\""})",
    "{}"};
  auto check = [&](const result& r) {
    CAF_REQUIRE_EQUAL(r.rows(), 1);
    for (int i = 0; i < 8; ++i)
      CAF_CHECK_EQUAL(r.str(0, i), expected[i]);
  };
  auto direct = conn.run(typed, p);
  CAF_REQUIRE(direct);
  check(*direct);
  pipeline batch{conn};
  batch.add(typed, p);
  auto piped = batch.run();
  CAF_REQUIRE(piped);
  check(piped->front());
  // What the encoder does not read as the server would goes as text, and the server
  // names the fault.
  auto bad = conn.run(typed, params::of(array_literal{"{not-a-uuid}"}, array_literal{"{}"},
                                        array_literal{"{}"}, array_literal{"{}"},
                                        array_literal{"{}"}, array_literal{"{}"},
                                        array_literal{"{}"}, array_literal{"{}"}));
  CAF_REQUIRE(!bad);
  CAF_CHECK_NOT_EQUAL(nf::message_of(bad.error()).find("not-a-uuid"), std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
