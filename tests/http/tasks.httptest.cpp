#define CAF_SUITE http.tasks

// Conductor's task routes as an SDK's worker uses them: polls (one, a batch, the long wait
// and the empty answer), each report status, the lease carried in the taskId (a lost one is
// 409 and changes nothing), a task read back by it, the task log, queue sizes and a WAIT
// completed by its ref name (answered with its id, or with /sync the workflow).

#include <caf/test/dsl.hpp>

#include <algorithm>
#include <set>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_node.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

namespace json = boost::json;

constexpr const char* defs = R"([
  {"name": "ht_a", "retryCount": 1, "retryDelaySeconds": 0, "responseTimeoutSeconds": 30},
  {"name": "ht_short", "retryCount": 1, "retryDelaySeconds": 0, "responseTimeoutSeconds": 1,
   "timeoutPolicy": "RETRY"},
  {"name": "ht_one", "tasks": [{"name": "ht_a", "taskReferenceName": "a"}]},
  {"name": "ht_me", "tasks": [{"name": "ht_a", "taskReferenceName": "me", "inputParameters": {
     "id": "${CPEWF_TASK_ID}", "url": "https://cb.example/t/${CPEWF_TASK_ID}"}}]},
  {"name": "ht_lease", "tasks": [{"name": "ht_short", "taskReferenceName": "s"}]},
  {"name": "ht_wait", "tasks": [{"name": "w", "taskReferenceName": "w", "type": "WAIT"},
     {"name": "ht_a", "taskReferenceName": "after",
      "inputParameters": {"got": "${w.output.approved}"}}],
   "outputParameters": {"got": "${w.output.approved}"}},
  {"name": "ht_loop", "tasks": [{"name": "loop", "taskReferenceName": "loop", "type": "DO_WHILE",
     "loopCondition": "$.loop['iteration'] < 2", "loopOver": [
       {"name": "lw", "taskReferenceName": "lw", "type": "WAIT"},
       {"name": "ht_a", "taskReferenceName": "la"}]}]},
  {"name": "echo", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "ht_gone", "retryCount": 0, "responseTimeoutSeconds": 60},
  {"name": "ht_gone_wf", "tasks": [{"name": "ht_gone", "taskReferenceName": "g"}]},
  {"name": "ht_dom", "tasks": [{"name": "echo", "taskReferenceName": "e",
     "inputParameters": {"n": "${workflow.input.list.length()}"}}],
   "outputParameters": {"top": "${e.output.v.max()}"}},
  {"name": "ht_dom_parent", "tasks": [{"name": "ht_a", "taskReferenceName": "a"},
     {"name": "child", "taskReferenceName": "child", "type": "SUB_WORKFLOW",
      "subWorkflowParam": {"name": "ht_dom", "version": 1}}]}
])";

struct fixture : test::http_node {
  fixture() : http_node{"http_tasks", defs} {}
};

std::string task_status(test::e2e_fixture& f, const std::string& wf, const std::string& ref) {
  return f.scalar(R"(SELECT "status"::text FROM "TaskExecutions" WHERE "workflowId" = $1
                     AND "refName" = $2 ORDER BY "attempt" DESC LIMIT 1)",
                  store::params::of(wf, ref));
}

std::string wf_status(test::e2e_fixture& f, const std::string& wf) {
  return f.scalar(R"(SELECT "status"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                  store::params::of(wf));
}

// Waits until task `ref` of workflow `wf` exists, and answers its stored queue name.
std::string queue_of(test::e2e_fixture& f, const std::string& wf, const std::string& ref) {
  for (int i = 0; i < 100; ++i) {
    auto n = f.scalar(R"(SELECT count(*)::text FROM "TaskExecutions" WHERE "workflowId" = $1
                         AND "refName" = $2)", store::params::of(wf, ref));
    if (n != "0")
      return f.scalar(R"(SELECT "queueName" FROM "TaskExecutions" WHERE "workflowId" = $1
                         AND "refName" = $2)", store::params::of(wf, ref));
    std::this_thread::sleep_for(50ms);
  }
  CAF_FAIL("task " << ref << " of " << wf << " was never scheduled");
  return {};
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_tasks, fixture)

CAF_TEST(task to domain serves a task only to workers polling its domain) {
  auto wf = start_over_http(R"({"name":"ht_dom","input":{"list":[1,2,3]},
    "taskToDomain":{"echo":"blue","ht_a":"red"}})");
  CAF_CHECK_EQUAL(queue_of(f, wf, "e"), "blue:echo");
  // Scheduled, and still not handed to a worker without the domain, or with another one.
  auto plain = http->get("/api/tasks/poll/batch/echo?count=1&timeout=300");
  CAF_REQUIRE_EQUAL(plain.status, 200u);
  CAF_CHECK(plain.json().as_array().empty());
  auto green = http->get("/api/tasks/poll/echo?domain=green&timeout=0");
  CAF_CHECK_EQUAL(green.status, 204u);
  auto blue = poll_one("echo", "blue");
  CAF_CHECK_EQUAL(json::value_to<std::string>(blue.at("workflowInstanceId")), wf);
  CAF_CHECK_EQUAL(blue.at("inputData").at("n"), json::value(3));
  CAF_CHECK_EQUAL(report(blue, "COMPLETED", {{"outputData", {{"v", json::array{2, 7}}}}}).status,
                  200u);
  for (int i = 0; i < 100 && wf_status(f, wf) == "RUNNING"; ++i)
    std::this_thread::sleep_for(50ms);
  CAF_CHECK_EQUAL(wf_status(f, wf), "COMPLETED");
  auto got = http->get("/api/workflow/" + wf + "?includeTasks=false");
  CAF_CHECK_EQUAL(json::serialize(got.json().at("taskToDomain")), R"({"echo":"blue","ht_a":"red"})");
  // A double, stored by Postgres as the number 7.
  CAF_CHECK_EQUAL(got.json().at("output").at("top").to_number<double>(), 7.0);
  // One domain per task: Conductor's fallback lists are refused, not half-honoured.
  check_error(http->post("/api/workflow", R"({"name":"ht_dom","taskToDomain":{"echo":"blue,NO_DOMAIN"}})"),
              400, "taskToDomain");
  check_error(http->post("/api/workflow", R"({"name":"ht_dom","taskToDomain":{"echo":7}})"), 400,
              "taskToDomain");
  check_error(http->post("/api/workflow", R"({"name":"ht_dom","taskToDomain":["blue"]})"), 400,
              "taskToDomain");
}

CAF_TEST(a star domain routes every task and a sub workflow inherits it) {
  auto wf = start_over_http(R"({"name":"ht_dom_parent","taskToDomain":{"*":"green"}})");
  CAF_CHECK_EQUAL(queue_of(f, wf, "a"), "green:ht_a");
  CAF_CHECK_EQUAL(http->get("/api/tasks/poll/ht_a?timeout=0").status, 204u);
  auto a = poll_one("ht_a", "green");
  CAF_CHECK_EQUAL(report(a, "COMPLETED").status, 200u);
  // The child's task, in the parent's domain, leased through the client library.
  msg::poll_request poll;
  poll.queue = "echo";
  poll.worker_id = "cpp";
  poll.timeout_ms = 300;
  std::vector<msg::leased_task> got;
  for (int i = 0; i < 20 && got.empty(); ++i) {
    auto plain = f.api->poll(poll);
    CAF_REQUIRE(plain);
    CAF_CHECK(plain->empty());
    poll.domain = "green";
    auto leased = f.api->poll(poll);
    CAF_REQUIRE(leased);
    got = *leased;
    poll.domain.clear();
  }
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  auto child = got.front().workflow_id;
  CAF_CHECK_NOT_EQUAL(child, wf);
  CAF_CHECK_EQUAL(queue_of(f, child, "e"), "green:echo");
  msg::task_result done;
  done.task_id = got.front().task_id;
  done.workflow_id = child;
  done.lease_token = got.front().lease_token;
  done.output_json = R"({"v":[1]})";
  CAF_CHECK(f.api->report(done));
  for (int i = 0; i < 100 && wf_status(f, wf) == "RUNNING"; ++i)
    std::this_thread::sleep_for(50ms);
  CAF_CHECK_EQUAL(wf_status(f, wf), "COMPLETED");
}

CAF_TEST(an empty poll waits its timeout and answers nothing) {
  auto t0 = std::chrono::steady_clock::now();
  auto batch = http->get("/api/tasks/poll/batch/ht_a?count=5&timeout=600");
  auto waited = std::chrono::steady_clock::now() - t0;
  CAF_CHECK_EQUAL(batch.status, 200u);
  CAF_CHECK(batch.json().as_array().empty());
  CAF_CHECK(waited >= 500ms);
  CAF_CHECK(waited < 5s);
  auto one = http->get("/api/tasks/poll/ht_a?timeout=0");
  CAF_CHECK_EQUAL(one.status, 204u);
  CAF_CHECK(one.body.empty());
  check_error(http->get("/api/tasks/poll/ht_a?domain=bl:ue"), 400, "domain");
  check_error(http->get("/api/tasks/poll/batch/ht_a?count=0"), 400, "count");
}

CAF_TEST(a long poll answers as soon as a task is scheduled) {
  std::thread starter([this] {
    std::this_thread::sleep_for(300ms);
    // Started through the client protocol: the workflow routes are another topic's.
    f.start("ht_one", R"({"n":1})");
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = http->get("/api/tasks/poll/ht_a?timeout=10000&workerid=w9");
  auto waited = std::chrono::steady_clock::now() - t0;
  starter.join();
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK(waited < 8s);
  auto t = r.json().as_object();
  CAF_CHECK_EQUAL(t.at("taskType").as_string(), "ht_a");
  CAF_CHECK_EQUAL(t.at("taskDefName").as_string(), "ht_a");
  CAF_CHECK_EQUAL(t.at("referenceTaskName").as_string(), "a");
  CAF_CHECK_EQUAL(t.at("status").as_string(), "IN_PROGRESS");
  CAF_CHECK_EQUAL(t.at("workerId").as_string(), "w9");
  CAF_CHECK_EQUAL(t.at("inputData").as_object().size(), 0u);
  CAF_CHECK(t.at("responseTimeoutSeconds").as_int64() > 20);
  // The taskId carries the workflow and the lease after the task's own id.
  auto id = std::string{t.at("taskId").as_string()};
  CAF_CHECK_EQUAL(std::count(id.begin(), id.end(), '.'), 2);
  CAF_CHECK_EQUAL(id.substr(37, 36), std::string{t.at("workflowInstanceId").as_string()});
  auto done = report(t, "COMPLETED", {{"outputData", {{"x", 1}}}});
  CAF_CHECK_EQUAL(done.status, 200u);
  CAF_CHECK_EQUAL(done.body, id);
  CAF_CHECK_EQUAL(f.await_end(std::string{t.at("workflowInstanceId").as_string()}), "COMPLETED");
}

// Conductor's ${CPEWF_TASK_ID}: a task's input holds the id the worker reports it by, whether
// a waiting poll is lent the task in its decision or a later poll leases it; a retry holds
// its own.
CAF_TEST(a task input naming CPEWF_TASK_ID holds the id of that task) {
  auto own_id = [](const json::object& t) {
    return std::string{t.at("taskId").as_string()}.substr(0, 36);
  };
  auto check_holds = [&](const json::object& t) {
    const auto& in = t.at("inputData").as_object();
    CAF_CHECK_EQUAL(std::string{in.at("id").as_string()}, own_id(t));
    CAF_CHECK_EQUAL(std::string{in.at("url").as_string()}, "https://cb.example/t/" + own_id(t));
  };
  // Leased later, by a poll that finds it queued.
  auto wf = f.start("ht_me");
  auto t1 = poll_one("ht_a");
  check_holds(t1);
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT "id"::text FROM "TaskExecutions" WHERE "workflowId" = $1
                              AND "refName" = 'me' AND "attempt" = 0)", store::params::of(wf)),
                  own_id(t1));
  auto read = http->get("/api/tasks/" + std::string{t1.at("taskId").as_string()});
  CAF_REQUIRE_EQUAL(read.status, 200u);
  auto body = read.json();
  CAF_CHECK_EQUAL(std::string{body.at("inputData").at("id").as_string()}, own_id(t1));
  // The retry copies the input with its own id in place of the first attempt's.
  CAF_CHECK_EQUAL(report(t1, "FAILED", {{"reasonForIncompletion", "flaky"}}).status, 200u);
  auto t2 = poll_one("ht_a");
  CAF_CHECK_EQUAL(t2.at("retryCount").as_int64(), 1);
  CAF_CHECK_NOT_EQUAL(own_id(t2), own_id(t1));
  check_holds(t2);
  CAF_CHECK_EQUAL(report(t2, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  // Lent in the decision that schedules it, to a poll already waiting.
  std::thread starter([this] {
    std::this_thread::sleep_for(300ms);
    f.start("ht_me");
  });
  auto r = http->get("/api/tasks/poll/ht_a?timeout=10000&workerid=w9");
  starter.join();
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto t3 = r.json().as_object();
  check_holds(t3);
  CAF_CHECK_EQUAL(report(t3, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(std::string{t3.at("workflowInstanceId").as_string()}), "COMPLETED");
}

CAF_TEST(a task leased to a long poll whose client hung up goes to the next poller at once) {
  // A worker parks a long poll, then goes away (closes its socket) before any task comes.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  CAF_REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(f.http_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CAF_REQUIRE_EQUAL(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string req = "GET /api/tasks/poll/ht_gone?timeout=30000&workerid=gone HTTP/1.1\r\n"
                          "Host: 127.0.0.1\r\n\r\n";
  CAF_REQUIRE_EQUAL(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::this_thread::sleep_for(500ms);  // parked in the lessor by now
  ::close(fd);
  std::this_thread::sleep_for(100ms);
  // The task comes: leased to the parked poll, whose answer reaches nobody. Its lease goes
  // back at once, so the next worker gets it now, not after responseTimeoutSeconds (60).
  auto wf = f.start("ht_gone_wf", "{}");
  auto t0 = std::chrono::steady_clock::now();
  json::object t;
  while (std::chrono::steady_clock::now() - t0 < 5s) {
    auto r = http->get("/api/tasks/poll/ht_gone?timeout=500&workerid=next");
    if (r.status == 200u) {
      t = r.json().as_object();
      break;
    }
    CAF_REQUIRE_EQUAL(r.status, 204u);
  }
  auto waited = std::chrono::steady_clock::now() - t0;
  CAF_REQUIRE(!t.empty());
  CAF_CHECK(waited < 2s);
  CAF_CHECK_EQUAL(std::string{t.at("workflowInstanceId").as_string()}, wf);
  CAF_CHECK_EQUAL(t.at("workerId").as_string(), "next");
  // The same attempt, leased twice: handed back, not timed out and retried.
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT count(*) || ' ' || max("pollCount")
                                FROM "TaskExecutions" WHERE "workflowId" = $1)",
                           store::params::of(wf)),
                  "1 2");
  CAF_CHECK_EQUAL(report(t, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
}

CAF_TEST(each report status does what it says) {
  // FAILED is retried (retryCount 1), then FAILED_WITH_TERMINAL_ERROR ends the workflow.
  auto wf = f.start("ht_one");
  auto t1 = poll_one("ht_a");
  auto beat = report(t1, "IN_PROGRESS", {{"callbackAfterSeconds", 5}, {"extendLease", true}});
  CAF_CHECK_EQUAL(beat.status, 200u);
  CAF_CHECK_EQUAL(task_status(f, wf, "a"), "IN_PROGRESS");
  CAF_CHECK_EQUAL(report(t1, "FAILED", {{"reasonForIncompletion", "flaky"}}).status, 200u);
  auto t2 = poll_one("ht_a");
  CAF_CHECK_EQUAL(t2.at("retryCount").as_int64(), 1);
  CAF_CHECK_EQUAL(report(t2, "FAILED_WITH_TERMINAL_ERROR").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "FAILED");
  // An unknown status names the field and changes nothing.
  auto wf2 = f.start("ht_one");
  auto t3 = poll_one("ht_a");
  check_error(report(t3, "DONE"), 400, "status");
  check_error(report(t3, "COMPLETED", {{"callbackAfterSeconds", 3}}), 400,
              "callbackAfterSeconds");
  check_error(report(t3, "COMPLETED", {{"color", "red"}}), 400, "color");
  CAF_CHECK_EQUAL(task_status(f, wf2, "a"), "IN_PROGRESS");
  // A bare task id names no lease.
  auto bare = std::string{t3.at("taskId").as_string()}.substr(0, 36);
  check_error(http->post("/api/tasks", json::serialize(json::object{
                                         {"taskId", bare},
                                         {"workflowInstanceId", t3.at("workflowInstanceId")},
                                         {"status", "COMPLETED"}})),
              400, "taskId");
  CAF_CHECK_EQUAL(report(t3, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf2), "COMPLETED");
}

// Conductor's callback: IN_PROGRESS with callbackAfterSeconds gives the task back for that
// long (its logs kept); then the next poll takes it again, as the same attempt. With
// extendLease the worker keeps it instead (above).
CAF_TEST(an IN_PROGRESS report with callbackAfterSeconds gives the task back until then) {
  auto wf = f.start("ht_one");
  auto t = poll_one("ht_a");
  check_error(report(t, "IN_PROGRESS", {{"callbackAfterSeconds", -1}}), 400,
              "callbackAfterSeconds");
  check_error(report(t, "IN_PROGRESS", {{"callbackAfterSeconds", 1.5}}), 400,
              "callbackAfterSeconds");
  CAF_CHECK_EQUAL(json::serialize(t.at("outputData")), "{}");
  auto later = report(t, "IN_PROGRESS",
                      {{"callbackAfterSeconds", 2},
                       {"outputData", {{"round", 1}}},
                       {"logs", json::array{{{"log", "not yet"}, {"createdTime", 7}}}}});
  auto given_back = std::chrono::steady_clock::now();
  CAF_CHECK_EQUAL(later.status, 200u);
  CAF_CHECK_EQUAL(task_status(f, wf, "a"), "SCHEDULED");
  // The output so far is the task's, as in Conductor: the workflow shows it meanwhile.
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT "output"::text FROM "TaskExecutions"
                               WHERE "workflowId" = $1 AND "refName" = 'a')",
                           store::params::of(wf)),
                  R"({"round": 1})");
  // Given back: its old lease is lost, and nobody gets it before the two seconds.
  CAF_CHECK_EQUAL(report(t, "COMPLETED").status, 409u);
  CAF_CHECK_EQUAL(http->get("/api/tasks/poll/ht_a?timeout=1000").status, 204u);
  auto again = poll_one("ht_a");
  auto waited = std::chrono::steady_clock::now() - given_back;
  CAF_MESSAGE("taken again after "
              << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
  CAF_CHECK(waited >= 2s);
  auto id_of = [](const json::object& x) {
    return std::string{x.at("taskId").as_string()}.substr(0, 36);
  };
  CAF_CHECK_EQUAL(id_of(again), id_of(t));
  CAF_CHECK_EQUAL(again.at("retryCount").as_int64(), 0);
  // The worker taking it again reads what the last one reported.
  CAF_CHECK_EQUAL(json::serialize(again.at("outputData")), R"({"round":1})");
  // Conductor's callback workers count their rounds by it.
  CAF_CHECK_EQUAL(t.at("pollCount").as_int64(), 1);
  CAF_CHECK_EQUAL(again.at("pollCount").as_int64(), 2);
  CAF_CHECK_EQUAL(f.scalar(R"(SELECT "pollCount"::text FROM "TaskExecutions"
                               WHERE "workflowId" = $1 AND "refName" = 'a')",
                           store::params::of(wf)),
                  "2");
  CAF_CHECK_EQUAL(report(again, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  auto logs = http->get("/api/tasks/" + std::string{again.at("taskId").as_string()} + "/log");
  CAF_REQUIRE_EQUAL(logs.status, 200u);
  CAF_CHECK(json::serialize(logs.json()).find("not yet") != std::string::npos);
}

CAF_TEST(resetcallbacks queues a task given back with callbackAfterSeconds at once) {
  auto wf = f.start("ht_one");
  auto t = poll_one("ht_a");
  CAF_REQUIRE_EQUAL(report(t, "IN_PROGRESS", {{"callbackAfterSeconds", 3600}}).status, 200u);
  CAF_CHECK_EQUAL(http->get("/api/tasks/poll/ht_a?timeout=300").status, 204u);
  auto r = http->post("/api/workflow/" + wf + "/resetcallbacks", "");
  CAF_REQUIRE_EQUAL(r.status, 204u);
  auto again = poll_one("ht_a");
  CAF_CHECK_EQUAL(std::string{again.at("taskId").as_string()}.substr(0, 36),
                  std::string{t.at("taskId").as_string()}.substr(0, 36));
  CAF_CHECK_EQUAL(again.at("pollCount").as_int64(), 2);
  // Nothing else waits: a second reset queues nothing more.
  CAF_CHECK_EQUAL(http->post("/api/workflow/" + wf + "/resetcallbacks", "").status, 204u);
  CAF_CHECK_EQUAL(http->get("/api/tasks/poll/ht_a?timeout=300").status, 204u);
  CAF_CHECK_EQUAL(report(again, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  auto ended = http->post("/api/workflow/" + wf + "/resetcallbacks", "");
  check_error(ended, 409);
  CAF_CHECK(ended.body.find("ended workflow") != std::string::npos);
}

CAF_TEST(a result for a lost lease is 409 and changes nothing) {
  auto wf = f.start("ht_lease");
  auto old = poll_one("ht_short");
  // responseTimeoutSeconds 1: the lease expires and the task is offered again.
  auto fresh = poll_one("ht_short");
  CAF_CHECK_EQUAL(fresh.at("retryCount").as_int64(), 1);
  auto late = report(old, "COMPLETED", {{"outputData", {{"stale", true}}},
                                        {"logs", json::array{{{"log", "late"},
                                                              {"createdTime", 1}}}}});
  check_error(late, 409, "taskId");
  CAF_CHECK(late.json().at("message").as_string().find("lease was lost")
            != json::string::npos);
  check_error(report(old, "IN_PROGRESS", {{"extendLease", true}}), 409, "taskId");
  CAF_CHECK_EQUAL(task_status(f, wf, "s"), "IN_PROGRESS");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "payload"::text LIKE '%late%')",
                          store::params::of(wf)),
                  0);
  CAF_CHECK_EQUAL(report(fresh, "COMPLETED", {{"outputData", {{"ok", 1}}}}).status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
}

// The Conductor SDKs report through update-v2 when a server has it: the same report, and no
// next task in the answer.
CAF_TEST(update v2 reports a result and answers no next task) {
  auto wf = f.start("ht_lease");
  auto old = poll_one("ht_short");
  auto fresh = poll_one("ht_short");
  auto body = [](const json::object& t, json::object extra) {
    extra["taskId"] = t.at("taskId");
    extra["workflowInstanceId"] = t.at("workflowInstanceId");
    if (!extra.contains("status"))
      extra["status"] = "COMPLETED";
    return json::serialize(extra);
  };
  check_error(http->post("/api/tasks/update-v2", body(old, {})), 409, "taskId");
  check_error(http->post("/api/tasks/update-v2", body(fresh, {{"status", "DONE"}})), 400,
              "status");
  auto r = http->post("/api/tasks/update-v2", body(fresh, {{"outputData", {{"ok", 2}}}}));
  CAF_CHECK_EQUAL(r.status, 200u);
  CAF_CHECK(r.json().is_null());
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  CAF_CHECK_EQUAL(f.get(wf).at("tasks").as_array().back().at("output").at("ok").as_int64(), 2);
}

// nodeflow's batch report: a bad item refuses the whole request (nothing applied), a lost
// lease is answered 409 in its place while the others apply.
CAF_TEST(a batch of reports answers each result in its place) {
  auto wf1 = f.start("ht_one");
  auto wf2 = f.start("ht_lease");
  auto a = poll_one("ht_a");
  auto old = poll_one("ht_short");
  auto fresh = poll_one("ht_short"); // the first lease expired (responseTimeoutSeconds 1)
  auto item = [](const json::object& t, const char* status) {
    return json::object{{"taskId", t.at("taskId")},
                        {"workflowInstanceId", t.at("workflowInstanceId")},
                        {"status", status},
                        {"outputData", {{"batched", true}}}};
  };
  // A bad item: nothing is applied.
  auto bad = http->post("/api/tasks/batch",
                        json::serialize(json::array{item(a, "COMPLETED"), item(fresh, "DONE")}));
  check_error(bad, 400, "[1].status");
  check_error(http->post("/api/tasks/batch", "[]"), 400, "body");
  check_error(http->post("/api/tasks/batch", "{}"), 400, "body");
  CAF_CHECK_EQUAL(task_status(f, wf1, "a"), "IN_PROGRESS");
  auto r = http->post("/api/tasks/batch", json::serialize(json::array{
                                            item(a, "COMPLETED"), item(old, "COMPLETED"),
                                            item(fresh, "COMPLETED")}));
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto out = r.json().as_array();
  CAF_REQUIRE_EQUAL(out.size(), 3u);
  CAF_CHECK_EQUAL(out[0].at("status").as_int64(), 200);
  CAF_CHECK_EQUAL(out[0].at("taskId"), a.at("taskId"));
  CAF_CHECK_EQUAL(out[1].at("status").as_int64(), 409);
  CAF_CHECK_EQUAL(out[2].at("status").as_int64(), 200);
  CAF_CHECK_EQUAL(f.await_end(wf1), "COMPLETED");
  CAF_CHECK_EQUAL(f.await_end(wf2), "COMPLETED");
}

CAF_TEST(task logs round trip) {
  auto wf = f.start("ht_one");
  auto t = poll_one("ht_a");
  auto id = std::string{t.at("taskId").as_string()};
  CAF_CHECK_EQUAL(http->post("/api/tasks/" + id + "/log", "\"first line\"").status, 200u);
  check_error(http->post("/api/tasks/" + id + "/log", "{\"log\":1}"), 400, "body");
  auto progress = report(t, "IN_PROGRESS",
                         {{"outputData", {{"step", 1}}},
                          {"logs", json::array{{{"log", "second"}, {"createdTime", 42}}}}});
  CAF_CHECK_EQUAL(progress.status, 200u);
  auto done = report(t, "COMPLETED",
                     {{"logs", json::array{{{"log", "third"}, {"createdTime", 43}}}}});
  CAF_CHECK_EQUAL(done.status, 200u);
  auto logs = http->get("/api/tasks/" + id + "/log");
  CAF_REQUIRE_EQUAL(logs.status, 200u);
  auto a = logs.json().as_array();
  CAF_REQUIRE_EQUAL(a.size(), 3u);
  CAF_CHECK_EQUAL(a[0].at("log").as_string(), "first line");
  CAF_CHECK_EQUAL(a[1].at("log").as_string(), "second");
  CAF_CHECK_EQUAL(a[1].at("createdTime").as_int64(), 42);
  CAF_CHECK_EQUAL(a[2].at("log").as_string(), "third");
  CAF_CHECK_EQUAL(a[2].at("taskId").as_string(), id);
  // The IN_PROGRESS output is in the history, not the task's output.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                             AND "eventType" = 'TASK_IN_PROGRESS'
                             AND "payload" -> 'outputData' ->> 'step' = '1')",
                          store::params::of(wf)),
                  1);
  check_error(http->get("/api/tasks/not-a-task/log"), 400, "taskId");
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
}

CAF_TEST(a task reads back by the taskId a poll answered) {
  auto wf = f.start("ht_one");
  auto t = poll_one("ht_a");
  auto handle = std::string{t.at("taskId").as_string()};
  auto r = http->get("/api/tasks/" + handle);
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto task = r.json();
  CAF_CHECK_EQUAL(task.at("taskId").as_string(), handle);
  CAF_CHECK_EQUAL(task.at("status").as_string(), "IN_PROGRESS");
  CAF_CHECK_EQUAL(task.at("referenceTaskName").as_string(), "a");
  CAF_CHECK_EQUAL(task.at("workflowInstanceId").as_string(), wf);
  // The task read back, sent back as its result, completes it: its lease came with it.
  CAF_CHECK_EQUAL(report(task.as_object(), "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  auto bare = handle.substr(0, 36);
  auto by_workflow = http->get("/api/tasks/" + bare + "." + wf);
  CAF_REQUIRE_EQUAL(by_workflow.status, 200u);
  CAF_CHECK_EQUAL(by_workflow.json().at("status").as_string(), "COMPLETED");
  check_error(http->get("/api/tasks/" + bare), 400, "taskId");
  check_error(http->get("/api/tasks/not-a-task"), 400, "taskId");
  check_error(http->get("/api/tasks/" + wf + "." + wf), 404);
}

CAF_TEST(task search pages the executions of one type) {
  auto a = f.start("ht_one");
  auto b = f.start("ht_one");
  auto t = poll_one("ht_a");
  CAF_CHECK_EQUAL(report(t, "COMPLETED").status, 200u);
  auto done = std::string{t.at("workflowInstanceId").as_string()};
  CAF_REQUIRE_EQUAL(f.await_end(done), "COMPLETED");
  auto all = http->get("/api/tasks/search?start=0&size=10&sort=&query=taskType%3D%27ht_a%27");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  auto v = all.json();
  CAF_CHECK_EQUAL(v.at("totalHits").to_number<int64_t>(), 2);
  CAF_CHECK(v.at("nextCursor").is_null());
  const auto& first = v.at("results").as_array()[0];
  CAF_CHECK_EQUAL(first.at("taskType").as_string(), "ht_a");
  CAF_CHECK_EQUAL(first.at("referenceTaskName").as_string(), "a");
  CAF_CHECK(first.at("scheduledTime").is_string());
  auto completed =
    http->get("/api/tasks/search?query=taskType%20%3D%20ht_a%20AND%20status%20%3D%20COMPLETED");
  CAF_REQUIRE_EQUAL(completed.status, 200u);
  auto cv = completed.json();
  CAF_REQUIRE_EQUAL(cv.at("totalHits").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(cv.at("results").as_array()[0].at("workflowId").as_string(), done);
  // One a page: the second page follows the first's cursor, and the two differ.
  auto p1 = http->get("/api/tasks/search?size=1&query=taskType%3Dht_a").json();
  CAF_REQUIRE(p1.at("nextCursor").is_string());
  auto p2 = http->get("/api/tasks/search?size=1&query=taskType%3Dht_a&cursor="
                      + std::string{p1.at("nextCursor").as_string()})
              .json();
  std::set<std::string> ids{std::string{p1.at("results").as_array()[0].at("workflowId").as_string()},
                            std::string{p2.at("results").as_array()[0].at("workflowId").as_string()}};
  CAF_CHECK_EQUAL(ids, (std::set<std::string>{a, b}));
  check_error(http->get("/api/tasks/search?query=status%3DCOMPLETED"), 400, "query");
  check_error(http->get("/api/tasks/search?query=taskType%3Dht_a%20AND%20status%3DDONE"), 400,
              "query");
  // An unquoted value holding an OR would search for a type named "ht_a OR …": refused.
  check_error(http->get("/api/tasks/search?query=taskType%3Dht_a%20OR%20taskType%3Dx"), 400,
              "query");
  check_error(http->get("/api/tasks/search?start=5&query=taskType%3Dht_a"), 400, "start");
  check_error(http->get("/api/tasks/search?freeText=abc&query=taskType%3Dht_a"), 400,
              "freeText");
}

CAF_TEST(queue sizes count the ready tasks of each type) {
  f.start("ht_one");
  f.start("ht_one");
  CAF_CHECK(f.await(
    [this] {
      auto r = http->get("/api/tasks/queue/sizes?taskType=ht_a&taskType=ht_short");
      auto v = r.json();
      return r.status == 200 && v.at("ht_a").to_number<int64_t>() == 2
             && v.at("ht_short").to_number<int64_t>() == 0;
    },
    10s));
  auto all = http->get("/api/tasks/queue/all");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  CAF_CHECK_EQUAL(all.json().at("ht_a").to_number<int64_t>(), 2);
  CAF_CHECK(!all.json().as_object().contains("nope"));
  auto commas = http->get("/api/tasks/queue/sizes?taskType=ht_a,nope");
  CAF_CHECK_EQUAL(commas.json().at("ht_a").to_number<int64_t>(), 2);
  CAF_CHECK_EQUAL(commas.json().at("nope").to_number<int64_t>(), 0);
  check_error(http->get("/api/tasks/queue/sizes"), 400, "taskType");
  // One queue's depth as a number, as Java's getQueueSizeForTask asks for it.
  auto depth = http->get("/api/tasks/queue/size?taskType=ht_a&domain=&isolationGroupId=");
  CAF_REQUIRE_EQUAL(depth.status, 200u);
  CAF_CHECK_EQUAL(depth.json().to_number<int64_t>(), 2);
  CAF_CHECK_EQUAL(http->get("/api/tasks/queue/size?taskType=ht_a&domain=east").json()
                    .to_number<int64_t>(),
                  0);
  check_error(http->get("/api/tasks/queue/size?taskType=ht_a&isolationGroupId=g1"), 400,
              "isolationGroupId");
  check_error(http->get("/api/tasks/queue/size"), 400, "taskType");
  // Conductor's verbose details: one shard "a" per queue, its ready and its leased tasks.
  f.start("ht_one");
  auto leased = poll_one("ht_a");
  CAF_CHECK(f.await(
    [this] {
      auto r = http->get("/api/tasks/queue/all/verbose");
      auto v = r.json();
      const auto* q = r.status == 200 ? v.as_object().if_contains("ht_a") : nullptr;
      return q != nullptr && q->at("a").at("size").to_number<int64_t>() == 2
             && q->at("a").at("uacked").to_number<int64_t>() == 1;
    },
    10s));
  CAF_CHECK_EQUAL(report(leased, "COMPLETED").status, 200u);
}

CAF_TEST(poll data says when each worker last polled a task type) {
  auto ms_now = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
  };
  auto before = ms_now();
  CAF_REQUIRE_EQUAL(http->get("/api/tasks/poll/pd_type?workerid=pd_w1&timeout=0").status, 204u);
  CAF_REQUIRE_EQUAL(
    http->get("/api/tasks/poll/batch/pd_type?count=2&timeout=0&workerid=pd_w2&domain=pd_dom")
      .status,
    200u);
  CAF_REQUIRE_EQUAL(http->get("/api/tasks/poll/pd_type?timeout=0").status, 204u);
  CAF_REQUIRE_EQUAL(http->get("/api/tasks/poll/pd_other?workerid=pd_w1&timeout=0").status, 204u);
  auto after = ms_now();
  // The node's own polls show at once.
  auto r = http->get("/api/tasks/queue/polldata?taskType=pd_type");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto rows = r.json().as_array();
  CAF_REQUIRE_EQUAL(rows.size(), 3u);
  std::set<std::string> seen;
  for (const auto& row : rows) {
    const auto& o = row.as_object();
    CAF_CHECK_EQUAL(o.at("queueName").as_string(), "pd_type");
    auto at = o.at("lastPollTime").to_number<int64_t>();
    CAF_CHECK(at >= before - 1000 && at <= after + 1000);
    seen.insert(std::string{o.at("domain").as_string()} + "/"
                + (o.at("workerId").is_null() ? "null" : std::string{o.at("workerId").as_string()}));
  }
  CAF_CHECK_EQUAL(seen, (std::set<std::string>{"DEFAULT/null", "DEFAULT/pd_w1", "pd_dom/pd_w2"}));
  auto all = http->get("/api/tasks/queue/polldata/all");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  size_t of_other = 0;
  auto all_rows = all.json();
  for (const auto& row : all_rows.as_array())
    of_other += row.at("queueName").as_string() == "pd_other";
  CAF_CHECK_EQUAL(of_other, 1u);
  check_error(http->get("/api/tasks/queue/polldata"), 400, "taskType");
  // Without a read, the node writes what it noted within its interval (5 s).
  CAF_REQUIRE_EQUAL(http->get("/api/tasks/poll/pd_type?workerid=pd_w3&timeout=0").status, 204u);
  CAF_CHECK(f.await(
    [&] {
      return f.scalar(R"(SELECT count(*)::text FROM "PollData" WHERE "workerId" = 'pd_w3')")
             == "1";
    },
    10s));
}

CAF_TEST(a WAIT task completes by its ref name) {
  auto wf = f.start("ht_wait");
  CAF_REQUIRE(f.await([&] { return task_status(f, wf, "w") == "IN_PROGRESS"; }, 10s));
  check_error(http->post("/api/tasks/" + wf + "/w/DONE", "{}"), 400, "status");
  check_error(http->post("/api/tasks/" + wf + "/nope/COMPLETED", "{}"), 404);
  auto r = http->post("/api/tasks/" + wf + "/w/COMPLETED", "{\"approved\":\"yes\"}");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK_EQUAL(r.body.size(), 36u);
  auto t = poll_one("ht_a");
  CAF_CHECK_EQUAL(t.at("inputData").at("got").as_string(), "yes");
  // The WAIT has ended: a second update is refused.
  check_error(http->post("/api/tasks/" + wf + "/w/COMPLETED", "{}"), 400, "taskRefName");
  // A worker's task is not completed by its ref name.
  check_error(http->post("/api/tasks/" + wf + "/after/COMPLETED", "{}"), 400, "taskRefName");
  CAF_CHECK_EQUAL(report(t, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  CAF_CHECK_EQUAL(f.get(wf).at("output").at("got").as_string(), "yes");
}

CAF_TEST(decide evaluates a RUNNING workflow again) {
  auto wf = f.start("ht_wait");
  CAF_REQUIRE(f.await([&] { return task_status(f, wf, "w") == "IN_PROGRESS"; }, 10s));
  // A change no decider was told of: the WAIT ended with no "DecideQueues" row behind it, as
  // after a repair by hand. Nothing moves until the workflow is decided again.
  f.scalar(R"(UPDATE "TaskExecutions" SET "status" = 'COMPLETED', "endedAt" = now(),
                "output" = '{"approved": "late"}' WHERE "workflowId" = $1 AND "refName" = 'w'
              RETURNING 'done')",
           store::params::of(wf));
  std::this_thread::sleep_for(1s);
  CAF_CHECK_EQUAL(task_status(f, wf, "after"), "");
  CAF_REQUIRE_EQUAL(http->put("/api/workflow/decide/" + wf, "").status, 200u);
  auto t = poll_one("ht_a");
  CAF_CHECK_EQUAL(t.at("inputData").at("got").as_string(), "late");
  CAF_CHECK_EQUAL(report(t, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  // An ended workflow has nothing to decide: answered, and nothing changes.
  CAF_CHECK_EQUAL(http->put("/api/workflow/decide/" + wf, "").status, 200u);
  CAF_CHECK_EQUAL(wf_status(f, wf), "COMPLETED");
  check_error(http->put("/api/workflow/decide/0190a1b2-0000-7000-8000-000000000000", ""), 404);
  check_error(http->put("/api/workflow/decide/nope", ""), 400, "workflowId");
}

CAF_TEST(a WAIT task updated by its ref name with sync answers the workflow) {
  auto wf = f.start("ht_wait");
  CAF_REQUIRE(f.await([&] { return task_status(f, wf, "w") == "IN_PROGRESS"; }, 10s));
  check_error(http->post("/api/tasks/nope/w/COMPLETED/sync", "{}"), 400, "workflowId");
  auto r = http->post("/api/tasks/" + wf + "/w/COMPLETED/sync?workerid=me",
                      "{\"approved\":\"yes\"}");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto v = r.json();
  CAF_CHECK_EQUAL(v.at("workflowId").as_string(), wf);
  const auto& first = v.at("tasks").as_array()[0];
  CAF_CHECK_EQUAL(first.at("referenceTaskName").as_string(), "w");
  CAF_CHECK_EQUAL(first.at("status").as_string(), "COMPLETED");
  CAF_CHECK_EQUAL(first.at("outputData").at("approved").as_string(), "yes");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                              AND "eventType" = 'SIGNAL_RECEIVED'
                              AND "payload"->>'workerId' = 'me')",
                          store::params::of(wf)),
                  1);
  check_error(http->post("/api/tasks/" + wf + "/w/COMPLETED/sync", "{}"), 400, "taskRefName");
}

CAF_TEST(a task inside a DO_WHILE is named ref__iteration as in Conductor) {
  auto wf = f.start("ht_loop");
  CAF_REQUIRE(f.await([&] { return task_status(f, wf, "lw") == "IN_PROGRESS"; }, 10s));
  check_error(http->post("/api/tasks/" + wf + "/lw__2/COMPLETED", "{}"), 404);
  CAF_REQUIRE_EQUAL(http->post("/api/tasks/" + wf + "/lw__1/COMPLETED", "{}").status, 200u);
  auto t = poll_one("ht_a");
  CAF_CHECK_EQUAL(t.at("referenceTaskName").as_string(), "la__1");
  CAF_CHECK_EQUAL(t.at("iteration").to_number<int64_t>(), 1);
  CAF_CHECK_EQUAL(report(t, "COMPLETED").status, 200u);
  CAF_REQUIRE(f.await([&] {
    return f.count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1
                      AND "refName" = 'lw' AND "iteration" = 2 AND "status" = 'IN_PROGRESS')",
                   store::params::of(wf)) == 1;
  }, 10s));
  // Iteration 1 has ended: its name no longer reaches the task that waits.
  check_error(http->post("/api/tasks/" + wf + "/lw__1/COMPLETED", "{}"), 409, "taskRefName");
  CAF_REQUIRE_EQUAL(http->post("/api/tasks/" + wf + "/lw__2/COMPLETED", "{}").status, 200u);
  auto t2 = poll_one("ht_a");
  CAF_CHECK_EQUAL(t2.at("referenceTaskName").as_string(), "la__2");
  CAF_CHECK_EQUAL(report(t2, "COMPLETED").status, 200u);
  CAF_CHECK_EQUAL(f.await_end(wf), "COMPLETED");
  auto shown = http->get("/api/workflow/" + wf);
  CAF_REQUIRE_EQUAL(shown.status, 200u);
  auto shown_wf = shown.json();
  std::multiset<std::string> refs;
  for (const auto& task : shown_wf.at("tasks").as_array())
    refs.insert(std::string{task.at("referenceTaskName").as_string()});
  CAF_CHECK_EQUAL(refs, (std::multiset<std::string>{"loop", "lw__1", "la__1", "lw__2", "la__2"}));
}

CAF_TEST_FIXTURE_SCOPE_END()

// A signal and a task update by reference wait in "DecideQueues"; with the deciders' polls an
// hour apart only the node's hint after the commit gets them evaluated.
CAF_TEST(a signal and a task updated by its ref name are decided without waiting for a poll) {
  test::http_node n{"http_tasks_hint",
                    R"([{"name": "ht_hint", "tasks": [
                         {"name": "w", "taskReferenceName": "w", "type": "WAIT"},
                         {"name": "g", "taskReferenceName": "g", "type": "WAIT",
                          "inputParameters": {"signal": "go"}}],
                        "outputParameters": {"w": "${w.output.ok}", "g": "${g.output}"}}])",
                    {{"decider.poll_interval_ms", "3600000"}, {"poll.idle_max_ms", "3600000"}}};
  auto wf = n.f.start("ht_hint");
  CAF_REQUIRE(n.f.await([&] { return task_status(n.f, wf, "w") == "IN_PROGRESS"; }, 10s));
  CAF_REQUIRE_EQUAL(n.http->post("/api/tasks/" + wf + "/w/COMPLETED", R"({"ok": 1})").status,
                    200u);
  CAF_REQUIRE(n.f.await([&] { return task_status(n.f, wf, "g") == "IN_PROGRESS"; }, 30s));
  CAF_REQUIRE_EQUAL(n.http->post("/api/workflow/" + wf + "/signal/go", R"({"k": 2})").status,
                    200u);
  CAF_REQUIRE(n.f.await([&] { return wf_status(n.f, wf) == "COMPLETED"; }, 30s));
  CAF_CHECK_EQUAL(n.f.get(wf).at("output").at("w").as_int64(), 1);
}
