#define CAF_SUITE store.explain_search
#include "caf/test/unit_test.hpp"

// A list page reads about a page of index entries however deep it is and whatever plan the
// prepared statement has (store/api_reads.cpp): its keyset and time bounds bound the index
// scan even in a generic plan, and the API's store workers plan each execution with its values
// (store::plan_each_execution), so a status no execution has costs nothing.

#include <boost/json.hpp>

#include "store/api_reads.hpp"
#include "store/pg/link_settings.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

constexpr auto ns = "00000000-0000-0000-0000-000000000001";

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("store_explain_search") {
    // One millisecond apart: executions sharing a start time are all read at a cursor on
    // one of them (the index orders by "startedAt" only), and generate_series makes
    // thousands a millisecond, as many as the machine's speed allows.
    sql(R"(INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId", "workflowName",
                                              "workflowVersion", "status", "endedAt", "shard")
           SELECT id, uuid_extract_timestamp(id), '00000000-0000-0000-0000-000000000001', 'wf', 1,
                  'COMPLETED', uuid_extract_timestamp(id), 0
             FROM (SELECT uuidv7(-(g * interval '1 millisecond')) AS id
                     FROM generate_series(1, 20000) g) n)");
    sql(R"(ANALYZE "WorkflowExecutions")");
    // What a prepared statement runs after its first five executions, at worst.
    sql("SET plan_cache_mode = force_generic_plan");
  }

  boost::json::object explain_analyze(const std::string& execute) {
    auto text = scalar("EXPLAIN (ANALYZE, FORMAT JSON) " + execute);
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    CAF_REQUIRE(!ec);
    return v.as_array().at(0).as_object().at("Plan").as_object();
  }

  /// Rows the plan's scans of "WorkflowExecutions" read, over every loop: those they returned
  /// and those their filter threw away.
  static double index_rows(const boost::json::object& plan) {
    double n = 0;
    auto relation = plan.if_contains("Relation Name");
    if (relation && std::string(relation->as_string()).rfind("WorkflowExecutions", 0) == 0) {
      double removed = 0;
      if (auto* r = plan.if_contains("Rows Removed by Filter"))
        removed = r->to_number<double>();
      n += (plan.at("Actual Rows").to_number<double>() + removed)
           * plan.at("Actual Loops").to_number<double>();
    }
    if (auto* kids = plan.if_contains("Plans"))
      for (const auto& k : kids->as_array())
        n += index_rows(k.as_object());
    return n;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(explain_search_tests, fixture)

CAF_TEST(a page half way back reads about a page of index entries in a generic plan) {
  auto middle = scalar(R"(SELECT "id" FROM "WorkflowExecutions"
                           ORDER BY "startedAt" DESC, "id" DESC OFFSET 10000 LIMIT 1)");
  execution_search q;
  q.after = workflow_id{middle};
  q.limit = 50;
  auto page = search_executions(conn, q);
  CAF_REQUIRE(page);
  CAF_REQUIRE_EQUAL(page->items.size(), 50u);
  CAF_CHECK(page->items.front().id.str() < middle);
  auto plan = explain_analyze(std::string{R"(EXECUTE "api.search"(')"} + ns + "', NULL, NULL, '"
                              + middle + "', 50)");
  auto read = index_rows(plan);
  CAF_MESSAGE("index entries read: " << read);
  CAF_CHECK_LESS_OR_EQUAL(read, 200.0);
}

CAF_TEST(a status no execution has reads nothing when each execution is planned) {
  CAF_REQUIRE(plan_each_execution(conn));
  execution_search q;
  q.status = flow::workflow_status::failed;
  q.limit = 50;
  for (int i = 0; i < 6; ++i) { // past the executions a plan cache plans one by one anyway
    auto page = search_executions(conn, q);
    CAF_REQUIRE(page);
    CAF_CHECK(page->items.empty());
  }
  auto plan = explain_analyze(std::string{R"(EXECUTE "api.search_status"(')"} + ns
                              + "', NULL, NULL, NULL, 50, 'FAILED')");
  auto read = index_rows(plan);
  CAF_MESSAGE("index entries read: " << read);
  CAF_CHECK_LESS_OR_EQUAL(read, 50.0);
}

CAF_TEST_FIXTURE_SCOPE_END()
