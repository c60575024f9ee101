#define CAF_SUITE actors.in_doubt
#include "tests/actors/decider_fixture.hpp"

#include <future>
#include <thread>

#include "engine/decide/batch.hpp"
#include "tests/actors/missing_standby.hpp"

using namespace nf;
using namespace std::chrono_literals;

// A COMMIT whose answer never arrives: the decider cannot tell whether its batch committed
// (errc::in_doubt) and must read back instead of guessing. Both outcomes are made for
// real, the client seeing the same broken connection after sending COMMIT:
// - committed: the server waits, after writing the commit locally, for a synchronous
//   standby that does not exist; its backend is then terminated. Only the decider's own
//   connection asks for the wait (synchronous_commit = on in its DSN): while the test
//   runs, the server's default is `local`, so other sessions on the same server are not
//   held (synchronous_standby_names is server-wide: it cannot be set for one session).
// - not committed: a deferred trigger makes COMMIT wait on an advisory lock the test holds;
//   its backend is terminated there, before the commit record, and the transaction is lost.

namespace {

constexpr const char* two_steps = R"({"name": "two", "version": 1, "tasks": [
  {"name": "work", "taskReferenceName": "a", "type": "SIMPLE"},
  {"name": "next", "taskReferenceName": "b", "type": "SIMPLE"}]})";

struct fixture : test::decider_fixture {
  // The decider's connections: they wait for the synchronous standby when one is named.
  std::string sync_dsn = db->dsn() + "?options=-csynchronous_commit%3Don";

  fixture() : decider_fixture("actors_in_doubt") {
    task_defs(R"([{"name": "work", "retryCount": 0, "responseTimeoutSeconds": 600},
                  {"name": "next", "retryCount": 0, "responseTimeoutSeconds": 600}])");
    workflow_def(two_steps);
  }

  // Waits until a backend of this database waits on `event`, then terminates it.
  int terminate_waiting(const std::string& event, std::chrono::milliseconds limit = 10s) {
    int pid = 0;
    auto found = test::wait_until(
      [&] {
        auto r = sql(R"(SELECT coalesce(min("pid"), 0) FROM pg_stat_activity
                         WHERE datname = current_database() AND wait_event = $1)",
                     store::params::of(event));
        pid = r.i32(0, 0);
        return pid != 0;
      },
      limit);
    if (!found)
      return 0;
    sql("SELECT pg_terminate_backend($1::int)", store::params::of(int64_t{pid}));
    return pid;
  }

  // A commit of a decider's connection now waits for the standby: proven with a probe,
  // since the reload reaches the server's processes on their own time.
  void wait_until_commits_wait() {
    // Only a transaction that wrote WAL before its commit record waits.
    sql(R"(CREATE TABLE IF NOT EXISTS "SyncProbe" ("k" int))");
    for (int i = 0; i < 100; ++i) {
      auto probe = test::missing_standby::open(sync_dsn);
      auto done = std::async(std::launch::async,
                             [&] { return probe.exec(R"(INSERT INTO "SyncProbe" VALUES (1))"); });
      if (done.wait_for(50ms) == std::future_status::ready) {
        (void) done.get(); // committed without waiting: not yet
        continue;
      }
      CAF_REQUIRE_NOT_EQUAL(terminate_waiting("SyncRep"), 0);
      (void) done.get();
      return;
    }
    CAF_FAIL("commits never began to wait for the synchronous standby");
  }

  // One batch holding one start of "two", run by `core` in a thread while `interfere`
  // breaks its COMMIT.
  engine::batch_output start_through(engine::decider_core& core, const workflow_id& id,
                                     const std::function<void()>& interfere) {
    engine::batch_input in;
    store::start_request s;
    s.name = "two";
    s.id = id;
    in.starts.push_back(s);
    auto run = std::async(std::launch::async, [&] { return core.run(in); });
    interfere();
    return run.get();
  }

  // The workflow exists once with its first task once, and goes on: its task completes
  // through a decider and the second is scheduled.
  void check_goes_on(const workflow_id& id) {
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "id" = $1)",
                          store::params::of(id.str())),
                    1);
    CAF_CHECK_EQUAL(tasks_of(id.str(), "a"), 1);
    auto d = decider();
    auto a = lease_one("work");
    CAF_REQUIRE_EQUAL(a.workflow.str(), id.str());
    NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(a, R"({"y": 1})")));
    CAF_CHECK_EQUAL(tasks_of(id.str(), "b"), 1);
    CAF_CHECK_EQUAL(tasks_of(id.str(), "a"), 1);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(in_doubt_tests, fixture)

CAF_TEST(a batch whose commit happened though its answer was lost is answered as started) {
  test::missing_standby standby{test::server_dsn(), conn};
  wait_until_commits_wait();
  engine::decider_core core{1, sync_dsn, 64};
  core.serve({0});
  auto id = engine::new_workflow_id_in(0, 1);
  int killed = 0;
  auto out = start_through(core, id, [&] { killed = terminate_waiting("SyncRep"); });
  CAF_REQUIRE_NOT_EQUAL(killed, 0);
  CAF_REQUIRE_EQUAL(out.starts.size(), 1u);
  NF_REQUIRE_OK(out.starts[0]);
  CAF_CHECK_EQUAL(out.starts[0]->id.str(), id.str());
  CAF_CHECK(out.starts[0]->created);
  check_goes_on(id);
}

CAF_TEST(a batch whose commit was lost with its answer is decided again) {
  sql(R"(CREATE FUNCTION "nf_test_hold_commit"() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NULL; END $$)");
  sql(R"(CREATE CONSTRAINT TRIGGER "nf_test_hold_commit" AFTER INSERT ON "WorkflowExecutions"
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "nf_test_hold_commit"())");
  auto holder = test::missing_standby::open(db->dsn());
  CAF_REQUIRE(holder.exec("SELECT pg_advisory_lock(4242)"));
  engine::decider_core core{1, db->dsn(), 64};
  core.serve({0});
  auto id = engine::new_workflow_id_in(0, 1);
  int killed = 0;
  auto out = start_through(core, id, [&] {
    killed = terminate_waiting("advisory");
    CAF_CHECK(holder.exec("SELECT pg_advisory_unlock(4242)"));
  });
  sql(R"(DROP TRIGGER "nf_test_hold_commit" ON "WorkflowExecutions")");
  sql(R"(DROP FUNCTION "nf_test_hold_commit"())");
  CAF_REQUIRE_NOT_EQUAL(killed, 0);
  CAF_REQUIRE_EQUAL(out.starts.size(), 1u);
  NF_REQUIRE_OK(out.starts[0]);
  CAF_CHECK_EQUAL(out.starts[0]->id.str(), id.str());
  CAF_CHECK(out.starts[0]->created);
  check_goes_on(id);
}

CAF_TEST_FIXTURE_SCOPE_END()
