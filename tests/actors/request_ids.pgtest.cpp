#define CAF_SUITE actors.request_ids

// Operator commands and keyless starts with a request id, through a decider and its
// committer as a node runs them: the same request twice is applied once and answered alike
// (migration 0037), and an id reused for another command is refused.

#include "tests/actors/decider_fixture.hpp"

#include <boost/json.hpp>

#include "proto/errors.hpp"

using namespace nf;

namespace {

struct fixture : test::decider_fixture {
  fixture() : decider_fixture("actors_request_ids") {
    workflow_def(R"({"name": "gate", "version": 1, "tasks": [{"name": "hold",
      "taskReferenceName": "hold", "type": "WAIT", "inputParameters": {"signal": "go"}}]})");
  }

  caf::expected<std::string> command(const caf::actor& d, const std::string& op,
                                     const std::string& wf, const std::string& request_id) {
    msg::workflow_command c;
    c.op = op;
    c.workflow_id = wf;
    c.request_id = request_id;
    return ask<std::string>(d, command_atom_v, c);
  }

  int64_t events(const std::string& wf, const std::string& type) {
    return count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                      AND "eventType" = $2)",
                 store::params::of(wf, type));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(request_ids_tests, fixture)

CAF_TEST(a command sent twice with one request id is applied once and answered alike) {
  auto d = decider();
  auto wf = start(d, "gate");
  NF_REQUIRE_OK(wf);
  auto id = wf->workflow_id;
  auto first = command(d, "pause", id, "p-1");
  NF_REQUIRE_OK(first);
  auto again = command(d, "pause", id, "p-1");
  NF_REQUIRE_OK(again);
  CAF_CHECK(boost::json::parse(*again) == boost::json::parse(*first));
  CAF_CHECK_EQUAL(events(id, "WORKFLOW_PAUSED"), 1);
  // Reused for a resume: refused, naming the id; the workflow stays paused.
  auto wrong = command(d, "resume", id, "p-1");
  CAF_REQUIRE(!wrong);
  CAF_CHECK(nf::code_of(wrong.error()) == nf::errc::invalid);
  CAF_CHECK_EQUAL(nf::message_of(wrong.error()).rfind("requestId: p-1", 0), 0u);
  CAF_CHECK_EQUAL(status_of(id), "PAUSED");
  // A terminate retried after it ended the workflow is answered as it was; without its row
  // the retry is refused, the workflow having ended.
  auto ended = command(d, "terminate", id, "t-1");
  NF_REQUIRE_OK(ended);
  auto ended_again = command(d, "terminate", id, "t-1");
  NF_REQUIRE_OK(ended_again);
  CAF_CHECK(boost::json::parse(*ended_again) == boost::json::parse(*ended));
  CAF_CHECK_EQUAL(events(id, "WORKFLOW_TERMINATED"), 1);
  auto plain = command(d, "terminate", id, "");
  CAF_REQUIRE(!plain);
  CAF_CHECK(nf::code_of(plain.error()) == nf::errc::invalid);
  // A restart likewise: once, then answered; a new restart of the running workflow refused.
  auto restarted = command(d, "restart", id, "r-1");
  NF_REQUIRE_OK(restarted);
  auto restarted_again = command(d, "restart", id, "r-1");
  NF_REQUIRE_OK(restarted_again);
  CAF_CHECK(boost::json::parse(*restarted_again) == boost::json::parse(*restarted));
  CAF_CHECK(!command(d, "restart", id, "r-2"));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "RequestIds")"), 3);
}

CAF_TEST(a keyless start sent twice with one request id starts one workflow) {
  auto d = decider();
  msg::start_request r;
  r.workflow_name = "gate";
  r.request_id = "s-1";
  auto first = ask<msg::start_reply>(d, start_atom_v, r);
  NF_REQUIRE_OK(first);
  CAF_CHECK(first->created);
  auto again = ask<msg::start_reply>(d, start_atom_v, r);
  NF_REQUIRE_OK(again);
  CAF_CHECK(!again->created);
  CAF_CHECK_EQUAL(again->workflow_id, first->workflow_id);
  r.request_id = "s-2";
  auto other = ask<msg::start_reply>(d, start_atom_v, r);
  NF_REQUIRE_OK(other);
  CAF_CHECK_NOT_EQUAL(other->workflow_id, first->workflow_id);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowExecutions")"), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
