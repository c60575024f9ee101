#pragma once

// Shared by the decider suites: one decider (with a decide committer of its own,
// as a node has) per test owning partition 0 of a database whose partition count is 1, so every workflow (children and failure
// workflows too) is decided by the deciders the test spawned; and the worker side
// (lease, report) done through the store.

#include <boost/json/object.hpp>

#include "actors/decider/committer.hpp"
#include "actors/decider/decider.hpp"
#include "actors/partition/context.hpp"
#include "actors/relay/sink_presence.hpp"
#include "store/json.hpp"
#include "store/queues.hpp"
#include "store/tasks.hpp"
#include "store/workflows.hpp"
#include "tests/actors/actor_fixture.hpp"

namespace nf::test {

struct decider_fixture : actor_fixture {
  std::vector<caf::actor> spawned;
  /// What the committers decider() spawns know of the outbox relay's sinks (null: nothing,
  /// they hint it always).
  std::shared_ptr<const actors::sink_presence> sinks;

  explicit decider_fixture(const std::string& suite) : actor_fixture(suite, 1) {
  }

  ~decider_fixture() {
    for (auto& a : spawned)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  /// A decider of partition 0 (P = 1) whose hints go to the probe. Each call
  /// also spawns its own committer: two calls are two nodes. With `split`, that
  /// committer is the `index`th of a node's committers sharing their shards.
  caf::actor decider(int64_t poll_ms = 3600000,
                     std::vector<std::pair<std::string, std::string>> overrides = {},
                     std::shared_ptr<actors::committer_split> split = nullptr,
                     size_t index = 0) {
    actors::committer_context c;
    c.partition_count = 1;
    c.split = std::move(split);
    c.index = index;
    c.dsn = db->dsn();
    c.node = probe_actor;
    c.sinks = sinks;
    CAF_REQUIRE(!c.settings.set("decider.poll_interval_ms", std::to_string(poll_ms), "test"));
    for (const auto& [k, v] : overrides)
      CAF_REQUIRE(!c.settings.set(k, v, "test"));
    auto committer = actors::spawn_decide_committer(sys, c);
    spawned.push_back(committer);
    actors::partition_context ctx;
    ctx.shard = 0;
    ctx.partition_count = 1;
    ctx.dsn = db->dsn();
    ctx.node = probe_actor;
    ctx.committers = {committer};
    ctx.settings = c.settings;
    auto d = actors::spawn_decider(sys, ctx);
    spawned.push_back(d);
    return d;
  }

  caf::expected<msg::start_reply> start(const caf::actor& d, const std::string& name,
                                        const std::string& input = "{}",
                                        const std::string& correlation_id = "") {
    msg::start_request r;
    r.workflow_name = name;
    r.input_json = input;
    r.correlation_id = correlation_id;
    return ask<msg::start_reply>(d, start_atom_v, r);
  }

  /// What a worker does: lease from `queue` (the store's worker path).
  std::vector<store::leased_task> lease(const std::string& queue, int n = 1) {
    store::lease_request r;
    r.queue = queue;
    r.max_tasks = n;
    r.worker_id = "test-worker";
    r.lease_seconds = 600;
    auto got = store::lease_tasks(conn, r);
    NF_REQUIRE_OK(got);
    return *got;
  }

  /// Leases one task of `queue`, waiting for it to appear.
  store::leased_task lease_one(const std::string& queue) {
    std::vector<store::leased_task> got;
    if (!wait_until([&] {
          got = lease(queue);
          return !got.empty();
        }))
      CAF_FAIL("no task appeared on queue " << queue);
    return got.front();
  }

  static msg::task_result result(const store::leased_task& t, const std::string& output,
                                 const std::string& status = "COMPLETED") {
    msg::task_result r;
    r.task_id = t.task.str();
    r.workflow_id = t.workflow.str();
    r.lease_token = t.token.str();
    r.status = status;
    r.output_json = output;
    return r;
  }

  int64_t tasks_of(const std::string& wf, const std::string& ref) {
    return count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1 AND "refName" = $2)",
                 store::params::of(wf, ref));
  }
};

} // namespace nf::test
