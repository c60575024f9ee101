#define CAF_SUITE actors.system_tasks
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <boost/json.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/lessor/lessor.hpp"
#include "actors/system_tasks/runner.hpp"
#include "engine/system_tasks/http_task.hpp"
#include "store/json.hpp"
#include "store/tasks.hpp"
#include "tests/actors/partition_actors_fixture.hpp"
#include "tests/support/http_test_server.hpp"
#include "net/http/client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

/// Stands in for the node: polls go to the lessor, completions straight to the store
/// (the decider's job in a node), answered as the node would.
caf::behavior fake_node(caf::event_based_actor* self, caf::actor lessor, std::string dsn) {
  auto conn = std::make_shared<store::connection>(std::move(*store::connection::open(dsn)));
  return {
    [=](poll_atom, const msg::poll_request& req) {
      return self->delegate(lessor, poll_atom_v, req);
    },
    [=](complete_atom, const msg::task_result& r) -> caf::result<std::string> {
      store::task_result t;
      t.workflow = workflow_id{r.workflow_id};
      t.task = task_id{r.task_id};
      t.token = lease_token{r.lease_token};
      t.outcome = r.status == "COMPLETED" ? store::task_outcome::completed
                  : r.status == "FAILED"  ? store::task_outcome::failed
                                          : store::task_outcome::failed_terminal;
      auto out = store::json_from_text(r.output_json, "output");
      if (!out)
        return std::move(out.error());
      t.output = *out;
      if (!r.reason.empty())
        t.reason = r.reason;
      if (auto done = store::complete_task(*conn, t); !done)
        return std::move(done.error());
      return std::string{"{}"};
    },
  };
}

struct fixture : test::partition_actors_fixture {
  test::http_test_server server;

  fixture() : partition_actors_fixture("actors_system_tasks") {}

  /// A lessor, a node in front of it and the runner polling through the node.
  void start(int concurrency = 4) {
    auto ctx = context(0, {{"lessor.poll_interval_ms", "100"},
                           {"system_tasks.poll_timeout_ms", "2000"}});
    auto lessor = keep(actors::spawn_lessor(sys, ctx));
    auto node = keep(sys.spawn<caf::detached>(fake_node, lessor, db.dsn()));
    actors::system_task_options opt;
    opt.http = std::make_shared<nf::http::beast_client>();
    opt.node = node;
    opt.settings = ctx.settings;
    opt.concurrency = concurrency;
    keep(actors::spawn_system_task_runner(sys, opt));
  }

  /// A SCHEDULED HTTP task with `input`, queued on `_system.http`.
  task_id http_task(const std::string& input) {
    auto wf = insert_workflow();
    task_id t{scalar(R"(
      INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "attempt", "taskType",
                                    "taskDefName", "queueName", "input")
      VALUES ($1, '00000000-0000-0000-0000-000000000001', 'call', 0, 'HTTP', 'http', $2, $3::jsonb)
      RETURNING "id")",
                     store::params::of(wf, engine::http_task_queue, input))};
    sql(R"(INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "shard")
           SELECT $1, $2, $3, 'HTTP', "shard" FROM "WorkflowExecutions" WHERE "id" = $3)",
        store::params::of(engine::http_task_queue, t, wf));
    return t;
  }

  /// Waits (up to 30 s) until the task left SCHEDULED/IN_PROGRESS; returns its status.
  std::string await_end(const task_id& t) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      auto s = task_status(t);
      if ((s != "SCHEDULED" && s != "IN_PROGRESS") || std::chrono::steady_clock::now() >= deadline)
        return s;
      std::this_thread::sleep_for(10ms);
    }
  }

  boost::json::value output(const task_id& t) {
    return boost::json::parse(
      scalar(R"(SELECT "output"::text FROM "TaskExecutions" WHERE "id" = $1)", store::params::of(t)));
  }

  std::string reason(const task_id& t) {
    return scalar(R"(SELECT "reasonForIncompletion" FROM "TaskExecutions" WHERE "id" = $1)",
                  store::params::of(t));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(system_tasks_tests, fixture)

CAF_TEST(an HTTP task performs its request and completes with the response) {
  server.on_request([](const test::seen_request&, size_t) {
    return test::canned_reply{201, R"({"ok": true, "id": 7})"};
  });
  auto t = http_task(R"({"http_request": {"uri": ")" + server.url("/orders?src=nf")
                     + R"(", "method": "post", "headers": {"X-Trace": "abc", "X-N": 3},
                         "body": {"item": "book"}, "readTimeOut": 2000}})");
  start();
  CAF_REQUIRE_EQUAL(await_end(t), "COMPLETED");
  auto out = output(t).as_object().at("response").as_object();
  CAF_CHECK_EQUAL(out.at("statusCode").as_int64(), 201);
  CAF_CHECK_EQUAL(out.at("body").as_object().at("id").as_int64(), 7); // JSON bodies come back parsed
  CAF_CHECK_EQUAL(std::string{out.at("headers").as_object().at("X-Test").as_string()}, "yes");
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  CAF_CHECK_EQUAL(seen[0].method, "POST");
  CAF_CHECK_EQUAL(seen[0].target, "/orders?src=nf");
  CAF_CHECK_EQUAL(seen[0].header("X-Trace"), "abc");
  CAF_CHECK_EQUAL(seen[0].header("X-N"), "3");
  CAF_CHECK_EQUAL(seen[0].header("Content-Type"), "application/json");
  CAF_CHECK(boost::json::parse(seen[0].body) == boost::json::parse(R"({"item": "book"})"));
}

CAF_TEST(a non 2xx answer or an unreachable server fails the task retryably) {
  server.on_request([](const test::seen_request&, size_t) {
    return test::canned_reply{503, "busy", "text/plain"};
  });
  auto busy = http_task(R"({"http_request": {"uri": ")" + server.url() + R"("}})");
  std::string gone_url;
  {
    test::http_test_server gone;
    gone_url = gone.url();
  }
  auto refused = http_task(R"({"uri": ")" + gone_url + R"(", "connectionTimeOut": 1000})");
  start();
  CAF_REQUIRE_EQUAL(await_end(busy), "FAILED");
  CAF_CHECK_EQUAL(reason(busy), "HTTP 503 Service Unavailable");
  auto out = output(busy).as_object().at("response").as_object();
  CAF_CHECK_EQUAL(out.at("statusCode").as_int64(), 503);
  CAF_CHECK_EQUAL(std::string{out.at("body").as_string()}, "busy"); // text stays text
  CAF_REQUIRE_EQUAL(await_end(refused), "FAILED");
  CAF_CHECK(reason(refused).find("connect 127.0.0.1:") == 0);
}

CAF_TEST(bad input fails the task terminally without sending anything) {
  auto method = http_task(R"({"http_request": {"uri": ")" + server.url() + R"(", "method": "FETCH"}})");
  auto timeout = http_task(R"({"http_request": {"uri": ")" + server.url() + R"(", "readTimeOut": 1.5}})");
  auto no_uri = http_task(R"({"http_request": {"method": "GET"}})");
  auto tls = http_task(R"({"http_request": {"uri": "https://example.com/"}})");
  start();
  CAF_REQUIRE_EQUAL(await_end(method), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(reason(method), "invalid HTTP task input: http_request.method: expected one of "
                                  "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, got \"FETCH\"");
  CAF_REQUIRE_EQUAL(await_end(timeout), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(reason(timeout), "invalid HTTP task input: http_request.readTimeOut: expected an "
                                   "integer 1 … 600000 (milliseconds), got 1.5");
  CAF_REQUIRE_EQUAL(await_end(no_uri), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(reason(no_uri),
                  "invalid HTTP task input: http_request.uri: expected a string, got nothing");
  CAF_REQUIRE_EQUAL(await_end(tls), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(reason(tls), "invalid HTTP task input: http_request.uri: https is not supported "
                               "(plain http:// only), got \"https://example.com/\"");
  CAF_CHECK(server.requests().empty());
}

CAF_TEST(an HTTP task to the metadata address fails for good without a connection) {
  server.on_request([](const test::seen_request&, size_t) { return test::canned_reply{}; });
  // A connection attempt would wait out its 20 s (nothing answers there) and fail retryably.
  auto metadata = http_task(R"({"http_request": {"uri": "http://169.254.169.254/latest/meta-data/",
                                                  "connectionTimeOut": 20000}})");
  auto local = http_task(R"({"http_request": {"uri": ")" + server.url() + R"("}})");
  auto begin = std::chrono::steady_clock::now();
  start();
  CAF_REQUIRE_EQUAL(await_end(metadata), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_LESS(std::chrono::steady_clock::now() - begin, 15s);
  CAF_CHECK_EQUAL(reason(metadata), "refused by egress.deny: 169.254.169.254 is in 169.254.0.0/16");
  CAF_CHECK_EQUAL(std::string{output(metadata).as_object().at("error").as_string()},
                  reason(metadata));
  // Loopback stays reachable by default.
  CAF_CHECK_EQUAL(await_end(local), "COMPLETED");
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
}

CAF_TEST(no more HTTP tasks run at once than the runner s concurrency) {
  server.on_request([](const test::seen_request&, size_t) {
    test::canned_reply r;
    r.delay_ms = 150;
    return r;
  });
  std::vector<task_id> tasks;
  for (int i = 0; i < 6; ++i)
    tasks.push_back(http_task(R"({"http_request": {"uri": ")" + server.url() + R"("}})"));
  start(2);
  int64_t most = 0;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "status" = 'COMPLETED')") < 6
         && std::chrono::steady_clock::now() < deadline) {
    most = std::max(most, count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "status" = 'IN_PROGRESS')"));
    std::this_thread::sleep_for(5ms);
  }
  for (const auto& t : tasks)
    CAF_CHECK_EQUAL(task_status(t), "COMPLETED");
  CAF_CHECK_LESS_OR_EQUAL(most, 2);
  CAF_CHECK_EQUAL(most, 2); // and it does use both slots
}

CAF_TEST_FIXTURE_SCOPE_END()
