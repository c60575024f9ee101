#define CAF_SUITE actors.fencing
#include "tests/actors/actor_fixture.hpp"

#include <chrono>
#include <thread>

#include <caf/exit_reason.hpp>

#include "actors/node/node.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "net/http/client.hpp"

using namespace nf;

namespace {

// Two whole nodes on one database with two partitions. The first one's membership ticks
// once a minute, so its partition actors act on long after another owner took the
// partitions over: a node paused (SIGSTOP) or cut off past its lease, as the others see it.
struct fixture : test::actor_fixture {
  std::vector<caf::actor> nodes;

  fixture() : actor_fixture("actors_fencing", 2, true) {
    task_defs(R"([{"name": "work", "retryCount": 0, "responseTimeoutSeconds": 600,
                   "timeoutSeconds": 900}])");
    workflow_def(R"({"name": "one", "version": 1, "tasks": [
      {"name": "work", "taskReferenceName": "a", "type": "SIMPLE",
       "inputParameters": {"x": "${workflow.input.x}"}}],
      "outputParameters": {"y": "${a.output.y}"}})");
  }

  ~fixture() {
    for (auto& n : nodes)
      caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
  }

  caf::actor spawn(const std::string& address, const std::string& heartbeat_ms,
                   const std::string& lease_ms) {
    actors::node_options o;
    o.http = std::make_shared<nf::http::beast_client>();
    o.dsn = db->dsn();
    o.advertise = address;
    auto set = [&](const char* k, const std::string& v) {
      CAF_REQUIRE(!o.settings.set(k, v, "test"));
    };
    set("engine.partitions", "2");
    set("membership.heartbeat_ms", heartbeat_ms);
    set("membership.lease_ms", lease_ms);
    set("decider.poll_interval_ms", "20");
    set("lessor.poll_interval_ms", "20");
    set("timer.poll_interval_ms", "20");
    set("relay.poll_interval_ms", "50");
    nodes.push_back(actors::spawn_node(sys, o));
    return nodes.back();
  }

  bool owns_both(const caf::actor& node) {
    return test::wait_until([&] {
      auto s = ask<std::string>(node, status_atom_v);
      return s && s->find(R"("running":[0,1])") != std::string::npos;
    });
  }

  /// Refusals counted so far by the partition writers that run without a request.
  static uint64_t refused() {
    auto& f = engine::metrics::node_metrics().stale_writes_refused;
    return f.with({"decider"}).value() + f.with({"timer"}).value();
  }

  std::string history_of(const std::string& wf) {
    return scalar(R"(SELECT string_agg(e."seq" || ' ' || e."eventType", ', ' ORDER BY e."seq")
                              || ' / ' || max(w."lastSeq")
                         FROM "WorkflowEvents" e
                         JOIN "WorkflowExecutions" w ON w."id" = e."workflowId"
                        WHERE e."workflowId" = $1)",
                  store::params::of(wf));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(fencing, fixture)

CAF_TEST(a node whose partitions were taken over writes nothing for them and the new owner finishes) {
  auto stale = spawn("test:1", "60000", "120000");
  CAF_REQUIRE(owns_both(stale));
  // Another node takes both partitions over (their epochs grow); the stale node's
  // membership will not notice for a minute, its partition actors run on.
  sql(R"(UPDATE "PartitionLeases"
            SET "nodeId" = '01900000-0000-7000-8000-0000000000aa', "epoch" = "epoch" + 1,
                "expiresAt" = now() + interval '1 hour')");
  auto before = refused();
  // Any node takes a start (I9): it is written, but its first decision is the owner's.
  msg::start_request s;
  s.workflow_name = "one";
  s.input_json = R"({"x": 5})";
  auto started = ask<msg::start_reply>(stale, start_atom_v, s);
  NF_REQUIRE_OK(started);
  const auto& wf = started->workflow_id;
  CAF_REQUIRE(test::wait_until([&] { return refused() > before; }));
  // Time for the stale decider's polls (every 20 ms) to have claimed the start's
  // evaluation, had they not been refused.
  std::this_thread::sleep_for(std::chrono::milliseconds{500});
  CAF_CHECK_EQUAL(history_of(wf), "1 WORKFLOW_STARTED / 1");
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*)::text FROM "DecideQueues" WHERE "workflowId" = $1)",
                         store::params::of(wf)),
                  "1");
  CAF_MESSAGE("stale writes refused: " << refused() - before);

  // The new owner: the other node's leases lapse, the stale node looks dead, and a node
  // that heartbeats takes both partitions at the next epochs.
  sql(R"(UPDATE "PartitionLeases" SET "expiresAt" = now() - interval '1 second')");
  sql(R"(UPDATE "Nodes" SET "heartbeatAt" = now() - interval '1 hour' WHERE "address" = 'test:1')");
  auto owner = spawn("test:2", "20", "10000");
  CAF_REQUIRE(owns_both(owner));
  msg::poll_request p;
  p.queue = "work";
  p.worker_id = "w1";
  p.timeout_ms = 1000;
  std::vector<msg::leased_task> got;
  CAF_REQUIRE(test::wait_until([&] {
    auto r = ask<std::vector<msg::leased_task>>(owner, poll_atom_v, p);
    NF_REQUIRE_OK(r);
    got = *r;
    return !got.empty();
  }));
  CAF_REQUIRE_EQUAL(got[0].workflow_id, wf);
  msg::task_result done;
  done.task_id = got[0].task_id;
  done.workflow_id = got[0].workflow_id;
  done.lease_token = got[0].lease_token;
  done.output_json = R"({"y": 6})";
  NF_REQUIRE_OK(ask<std::string>(owner, complete_atom_v, done));
  CAF_CHECK(wait_status(wf, "COMPLETED"));
  // Once, under the new owner: no evaluation of the stale node's in between.
  CAF_CHECK_EQUAL(history_of(wf), "1 WORKFLOW_STARTED, 2 TASK_SCHEDULED, 3 TASK_STARTED, "
                                  "4 TASK_COMPLETED, 5 WORKFLOW_COMPLETED / 5");
  CAF_CHECK_EQUAL(scalar(R"(SELECT count(*)::text FROM "TaskExecutions" WHERE "workflowId" = $1)",
                         store::params::of(wf)),
                  "1");
}

CAF_TEST_FIXTURE_SCOPE_END()
