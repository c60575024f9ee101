#define CAF_SUITE e2e.idempotency
#include "caf/test/unit_test.hpp"

#include <condition_variable>
#include <set>

#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

CAF_TEST(fifty concurrent starts with one idempotency key make one workflow) {
  test::e2e_fixture f{"e2e_idempotency"};
  f.start_node();
  f.define(R"([{"name": "e2e_once", "version": 1, "tasks": [
    {"name": "hold", "taskReferenceName": "hold", "type": "WAIT", "inputParameters": {"signal": "go"}}]}])");
  // Five clients (five connections), ten starts each, all sent before any answer.
  constexpr int clients = 5;
  constexpr int per_client = 10;
  std::vector<std::unique_ptr<client>> cs;
  for (int i = 0; i < clients; ++i) {
    cs.push_back(std::make_unique<client>(f.client_opts(20s)));
    CAF_REQUIRE(cs.back()->connect());
  }
  std::mutex mx;
  std::condition_variable cv;
  std::vector<caf::expected<msg::start_reply>> replies;
  for (int i = 0; i < clients * per_client; ++i) {
    msg::start_request r;
    r.workflow_name = "e2e_once";
    r.input_json = R"({"n": )" + std::to_string(i) + "}";
    r.idempotency_key = "order-42";
    cs[i % clients]->start_async(r, [&](caf::expected<msg::start_reply> rep) {
      std::lock_guard<std::mutex> g{mx};
      replies.push_back(std::move(rep));
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> g{mx};
    CAF_REQUIRE(cv.wait_for(g, 60s, [&] { return replies.size() == clients * per_client; }));
  }
  std::set<std::string> ids;
  int created = 0;
  for (const auto& r : replies) {
    if (!r) {
      CAF_FAIL("a start failed: " << describe(r.error()));
    }
    ids.insert(r->workflow_id);
    created += r->created ? 1 : 0;
  }
  CAF_CHECK_EQUAL(ids.size(), 1u);
  CAF_CHECK_EQUAL(created, 1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "IdempotencyKeys")"), 1);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "eventType" = 'WORKFLOW_STARTED')"),
                  1);
  // A later start with the key still answers the same workflow.
  CAF_CHECK_EQUAL(f.start("e2e_once", "{}", "order-42"), *ids.begin());
  CAF_CHECK(f.stop_node());
}
