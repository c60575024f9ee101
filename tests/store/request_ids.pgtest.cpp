#define CAF_SUITE store.request_ids
#include "caf/test/unit_test.hpp"

// Request ids (migration 0037): the row claimed in the transaction of a signal is what keeps
// its retry from being a second signal, and what answers it once the workflow has ended.

#include <boost/json.hpp>

#include "store/request_ids.hpp"
#include "store/signals.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("request_ids") { define_workflow("order"); }

  int64_t signals(const workflow_id& id) {
    return count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                      AND "eventType" = 'SIGNAL_RECEIVED')",
                 params::of(id));
  }
};

boost::json::object answer_of(const workflow_id& id) {
  return {{"workflowId", id.str()}, {"delivered", true}};
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(request_ids_tests, fixture)

CAF_TEST(a signal retried with its request id is written once and answered from its row) {
  auto wf = start("order").id;
  std::optional<std::string> earlier;
  request_claim claim{"r-1", "signal go", answer_of(wf), &earlier};
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", boost::json::object{{"n", 1}}, nullptr, &claim));
  CAF_CHECK(!earlier);
  CAF_CHECK_EQUAL(signals(wf), 1);
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", boost::json::object{{"n", 1}}, nullptr, &claim));
  CAF_REQUIRE(earlier);
  CAF_CHECK(boost::json::parse(*earlier) == boost::json::value(answer_of(wf)));
  CAF_CHECK_EQUAL(signals(wf), 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "RequestIds" WHERE "requestId" = 'r-1'
                             AND "target" = $1 AND "kind" = 'signal go')",
                        params::of(wf)),
                  1);
  // Without an id every signal is one more.
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", boost::json::object{{"n", 1}}));
  CAF_CHECK_EQUAL(signals(wf), 2);
}

CAF_TEST(an id reused for another request is refused and writes nothing) {
  auto wf = start("order").id;
  auto other = start("order").id;
  request_claim claim{"r-2", "signal go", answer_of(wf), nullptr};
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", nullptr, nullptr, &claim));
  request_claim renamed{"r-2", "signal stop", answer_of(wf), nullptr};
  auto r = deliver_signal(conn, wf, "stop", nullptr, nullptr, &renamed);
  CAF_REQUIRE(!r);
  CAF_CHECK(code_of(r.error()) == errc::invalid);
  CAF_CHECK_EQUAL(message_of(r.error()).rfind("requestId: r-2 was used for signal go", 0), 0u);
  auto elsewhere = deliver_signal(conn, other, "go", nullptr, nullptr, &claim);
  CAF_REQUIRE(!elsewhere);
  CAF_CHECK_EQUAL(signals(wf), 1);
  CAF_CHECK_EQUAL(signals(other), 0);
}

CAF_TEST(a retry after the workflow ended is answered and a new request is refused) {
  auto wf = start("order").id;
  std::optional<std::string> earlier;
  request_claim claim{"r-3", "signal go", answer_of(wf), &earlier};
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", nullptr, nullptr, &claim));
  sql(R"(UPDATE "WorkflowExecutions" SET "status" = 'COMPLETED', "endedAt" = now()
          WHERE "id" = $1)",
      params::of(wf));
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", nullptr, nullptr, &claim));
  CAF_CHECK(earlier);
  request_claim fresh{"r-4", "signal go", answer_of(wf), nullptr};
  auto r = deliver_signal(conn, wf, "go", nullptr, nullptr, &fresh);
  CAF_REQUIRE(!r);
  CAF_CHECK(code_of(r.error()) == errc::invalid);
  CAF_CHECK_EQUAL(signals(wf), 1);
}

CAF_TEST(request ids older than their retention are pruned) {
  auto wf = start("order").id;
  request_claim a{"old", "signal go", answer_of(wf), nullptr};
  request_claim b{"new", "signal go", answer_of(wf), nullptr};
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", nullptr, nullptr, &a));
  NF_REQUIRE_OK(deliver_signal(conn, wf, "go", nullptr, nullptr, &b));
  sql(R"(UPDATE "RequestIds" SET "createdAt" = now() - interval '25 hours'
          WHERE "requestId" = 'old')");
  auto n = prune_request_ids(conn, 24, 100);
  NF_REQUIRE_OK(n);
  CAF_CHECK_EQUAL(*n, 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "RequestIds" WHERE "requestId" = 'new')"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
