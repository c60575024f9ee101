#define CAF_SUITE store.wakeup
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <thread>

#include "store/pg/transaction.hpp"
#include "store/tasks.hpp"
#include "tests/store/worker_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

struct fixture : test::worker_fixture {
  fixture() : worker_fixture("wakeup") {}
};

// The decider's claim, as it runs it (docs/schema.md §4.3).
const char* decider_claim = R"(
WITH c AS (SELECT "workflowId" FROM "DecideQueues" WHERE "shard" = $1
            ORDER BY "enqueuedAt" LIMIT 10 FOR UPDATE SKIP LOCKED)
SELECT "workflowId" FROM c)";

} // namespace

CAF_TEST_FIXTURE_SCOPE(wakeup_tests, fixture)

// I2: a decider holds the workflow's "DecideQueues" row (its snapshot is taken); a
// completion commits meanwhile. The completion's upsert must wait for the decider and then
// leave a fresh row behind, or the decider deletes the only row and the completion is
// never decided.
CAF_TEST(a completion racing a decider that holds the row leaves a wakeup behind) {
  auto wf = insert_workflow();
  insert_task(wf, "a", "qw");
  auto t = lease_one("qw");
  sql(R"(INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "workflowStartedAt", "shard", "reason")
         VALUES ($1, '00000000-0000-0000-0000-000000000001', uuid_extract_timestamp($1::uuid), $2, 'start'))",
      params::of(wf, shard_of(wf)));
  auto decider = db.connect();
  CAF_REQUIRE(decider.exec("BEGIN"));
  auto claimed = decider.exec(decider_claim, params::of(shard_of(wf)));
  CAF_REQUIRE(claimed);
  CAF_REQUIRE_EQUAL(claimed->rows(), 1);
  CAF_REQUIRE_EQUAL(claimed->str(0, 0), wf.str());

  auto worker = db.connect();
  std::atomic<bool> done{false};
  caf::expected<void> completed;
  std::thread th{[&] {
    task_result r;
    r.workflow = t.workflow;
    r.task = t.task;
    r.token = t.token;
    completed = complete_task(worker, r);
    done = true;
  }};
  CAF_CHECK(wait_until_blocked(worker.backend_pid(), [&] { return done.load(); }));
  // The decider finishes its evaluation: it deletes the row it claimed and commits.
  CAF_REQUIRE(decider.exec(R"(DELETE FROM "DecideQueues" WHERE "workflowId" = $1)", params::of(wf)));
  CAF_REQUIRE(decider.exec("COMMIT"));
  th.join();
  CAF_REQUIRE(completed);
  CAF_CHECK_EQUAL(task_status(t.task), "COMPLETED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "reason" FROM "DecideQueues" WHERE "workflowId" = $1)", params::of(wf)),
                  "taskCompleted");
}

CAF_TEST_FIXTURE_SCOPE_END()
