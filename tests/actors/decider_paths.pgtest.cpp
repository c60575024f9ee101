#define CAF_SUITE actors.decider_paths
#include "tests/actors/decider_fixture.hpp"

using namespace nf;

namespace {

struct fixture : test::decider_fixture {
  fixture() : decider_fixture("actors_decider_paths") {
    task_defs(R"([{"name": "cwork", "retryCount": 0, "responseTimeoutSeconds": 600},
                  {"name": "risky", "retryCount": 0, "responseTimeoutSeconds": 600},
                  {"name": "tidy", "retryCount": 0, "responseTimeoutSeconds": 600}])");
    workflow_def(R"({"name": "child", "version": 1, "tasks": [
      {"name": "cwork", "taskReferenceName": "c", "type": "SIMPLE",
       "inputParameters": {"n": "${workflow.input.n}"}}],
      "outputParameters": {"doubled": "${c.output.d}"}})");
    workflow_def(R"({"name": "parent", "version": 1, "tasks": [
      {"name": "call", "taskReferenceName": "sub", "type": "SUB_WORKFLOW",
       "subWorkflowParam": {"name": "child"}, "inputParameters": {"n": "${workflow.input.n}"}}],
      "outputParameters": {"fromChild": "${sub.output.doubled}"}})");
    workflow_def(R"({"name": "cleanup", "version": 1, "tasks": [
      {"name": "tidy", "taskReferenceName": "t", "type": "SIMPLE",
       "inputParameters": {"failed": "${workflow.input.workflowId}"}}]})");
    workflow_def(R"({"name": "fragile", "version": 1, "failureWorkflow": "cleanup", "tasks": [
      {"name": "risky", "taskReferenceName": "r", "type": "SIMPLE"}]})");
  }

  std::string child_of(const std::string& parent) {
    return scalar(R"(SELECT "id"::text FROM "WorkflowExecutions" WHERE "parentWorkflowId" = $1)",
                  store::params::of(parent));
  }

  caf::expected<std::string> command(const caf::actor& d, const std::string& op,
                                     const std::string& wf) {
    msg::workflow_command c;
    c.op = op;
    c.workflow_id = wf;
    c.reason = "test";
    return ask<std::string>(d, command_atom_v, c);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(decider_paths_tests, fixture)

CAF_TEST(a sub workflow runs as a child and its end completes the parent task) {
  auto d = decider();
  auto parent = start(d, "parent", R"({"n": 21})", "order-7");
  NF_REQUIRE_OK(parent);
  // The child started in the parent's transaction and is linked to the parent task.
  auto child = child_of(parent->workflow_id);
  CAF_REQUIRE(!child.empty());
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                             AND "refName" = 'sub' AND "subWorkflowId" = $2
                             AND "status" = 'IN_PROGRESS')",
                        store::params::of(parent->workflow_id, child)),
                  1);
  auto c = lease_one("cwork");
  CAF_CHECK_EQUAL(c.workflow.str(), child);
  CAF_CHECK_EQUAL(c.input, R"({"n": 21})");
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(c, R"({"d": 42})")));
  CAF_REQUIRE(wait_status(parent->workflow_id, "COMPLETED"));
  CAF_CHECK_EQUAL(status_of(child), "COMPLETED");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                         store::params::of(parent->workflow_id)),
                  R"({"fromChild": 42})");
  // As Conductor: the child is found by its parent's correlation id, and the task's output
  // is the child's with the child's id beside it.
  CAF_CHECK_EQUAL(scalar(R"(SELECT "correlationId" FROM "WorkflowExecutions" WHERE "id" = $1)",
                         store::params::of(child)),
                  "order-7");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "output"::text FROM "TaskExecutions"
                             WHERE "workflowId" = $1 AND "refName" = 'sub')",
                         store::params::of(parent->workflow_id)),
                  R"({"doubled": 42, "subWorkflowId": ")" + child + R"("})");
}

CAF_TEST(a failed child fails the parent task and a failed workflow starts its failure workflow) {
  workflow_def(R"({"name": "fragile_child", "version": 1, "tasks": [
    {"name": "risky", "taskReferenceName": "r", "type": "SIMPLE"}]})");
  workflow_def(R"({"name": "guarded", "version": 1, "failureWorkflow": "cleanup", "tasks": [
    {"name": "call", "taskReferenceName": "sub", "type": "SUB_WORKFLOW",
     "subWorkflowParam": {"name": "fragile_child"}}]})");
  auto d = decider();
  auto parent = start(d, "guarded", "{}", "order-8");
  NF_REQUIRE_OK(parent);
  auto child = child_of(parent->workflow_id);
  CAF_REQUIRE(!child.empty());
  auto r = lease_one("risky");
  auto failed = result(r, R"({"err": "boom"})", "FAILED");
  failed.reason = "boom";
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, failed));
  CAF_REQUIRE(wait_status(parent->workflow_id, "FAILED"));
  CAF_CHECK_EQUAL(status_of(child), "FAILED");
  CAF_CHECK_NOT_EQUAL(scalar(R"(SELECT "reasonForIncompletion" FROM "TaskExecutions"
                                 WHERE "workflowId" = $1 AND "refName" = 'sub')",
                             store::params::of(parent->workflow_id))
                        .find("sub workflow " + child + " ended FAILED"),
                      std::string::npos);
  // The parent's failure workflow runs with the failure's details.
  CAF_REQUIRE(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "workflowName" = 'cleanup'
                      AND "input"->>'workflowId' = $1)",
                 store::params::of(parent->workflow_id))
           == 1;
  }));
  auto t = lease_one("tidy");
  CAF_CHECK_NOT_EQUAL(t.input.find(parent->workflow_id), std::string::npos);
  // It carries the failed workflow's correlation id, as its child did.
  CAF_CHECK_EQUAL(scalar(R"(SELECT "correlationId" FROM "WorkflowExecutions"
                             WHERE "workflowName" = 'cleanup')"),
                  "order-8");
  CAF_CHECK_EQUAL(scalar(R"(SELECT "correlationId" FROM "WorkflowExecutions" WHERE "id" = $1)",
                         store::params::of(child)),
                  "order-8");
  // A child has no failure workflow of its own: only the parent's started.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "workflowName" = 'cleanup')"),
                  1);
}

CAF_TEST(terminate cancels running tasks and revokes their leases) {
  auto d = decider();
  auto wf = start(d, "fragile");
  NF_REQUIRE_OK(wf);
  auto r = lease_one("risky");
  auto answer = command(d, "terminate", wf->workflow_id);
  NF_REQUIRE_OK(answer);
  CAF_CHECK_NOT_EQUAL(answer->find("\"TERMINATED\""), std::string::npos);
  CAF_CHECK_EQUAL(status_of(wf->workflow_id), "TERMINATED");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                             AND "status" = 'CANCELED' AND "endedAt" IS NOT NULL)",
                        store::params::of(r.task)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 0);
  // The worker still holding the task learns at once that its lease is gone (I5).
  auto late = ask<std::string>(d, complete_atom_v, result(r, R"({"ok": true})"));
  CAF_REQUIRE(!late);
  CAF_CHECK(nf::code_of(late.error()) == nf::errc::lease_lost);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "id" = $1
                             AND "status" = 'CANCELED')",
                        store::params::of(r.task)),
                  1);
  // Terminating again is refused with the reason; nothing changes.
  auto again = command(d, "terminate", wf->workflow_id);
  CAF_REQUIRE(!again);
  CAF_CHECK(nf::code_of(again.error()) == nf::errc::invalid);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'WORKFLOW_TERMINATED')",
                        store::params::of(wf->workflow_id)),
                  1);
  // No failure workflow for a terminated one.
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions" WHERE "workflowName" = 'cleanup')"),
                  0);
}

CAF_TEST(terminating a parent terminates its running child and revokes the child task lease) {
  auto d = decider();
  auto parent = start(d, "parent", R"({"n": 1})");
  NF_REQUIRE_OK(parent);
  auto child = child_of(parent->workflow_id);
  auto c = lease_one("cwork");
  NF_REQUIRE_OK(command(d, "terminate", parent->workflow_id));
  CAF_CHECK_EQUAL(status_of(parent->workflow_id), "TERMINATED");
  CAF_CHECK_EQUAL(status_of(child), "TERMINATED");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "status" = 'CANCELED')"), 2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskQueues")"), 0);
  auto late = ask<std::string>(d, complete_atom_v, result(c, R"({"d": 2})"));
  CAF_REQUIRE(!late);
  CAF_CHECK(nf::code_of(late.error()) == nf::errc::lease_lost);
}

CAF_TEST(pause holds a workflow and resume decides what arrived meanwhile) {
  auto d = decider();
  auto wf = start(d, "parent", R"({"n": 1})");
  NF_REQUIRE_OK(wf);
  auto child = child_of(wf->workflow_id);
  NF_REQUIRE_OK(command(d, "pause", wf->workflow_id));
  CAF_CHECK_EQUAL(status_of(wf->workflow_id), "PAUSED");
  // The child still runs; its end is recorded on the paused parent, not acted upon.
  auto c = lease_one("cwork");
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(c, R"({"d": 2})")));
  CAF_REQUIRE(wait_status(child, "COMPLETED"));
  CAF_REQUIRE(test::wait_until([&] {
    return count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                      AND "refName" = 'sub' AND "status" = 'COMPLETED')",
                 store::params::of(wf->workflow_id))
           == 1;
  }));
  caf::anon_send(d, decide_atom_v);
  CAF_CHECK_EQUAL(status_of(wf->workflow_id), "PAUSED");
  NF_REQUIRE_OK(command(d, "resume", wf->workflow_id));
  CAF_CHECK(wait_status(wf->workflow_id, "COMPLETED"));
  auto bad = command(d, "pause", wf->workflow_id);
  CAF_REQUIRE(!bad);
  CAF_CHECK_NOT_EQUAL(nf::message_of(bad.error()).find("only a RUNNING workflow can be paused"),
                      std::string::npos);
}

CAF_TEST(retry schedules the next attempt of the failed task and the workflow runs on) {
  auto d = decider();
  auto wf = start(d, "fragile");
  NF_REQUIRE_OK(wf);
  auto r = lease_one("risky");
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(r, "{}", "FAILED")));
  CAF_REQUIRE(wait_status(wf->workflow_id, "FAILED"));
  auto answer = command(d, "retry", wf->workflow_id);
  NF_REQUIRE_OK(answer);
  CAF_CHECK_EQUAL(status_of(wf->workflow_id), "RUNNING");
  auto again = lease_one("risky");
  CAF_CHECK_EQUAL(again.attempt, 1);
  NF_REQUIRE_OK(ask<std::string>(d, complete_atom_v, result(again, R"({"ok": 1})")));
  CAF_CHECK(wait_status(wf->workflow_id, "COMPLETED"));
  CAF_CHECK_EQUAL(tasks_of(wf->workflow_id, "r"), 2);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'WORKFLOW_RETRIED')",
                        store::params::of(wf->workflow_id)),
                  1);
  // Restart wipes the executions and runs from the top with the same id.
  NF_REQUIRE_OK(command(d, "restart", wf->workflow_id));
  auto fresh = lease_one("risky");
  CAF_CHECK_EQUAL(fresh.attempt, 0);
  CAF_CHECK_EQUAL(tasks_of(wf->workflow_id, "r"), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
