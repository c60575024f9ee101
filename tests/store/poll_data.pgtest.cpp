#define CAF_SUITE store.poll_data
#include "caf/test/unit_test.hpp"

// Poll data (migration 0038): what the api writes of the polls it took keeps each worker's
// latest poll per task type and domain, reads back by namespace and type, and is pruned once
// a worker stopped polling.

#include "store/poll_data.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

const namespace_id other_namespace{"00000000-0000-0000-0000-0000000000aa"};

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("poll_data") { sql(R"(DELETE FROM "PollData")"); }

  // Milliseconds between the row's time and the database's now.
  int64_t age_ms(const std::string& type, const std::string& worker) {
    return count(R"(SELECT (extract(epoch FROM now() - "lastPollAt") * 1000)::bigint
                      FROM "PollData" WHERE "taskType" = $1 AND "workerId" = $2)",
                 params::of(type, worker));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(poll_data_tests, fixture)

CAF_TEST(a worker keeps its latest poll of each task type and domain) {
  NF_REQUIRE_OK(record_polls(conn, {{default_namespace, "charge", "", "w1", 60000},
                                    {default_namespace, "charge", "eu", "w1", 1000},
                                    {default_namespace, "ship", "", "w2", 0},
                                    {other_namespace, "charge", "", "w9", 0}}));
  auto ages = age_ms("charge", "w1");
  CAF_CHECK(ages >= 59000 && ages <= 61000);
  // An older note never moves a row back; a newer one moves it on. The same key twice in
  // one write (two nodes' notes merged) is one row.
  NF_REQUIRE_OK(record_polls(conn, {{default_namespace, "charge", "", "w1", 120000}}));
  CAF_CHECK(age_ms("charge", "w1") < 62000);
  NF_REQUIRE_OK(record_polls(conn, {{default_namespace, "charge", "", "w1", 5000},
                                    {default_namespace, "charge", "", "w1", 2000}}));
  CAF_CHECK(age_ms("charge", "w1") < 3000);
  auto charge = read_poll_data(conn, default_namespace, "charge", 100);
  NF_REQUIRE_OK(charge);
  CAF_REQUIRE_EQUAL(charge->size(), 2u);
  CAF_CHECK_EQUAL((*charge)[0].domain, "");
  CAF_CHECK_EQUAL((*charge)[1].domain, "eu");
  CAF_CHECK_EQUAL((*charge)[0].worker_id, "w1");
  auto all = read_poll_data(conn, default_namespace, "", 100);
  NF_REQUIRE_OK(all);
  CAF_CHECK_EQUAL(all->size(), 3u);
  auto other = read_poll_data(conn, other_namespace, "", 100);
  NF_REQUIRE_OK(other);
  CAF_REQUIRE_EQUAL(other->size(), 1u);
  CAF_CHECK_EQUAL((*other)[0].worker_id, "w9");
}

CAF_TEST(poll data of workers that stopped polling is pruned) {
  NF_REQUIRE_OK(record_polls(conn, {{default_namespace, "charge", "", "gone", 0},
                                    {default_namespace, "charge", "", "here", 0}}));
  sql(R"(UPDATE "PollData" SET "lastPollAt" = now() - interval '169 hours'
          WHERE "workerId" = 'gone')");
  auto n = prune_poll_data(conn, 168, 100);
  NF_REQUIRE_OK(n);
  CAF_CHECK_EQUAL(*n, 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "PollData")"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
