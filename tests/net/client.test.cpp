#define CAF_SUITE net.client
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <future>
#include <thread>

#include "net/client/client.hpp"
#include "tests/net/fake_node.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

client_options at(uint16_t port, std::chrono::milliseconds timeout = 5000ms) {
  client_options o;
  o.port = port;
  o.timeout = timeout;
  return o;
}

// A port nobody listens on: bound by a fake node that is then stopped.
uint16_t free_port() {
  test::fake_node n;
  return n.port();
}

template <class F>
std::chrono::milliseconds timed(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now()
                                                               - t0);
}

} // namespace

CAF_TEST(calls round-trip every field of the protocol) {
  test::fake_node node;
  client c{at(node.port())};
  msg::start_request s;
  s.workflow_name = "order";
  s.version = 3;
  s.input_json = R"({"id":7})";
  s.correlation_id = "c-1";
  s.priority = 5;
  auto started = c.start(s);
  CAF_REQUIRE(started);
  CAF_CHECK_EQUAL(started->workflow_id, "01890000-0000-7000-8000-000000000001");
  CAF_CHECK(started->created);
  auto tasks = c.poll({"", "email", "w1", 4, 100});
  CAF_REQUIRE(tasks);
  CAF_REQUIRE_EQUAL(tasks->size(), 1u);
  CAF_CHECK_EQUAL(tasks->front().task_def_name, "email");
  CAF_CHECK(c.complete(tasks->front(), R"({"ok":true})"));
  CAF_CHECK(c.fail(tasks->front(), "boom", true));
  auto beat = c.heartbeat(tasks->front());
  CAF_REQUIRE(beat);
  CAF_CHECK_EQUAL(*beat, 123);
  CAF_CHECK(c.rerun("01890000-0000-7000-8000-000000000001", "charge", 2, R"({"a":1})"));
  CAF_CHECK(c.signal("01890000-0000-7000-8000-000000000001", "approved", R"({"by":"ada"})"));
  msg::poll_data_query pd;
  pd.task_type = "email";
  auto polls = c.poll_data(pd);
  CAF_REQUIRE(polls);
  CAF_CHECK(polls->find(R"("workerId":"w")") != std::string::npos);
  auto lines = node.log().take();
  std::vector<std::string> want{
    R"(start order v3 input={"id":7} key= corr=c-1 prio=5)",
    "poll email max=4",
    R"(complete 01890000-0000-7000-8000-0000000000aa COMPLETED output={"ok":true} reason= token=01890000-0000-7000-8000-0000000000bb)",
    "complete 01890000-0000-7000-8000-0000000000aa FAILED_WITH_TERMINAL_ERROR output= reason=boom "
    "token=01890000-0000-7000-8000-0000000000bb",
    "heartbeat 01890000-0000-7000-8000-0000000000aa",
    R"(rerun 01890000-0000-7000-8000-000000000001 reason= task=charge iteration=2 input={"a":1})",
    R"(signal 01890000-0000-7000-8000-000000000001 approved payload={"by":"ada"})",
    "poll data email",
  };
  CAF_CHECK_EQUAL(lines, want);
}

CAF_TEST(answers that are errors keep their kind and message) {
  test::fake_node node;
  client c{at(node.port())};
  auto r = c.get(test::missing_workflow);
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(describe(r.error()),
                  std::string{"not found: workflow "} + test::missing_workflow + " not found");
  CAF_CHECK(!is_unavailable(r.error()));
  // The connection stays in use after an error answer.
  CAF_CHECK(c.get("01890000-0000-7000-8000-000000000001"));
}

CAF_TEST(no node is unavailable within the call timeout) {
  client c{at(free_port(), 800ms)};
  caf::expected<std::string> r{std::string{}};
  auto took = timed([&] { r = c.status(); });
  CAF_REQUIRE(!r);
  CAF_CHECK(is_unavailable(r.error()));
  CAF_CHECK(describe(r.error()).rfind("unavailable: cannot reach node 127.0.0.1:", 0) == 0);
  CAF_CHECK_LESS(took, 3000ms);
}

CAF_TEST(the client reconnects when the node comes back on its port) {
  auto log = std::make_shared<test::fake_log>();
  auto node = std::make_unique<test::fake_node>(0, log);
  uint16_t port = node->port();
  client c{at(port, 3000ms)};
  CAF_REQUIRE(c.status());
  node.reset(); // the node goes away
  auto down = c.status();
  CAF_REQUIRE(!down);
  CAF_CHECK(is_unavailable(down.error()));
  node = std::make_unique<test::fake_node>(port, log); // restarted on the same port
  auto back = c.status();
  CAF_REQUIRE(back);
  CAF_CHECK_EQUAL(log->take(), (std::vector<std::string>{"status", "status"}));
}

CAF_TEST(a request in flight fails at once when the node dies) {
  auto log = std::make_shared<test::fake_log>();
  log->hold_polls = true;
  auto node = std::make_unique<test::fake_node>(0, log);
  client c{at(node->port(), 20000ms)};
  auto pending = std::async(std::launch::async, [&] { return c.poll({"", "q", "w", 1, 10000}); });
  while (log->take().empty())
    std::this_thread::sleep_for(10ms);
  auto took = timed([&] {
    node.reset();
    auto r = pending.get();
    CAF_REQUIRE(!r);
    CAF_CHECK(is_unavailable(r.error()));
    CAF_MESSAGE("in-flight poll failed with: " << describe(r.error()));
  });
  CAF_CHECK_LESS(took, 8000ms); // the poll's own timeout is 30 s
}

CAF_TEST(async polls deliver through callbacks) {
  test::fake_node node;
  client c{at(node.port())};
  std::promise<caf::expected<std::vector<msg::leased_task>>> got;
  c.poll_async({"", "q", "w", 1, 100},
               [&](caf::expected<std::vector<msg::leased_task>> r) { got.set_value(std::move(r)); });
  auto f = got.get_future();
  CAF_REQUIRE(f.wait_for(5s) == std::future_status::ready);
  auto r = f.get();
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(r->size(), 1u);
  CAF_CHECK_EQUAL(c.in_flight(), 0u);
}

CAF_TEST(a batch of reports answers each result in its place) {
  test::fake_node node;
  client c{at(node.port())};
  auto result = [](const std::string& task, const std::string& workflow) {
    return msg::task_result{task, workflow, "01890000-0000-7000-8000-0000000000bb", "COMPLETED",
                            R"({"n":1})", ""};
  };
  const std::string wf = "01890000-0000-7000-8000-000000000001";
  std::vector<msg::task_result> rs{result("01890000-0000-7000-8000-0000000000a1", wf),
                                   result("01890000-0000-7000-8000-0000000000a2",
                                          test::missing_workflow),
                                   result("01890000-0000-7000-8000-0000000000a3", wf)};
  auto r = c.report_batch(rs);
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->size(), 3u);
  CAF_CHECK((*r)[0] && *(*r)[0] == "{}");
  CAF_REQUIRE(!(*r)[1]);
  CAF_CHECK_EQUAL(describe((*r)[1].error()), "lease lost");
  CAF_CHECK((*r)[2]);
  std::promise<caf::expected<client::report_answers>> got;
  c.report_batch_async(rs, [&](caf::expected<client::report_answers> a) {
    got.set_value(std::move(a));
  });
  auto f = got.get_future();
  CAF_REQUIRE(f.wait_for(5s) == std::future_status::ready);
  auto a = f.get();
  CAF_REQUIRE(a);
  CAF_CHECK_EQUAL(a->size(), 3u);
  CAF_CHECK(!(*a)[1]);
  auto lines = node.log().take();
  CAF_REQUIRE_EQUAL(lines.size(), 6u);
  CAF_CHECK_EQUAL(lines[1], R"(complete 01890000-0000-7000-8000-0000000000a2 COMPLETED output={"n":1} reason= token=01890000-0000-7000-8000-0000000000bb)");
  CAF_CHECK_EQUAL(c.in_flight(), 0u);
}

CAF_TEST(a request answered unavailable is sent again with the same request id) {
  test::fake_node node;
  client c{at(node.port())};
  auto ids = [&] {
    std::lock_guard<std::mutex> g{node.log().mx};
    return node.log().request_ids;
  };
  CAF_REQUIRE(c.signal(test::flaky_workflow, "go"));
  auto first = ids();
  CAF_REQUIRE_EQUAL(first.size(), 2u);
  CAF_CHECK_EQUAL(first[0].size(), 32u);
  CAF_CHECK_EQUAL(first[0], first[1]);
  // The next call has an id of its own; one the caller gives is kept.
  CAF_REQUIRE(c.signal(test::flaky_workflow, "go"));
  msg::signal_request mine{test::flaky_workflow, "go", "null"};
  mine.request_id = "mine-1";
  CAF_REQUIRE(c.signal(mine));
  auto all = ids();
  CAF_REQUIRE_EQUAL(all.size(), 6u);
  CAF_CHECK_NOT_EQUAL(all[2], all[0]);
  CAF_CHECK_EQUAL(all[2], all[3]);
  CAF_CHECK_EQUAL(all[4], "mine-1");
  CAF_CHECK_EQUAL(all[5], "mine-1");
}

CAF_TEST(node addresses are parsed strictly) {
  auto ok = parse_node_address("db.example:4600");
  CAF_REQUIRE(ok);
  CAF_CHECK_EQUAL(ok->host, "db.example");
  CAF_CHECK_EQUAL(ok->port, 4600);
  auto v6 = parse_node_address("[::1]:4510");
  CAF_REQUIRE(v6);
  CAF_CHECK_EQUAL(v6->host, "::1");
  for (const char* bad : {"localhost", ":4510", "host:", "host:0", "host:65536", "host:45x"}) {
    auto r = parse_node_address(bad);
    CAF_CHECK(!r);
    if (!r)
      CAF_CHECK(describe(r.error()).rfind("invalid: node address: expected HOST:PORT", 0) == 0);
  }
}
