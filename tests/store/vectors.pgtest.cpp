#define CAF_SUITE store.vectors
#include "caf/test/unit_test.hpp"

// "VectorDocuments" against a migrated database: embeddings kept at unit length and ranked
// by cosine, ties by document id; the index's dimension fixed by its first document; bad
// input naming its field; the approximate search ranking only its signature candidates and
// saying so; the same ranking computed in SQL, approximately and (where the server has it)
// by the `vector` extension; deletes, drops and namespaces.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "proto/errors.hpp"
#include "store/namespaces.hpp"
#include "store/vectors.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

// A deterministic embedding of `dims` components (a linear congruential generator).
std::vector<float> pseudo_random(uint32_t seed, int dims) {
  std::vector<float> out;
  uint32_t x = seed * 2654435761u + 1;
  for (int i = 0; i < dims; ++i) {
    x = x * 1664525u + 1013904223u;
    out.push_back(static_cast<float>(x >> 8) / static_cast<float>(1u << 24) - 0.5f);
  }
  return out;
}

std::vector<std::string> ids_of(const vector_search_result& r) {
  std::vector<std::string> out;
  for (const auto& h : r.hits)
    out.push_back(h.id);
  return out;
}

struct fixture {
  test::test_database& db;
  connection conn;

  fixture() : db{test::suite_database("vectors")}, conn{db.connect()} {
    sql(R"(DELETE FROM "VectorIndexes")");
  }

  result sql(const std::string& text, const params& p = {}) {
    auto r = conn.exec(text, p);
    if (!r)
      CAF_FAIL("sql failed: " << message_of(r.error()) << "\n" << text);
    return std::move(*r);
  }

  void put(const std::string& index, std::vector<vector_document> docs,
           const namespace_id& ns = default_namespace) {
    auto r = put_vector_documents(conn, ns, index, docs);
    if (!r)
      CAF_FAIL("put failed: " << message_of(r.error()));
  }

  vector_search_result search(const std::string& index, std::vector<float> q, int limit,
                              vector_backend backend = vector_backend::sql, bool exact = true,
                              int candidates = default_vector_candidates) {
    vector_query query{std::move(q), limit, exact, candidates, backend};
    auto r = search_vectors(conn, default_namespace, index, query);
    if (!r)
      CAF_FAIL("search failed: " << message_of(r.error()));
    return std::move(*r);
  }

  // 300 documents of 16 dimensions, ids "d000".."d299"; d250..d299 repeat d000..d049's
  // embeddings scaled by 2 (exactly, in floating point), so every one of those ties with another document.
  void load_ranking_set() {
    std::vector<vector_document> docs;
    for (int i = 0; i < 300; ++i) {
      char id[8];
      std::snprintf(id, sizeof id, "d%03d", i);
      auto e = pseudo_random(i < 250 ? i : i - 250, 16);
      if (i >= 250)
        for (auto& x : e)
          x *= 2;
      docs.push_back({id, e, R"({"n":)" + std::to_string(i) + "}", std::nullopt});
    }
    put("ranking", docs);
  }

  bool extension_available() {
    return sql(R"(SELECT count(*) AS n FROM pg_available_extensions WHERE name = 'vector')")
             .i64(0, 0) > 0;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(vector_tests, fixture)

CAF_TEST(documents rank by cosine with ties by id) {
  put("t", {{"e", {-1, 0, 0, 0}, "{}", std::nullopt},
            {"b", {2, 0, 0, 0}, R"({"k":"v"})", "two"},
            {"c", {1, 1, 0, 0}, "{}", std::nullopt},
            {"a", {1, 0, 0, 0}, "{}", "one"},
            {"d", {0, 1, 0, 0}, "{}", std::nullopt}});
  for (bool exact : {true, false}) {
    auto r = search("t", {3, 0, 0, 0}, 10, vector_backend::sql, exact);
    CAF_CHECK_EQUAL(ids_of(r), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
    CAF_REQUIRE_EQUAL(r.hits.size(), 5u);
    // Stored at unit length: "b" (twice as long as "a") has the same cosine, 1.
    CAF_CHECK_LESS(std::abs(r.hits[0].score - 1.0), 1e-6);
    CAF_CHECK_LESS(std::abs(r.hits[1].score - 1.0), 1e-6);
    CAF_CHECK_LESS(std::abs(r.hits[2].score - 0.70710678), 1e-6);
    CAF_CHECK_LESS(std::abs(r.hits[4].score + 1.0), 1e-6);
    CAF_CHECK_EQUAL(r.hits[1].metadata_json, R"({"k": "v"})");
    CAF_CHECK_EQUAL(r.hits[1].text.value_or(""), "two");
    CAF_CHECK(!r.hits[2].text);
    // Five documents are fewer than the candidates: the approximate path ranked them all.
    CAF_CHECK(r.exact);
    CAF_CHECK_EQUAL(r.candidates, 5);
  }
  auto top2 = search("t", {0, 1, 0, 0}, 2);
  CAF_CHECK_EQUAL(ids_of(top2), (std::vector<std::string>{"d", "c"}));
}

CAF_TEST(the ranking is the same in sql approximately and with the vector extension) {
  load_ranking_set();
  for (uint32_t q = 0; q < 5; ++q) {
    auto query = pseudo_random(1000 + q, 16);
    auto exact = search("ranking", query, 20, vector_backend::sql, true);
    CAF_CHECK(exact.exact);
    CAF_CHECK(!exact.extension);
    CAF_CHECK_EQUAL(exact.candidates, 300);
    // More candidates than documents: the two-step path ranks them all, in the same order.
    auto all = search("ranking", query, 20, vector_backend::sql, false, 301);
    CAF_CHECK(all.exact);
    CAF_CHECK_EQUAL(ids_of(all), ids_of(exact));
    // A tie (d000 and d250 are one direction) ranks the lower id first.
    for (size_t i = 1; i < exact.hits.size(); ++i)
      CAF_CHECK(exact.hits[i - 1].score > exact.hits[i].score
                || (exact.hits[i - 1].score == exact.hits[i].score
                    && exact.hits[i - 1].id < exact.hits[i].id));
  }
  auto tie = search("ranking", pseudo_random(7, 16), 2);
  CAF_CHECK_EQUAL(ids_of(tie), (std::vector<std::string>{"d007", "d257"}));
  if (!extension_available()) {
    // Said, not passed silently: this server cannot run the extension's half.
    CAF_MESSAGE("SKIPPED the run with the vector extension: this Postgres has no `vector` "
                "extension to install (pg_available_extensions does not list it); the "
                "ranking was checked in SQL only");
    auto refused = search_vectors(conn, default_namespace, "ranking",
                                  vector_query{pseudo_random(1, 16), 5, true, 200,
                                               vector_backend::extension});
    CAF_REQUIRE(!refused);
    CAF_CHECK_EQUAL(code_of(refused.error()), errc::unsupported);
    return;
  }
  sql("CREATE EXTENSION IF NOT EXISTS vector");
  for (uint32_t q = 0; q < 5; ++q) {
    auto query = pseudo_random(1000 + q, 16);
    auto in_sql = search("ranking", query, 20, vector_backend::sql, true);
    auto in_c = search("ranking", query, 20, vector_backend::extension, true);
    CAF_CHECK(in_c.extension);
    CAF_CHECK_EQUAL(ids_of(in_c), ids_of(in_sql));
    for (size_t i = 0; i < in_c.hits.size() && i < in_sql.hits.size(); ++i)
      CAF_CHECK_LESS(std::abs(in_c.hits[i].score - in_sql.hits[i].score), 1e-5);
  }
  auto automatic = search("ranking", pseudo_random(3, 16), 3, vector_backend::automatic, false);
  CAF_CHECK(automatic.extension);
}

CAF_TEST(an approximate search ranks its signature candidates only and says so) {
  load_ranking_set();
  auto r = search("ranking", pseudo_random(42, 16), 3, vector_backend::sql, false, 10);
  CAF_CHECK(!r.exact);
  CAF_CHECK_EQUAL(r.candidates, 10);
  CAF_REQUIRE_EQUAL(r.hits.size(), 3u);
  // A document's own embedding has its own signature: it is always a candidate, and first.
  CAF_CHECK_EQUAL(r.hits[0].id, "d042");
}

CAF_TEST(an index keeps the dimension of its first document) {
  put("dims", {{"a", {1, 2, 3}, "{}", std::nullopt}});
  auto wrong = put_vector_documents(conn, default_namespace, "dims",
                                    {{"b", {1, 2, 3, 4}, "{}", std::nullopt}});
  CAF_REQUIRE(!wrong);
  CAF_CHECK_EQUAL(code_of(wrong.error()), errc::invalid);
  CAF_CHECK_EQUAL(message_of(wrong.error()),
                  R"(documents[0].embedding: expected 3 dimensions (index "dims" holds 3), got 4)");
  auto query = search_vectors(conn, default_namespace, "dims", vector_query{{1, 2}});
  CAF_REQUIRE(!query);
  CAF_CHECK_EQUAL(message_of(query.error()),
                  R"(embedding: expected 3 dimensions (index "dims" holds 3), got 2)");
  // Replacing a document by id keeps one row.
  put("dims", {{"a", {3, 2, 1}, "{}", std::nullopt}});
  CAF_CHECK_EQUAL(sql(R"(SELECT count(*) FROM "VectorDocuments")").i64(0, 0), 1);
  CAF_CHECK_EQUAL(sql(R"(SELECT count(*) FROM "VectorSignatures")").i64(0, 0), 1);
}

CAF_TEST(bad input names its field) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto expect = [&](std::vector<vector_document> docs, const std::string& message) {
    auto r = put_vector_documents(conn, default_namespace, "bad", docs);
    CAF_REQUIRE(!r);
    CAF_CHECK_EQUAL(code_of(r.error()), errc::invalid);
    CAF_CHECK_EQUAL(message_of(r.error()).substr(0, message.size()), message);
  };
  expect({{"a", {1, nan}, "{}", std::nullopt}}, "documents[0].embedding[1]: expected a finite");
  expect({{"a", {}, "{}", std::nullopt}}, "documents[0].embedding: expected a non-empty");
  expect({{"a", {0, 0}, "{}", std::nullopt}}, "documents[0].embedding: every component is zero");
  expect({{"a", {1, 0}, "{}", std::nullopt}, {"a", {0, 1}, "{}", std::nullopt}},
         R"(documents[1].id: "a" is given twice)");
  expect({{"a", {1, 0}, "{}", std::nullopt}, {"b", {0, 1, 1}, "{}", std::nullopt}},
         "documents[1].embedding: expected 2 dimensions");
  expect({{"a", {1, 0}, "[1", std::nullopt}}, "documents[0].metadata");
  auto bad_name = put_vector_documents(conn, default_namespace, "no spaces",
                                       {{"a", {1, 0}, "{}", std::nullopt}});
  CAF_REQUIRE(!bad_name);
  CAF_CHECK_EQUAL(message_of(bad_name.error()).substr(0, 7), "index: ");
  auto missing = search_vectors(conn, default_namespace, "nothing-here", vector_query{{1, 0}});
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(code_of(missing.error()), errc::not_found);
  // Nothing of the refused batches was written.
  CAF_CHECK_EQUAL(sql(R"(SELECT count(*) FROM "VectorIndexes")").i64(0, 0), 0);
}

CAF_TEST(documents are deleted one by one or with their index) {
  put("del", {{"a", {1, 0}, "{}", std::nullopt}, {"b", {0, 1}, "{}", std::nullopt}});
  auto gone = remove_vector_document(conn, default_namespace, "del", "a");
  CAF_REQUIRE(gone);
  CAF_CHECK(*gone);
  auto again = remove_vector_document(conn, default_namespace, "del", "a");
  CAF_REQUIRE(again);
  CAF_CHECK(!*again);
  CAF_CHECK_EQUAL(ids_of(search("del", {1, 0}, 10)), (std::vector<std::string>{"b"}));
  CAF_CHECK_EQUAL(ids_of(search("del", {1, 0}, 10, vector_backend::sql, false)),
                  (std::vector<std::string>{"b"}));
  auto dropped = remove_vector_index(conn, default_namespace, "del");
  CAF_REQUIRE(dropped && *dropped);
  CAF_CHECK_EQUAL(**dropped, 1);
  CAF_CHECK_EQUAL(sql(R"(SELECT count(*) FROM "VectorDocuments")").i64(0, 0), 0);
  CAF_CHECK_EQUAL(sql(R"(SELECT count(*) FROM "VectorSignatures")").i64(0, 0), 0);
  auto none = remove_vector_index(conn, default_namespace, "del");
  CAF_REQUIRE(none);
  CAF_CHECK(!*none);
}

CAF_TEST(an index belongs to its namespace) {
  auto other = sql(R"(INSERT INTO "Namespaces" ("name") VALUES ('vec_other')
                      ON CONFLICT ("name") DO UPDATE SET "name" = EXCLUDED."name"
                      RETURNING "id")").str(0, 0);
  put("shared", {{"mine", {1, 0}, "{}", std::nullopt}});
  put("shared", {{"theirs", {1, 0, 0}, "{}", std::nullopt}}, namespace_id{other});
  CAF_CHECK_EQUAL(ids_of(search("shared", {1, 0}, 10)), (std::vector<std::string>{"mine"}));
  auto theirs = search_vectors(conn, namespace_id{other}, "shared", vector_query{{0, 0, 1}});
  CAF_REQUIRE(theirs);
  CAF_CHECK_EQUAL(ids_of(*theirs), (std::vector<std::string>{"theirs"}));
  // A namespace holding an index is not removed under it.
  auto kept = remove_namespace(conn, "vec_other", nullptr);
  CAF_REQUIRE(!kept);
  CAF_CHECK_EQUAL(code_of(kept.error()), errc::conflict);
  CAF_CHECK(message_of(kept.error()).find("1 vector index(es)") != std::string::npos);
  CAF_REQUIRE(remove_vector_index(conn, namespace_id{other}, "shared"));
  CAF_CHECK(remove_namespace(conn, "vec_other", nullptr));
}

CAF_TEST_FIXTURE_SCOPE_END()
