#define CAF_SUITE http.events

// A workflow's history over HTTP: the JSON pages of `GET /api/workflow/{id}/events`, and the
// live stream `…/events/stream` (Server-Sent Events) run to the workflow's end, cut and
// resumed with Last-Event-ID without a gap or a repeat, and 1,000 streams at once on one
// node over ONE LISTEN connection (pg_stat_activity says how many there are).

#include <caf/test/dsl.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([
  {"name": "echo", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "history_three", "version": 1, "tasks": [
    {"name": "echo", "taskReferenceName": "one", "inputParameters": {"n": 1}},
    {"name": "echo", "taskReferenceName": "two", "inputParameters": {"n": 2}},
    {"name": "echo", "taskReferenceName": "three", "inputParameters": {"n": 3}}]}
])";

// How pg_stat_activity shows the hub's LISTEN connection (store/event_notifications.cpp).
constexpr const char* listen_backends = R"(SELECT count(*) FROM pg_stat_activity
  WHERE "datname" = current_database() AND "query" = 'LISTEN "node_flow_workflow_events"')";

constexpr int streams_at_once = 1000;

// 1,000 streams hold a socket each in this process, and as many in the node (which inherits
// this limit): raise the soft limit on open files as far as the hard one allows.
void raise_file_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

struct seen_event {
  int64_t seq = 0;
  std::string type;
};

struct fixture {
  test::e2e_fixture f;
  std::unique_ptr<test::http_client> http;
  fixture()
    : f{"http_events", {{"http.max_event_streams", std::to_string(streams_at_once)},
                        {"http.threads", "4"},
                        {"http.event_stream_ping_s", "1"}}} {
    raise_file_limit();
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(definitions);
  }

  std::string stream_target(const std::string& id) {
    return "/api/workflow/" + id + "/events/stream";
  }

  // The whole history through the JSON route, a page of `limit` at a time.
  std::vector<seen_event> history(const std::string& id, int limit = 1000) {
    std::vector<seen_event> out;
    int64_t after = 0;
    for (;;) {
      auto r = http->get("/api/workflow/" + id + "/events?after=" + std::to_string(after)
                         + "&limit=" + std::to_string(limit));
      CAF_REQUIRE_EQUAL(r.status, 200u);
      auto v = r.json();
      const auto& events = v.at("events").as_array();
      for (const auto& e : events)
        out.push_back({e.at("seq").as_int64(), std::string{e.at("type").as_string()}});
      auto next = v.at("next").as_int64();
      if (events.empty()) {
        CAF_CHECK_EQUAL(next, after);
        return out;
      }
      CAF_CHECK_EQUAL(next, out.back().seq);
      after = next;
    }
  }
};

// An event as the stream shows it: id and event name agree with the JSON in data.
seen_event parse_frame(const test::sse_reader::event& ev) {
  auto data = boost::json::parse(ev.data);
  seen_event out{data.at("seq").as_int64(), std::string{data.at("type").as_string()}};
  CAF_CHECK_EQUAL(ev.id, std::to_string(out.seq));
  CAF_CHECK_EQUAL(ev.type, out.type);
  return out;
}

// Every event until the server ends the stream (or `patience` passes).
std::vector<seen_event> read_to_end(test::sse_reader& s, std::chrono::milliseconds patience) {
  std::vector<seen_event> out;
  auto deadline = std::chrono::steady_clock::now() + patience;
  while (!s.ended() && std::chrono::steady_clock::now() < deadline)
    if (auto ev = s.next(200ms))
      out.push_back(parse_frame(*ev));
  return out;
}

bool same(const std::vector<seen_event>& a, const std::vector<seen_event>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const seen_event& x, const seen_event& y) {
                      return x.seq == y.seq && x.type == y.type;
                    });
}

// The seqs 1 … n, each once, in order.
bool gap_free(const std::vector<seen_event>& evs) {
  for (size_t i = 0; i < evs.size(); ++i)
    if (evs[i].seq != static_cast<int64_t>(i) + 1)
      return false;
  return !evs.empty();
}

int log_lines_with(const std::string& path, const std::string& what) {
  std::ifstream in{path};
  int n = 0;
  for (std::string line; std::getline(in, line);)
    n += line.find(what) != std::string::npos ? 1 : 0;
  return n;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_events, fixture)

CAF_TEST(the history route pages the events of a workflow in seq order) {
  test::worker_pool workers{f.client_opts(), {"echo"}, 2, test::echo_handler()};
  auto id = f.start("history_three");
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  auto all = history(id);
  CAF_CHECK(gap_free(all));
  CAF_REQUIRE(all.size() >= 8);
  CAF_CHECK_EQUAL(all.front().type, "WORKFLOW_STARTED");
  CAF_CHECK_EQUAL(all.back().type, "WORKFLOW_COMPLETED");
  // Pages of two say the same.
  CAF_CHECK(same(history(id, 2), all));
  // The database agrees on how many there are.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                          store::params::of(id)),
                  static_cast<int64_t>(all.size()));
  // One event's shape.
  auto page = http->get("/api/workflow/" + id + "/events?after=1&limit=1").json();
  CAF_CHECK_EQUAL(page.at("workflowId").as_string(), id);
  const auto& e = page.at("events").as_array().at(0).as_object();
  CAF_CHECK_EQUAL(e.at("seq").as_int64(), 2);
  CAF_CHECK(e.at("at").as_int64() > 0);
  CAF_CHECK_EQUAL(e.at("type").as_string(), all[1].type);
  CAF_CHECK(e.at("taskRef").is_string() || e.at("taskRef").is_null());
  CAF_CHECK(e.at("payload").is_object());
  // Bad input, named; an unknown workflow.
  check_error(http->get("/api/workflow/not-an-id/events"), 400, "workflowId");
  check_error(http->get("/api/workflow/" + id + "/events?after=-1"), 400, "after");
  check_error(http->get("/api/workflow/" + id + "/events?limit=0"), 400, "limit");
  check_error(http->get("/api/workflow/" + id + "/events?limit=1001"), 400, "limit");
  check_error(http->get("/api/workflow/0190a5c4-0000-7000-8000-000000000000/events"), 404);
}

CAF_TEST(a stream follows a workflow live to its end) {
  auto id = f.start("history_three");
  test::sse_reader s{"127.0.0.1", f.http_port, stream_target(id)};
  CAF_REQUIRE_EQUAL(s.head().status, 200u);
  CAF_CHECK_EQUAL(s.head().header("content-type"), "text/event-stream");
  // Before any worker runs: the start is there, and the stream waits for more.
  auto first = s.next(5s);
  CAF_REQUIRE(first);
  CAF_CHECK_EQUAL(parse_frame(*first).type, "WORKFLOW_STARTED");
  test::worker_pool workers{f.client_opts(), {"echo"}, 1, test::echo_handler()};
  auto rest = read_to_end(s, 30s);
  CAF_CHECK(s.ended());
  rest.insert(rest.begin(), parse_frame(*first));
  CAF_CHECK(gap_free(rest));
  CAF_REQUIRE(!rest.empty());
  CAF_CHECK_EQUAL(rest.back().type, "WORKFLOW_COMPLETED");
  CAF_CHECK(same(rest, history(id)));
  // Resuming after the terminal event: 204, the answer that stops an EventSource.
  auto last = std::to_string(rest.back().seq);
  test::sse_reader done{"127.0.0.1", f.http_port, stream_target(id), {{"Last-Event-ID", last}}};
  CAF_CHECK_EQUAL(done.head().status, 204u);
  // Past the last event there is nothing to resume after: refused, never a stream that waits.
  test::sse_reader past{"127.0.0.1", f.http_port, stream_target(id),
                        {{"Last-Event-ID", std::to_string(rest.back().seq + 1)}}};
  check_error(past.head(), 400, "Last-Event-ID");
  // From the middle of a finished history: the rest, then the end.
  test::sse_reader mid{"127.0.0.1", f.http_port, stream_target(id) + "?after=3"};
  CAF_REQUIRE_EQUAL(mid.head().status, 200u);
  auto tail = read_to_end(mid, 10s);
  CAF_CHECK(mid.ended());
  CAF_CHECK(same(tail, std::vector<seen_event>(rest.begin() + 3, rest.end())));
  // Bad input, named; an unknown workflow is 404 before any stream opens.
  test::sse_reader bad_id{"127.0.0.1", f.http_port, stream_target("nope")};
  check_error(bad_id.head(), 400, "workflowId");
  test::sse_reader bad_last{"127.0.0.1", f.http_port, stream_target(id),
                            {{"Last-Event-ID", "7x"}}};
  check_error(bad_last.head(), 400, "Last-Event-ID");
  test::sse_reader bad_after{"127.0.0.1", f.http_port, stream_target(id) + "?after=-2"};
  check_error(bad_after.head(), 400, "after");
  test::sse_reader unknown{"127.0.0.1", f.http_port,
                           stream_target("0190a5c4-0000-7000-8000-000000000000")};
  check_error(unknown.head(), 404);
}

CAF_TEST(a stream cut mid run resumes from Last-Event-ID with nothing lost or repeated) {
  // Slow tasks, so the run goes on while the client is away.
  test::worker_pool workers{f.client_opts(), {"echo"}, 1, [](const msg::leased_task& t) {
                              std::this_thread::sleep_for(300ms);
                              return test::echo_handler()(t);
                            }};
  auto id = f.start("history_three");
  std::vector<seen_event> got;
  {
    test::sse_reader s{"127.0.0.1", f.http_port, stream_target(id)};
    CAF_REQUIRE_EQUAL(s.head().status, 200u);
    while (got.size() < 3)
      if (auto ev = s.next(10s))
        got.push_back(parse_frame(*ev));
      else
        CAF_FAIL("the stream said nothing for 10 s");
    s.close();
  }
  // Away while events are written.
  auto away_from = f.count(R"(SELECT max("seq") FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                           store::params::of(id));
  CAF_REQUIRE(f.await([&] {
    return f.count(R"(SELECT max("seq") FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                   store::params::of(id))
           > away_from;
  }));
  CAF_CHECK(f.get(id).at("status").as_string() == "RUNNING");
  test::sse_reader again{"127.0.0.1", f.http_port, stream_target(id),
                         {{"Last-Event-ID", std::to_string(got.back().seq)}}};
  CAF_REQUIRE_EQUAL(again.head().status, 200u);
  auto rest = read_to_end(again, 30s);
  CAF_CHECK(again.ended());
  got.insert(got.end(), rest.begin(), rest.end());
  CAF_CHECK(gap_free(got));
  CAF_CHECK_EQUAL(got.back().type, "WORKFLOW_COMPLETED");
  CAF_CHECK(same(got, history(id)));
}

CAF_TEST(a stream outlives its LISTEN connection and is kept alive while idle) {
  auto id = f.start("history_three");
  test::sse_reader s{"127.0.0.1", f.http_port, stream_target(id)};
  CAF_REQUIRE_EQUAL(s.head().status, 200u);
  std::vector<seen_event> got;
  while (auto ev = s.next(500ms))
    got.push_back(parse_frame(*ev));
  CAF_REQUIRE(!got.empty());
  // Idle: keep-alive comments (http.event_stream_ping_s = 1), no events.
  CAF_CHECK(!s.next(2500ms));
  CAF_CHECK(s.comments() >= 1);
  // The LISTEN connection dies; events written before the hub listens again are read when
  // it does.
  CAF_REQUIRE_EQUAL(f.count(listen_backends), 1);
  // (Materialized first: a qual beside the terminate could be tried on every backend.)
  CAF_REQUIRE_EQUAL(f.count(R"(WITH l AS MATERIALIZED (SELECT "pid" FROM pg_stat_activity
      WHERE "datname" = current_database() AND "query" = 'LISTEN "node_flow_workflow_events"')
    SELECT count(*) FROM l WHERE pg_terminate_backend(l."pid"))"),
                    1);
  test::worker_pool workers{f.client_opts(), {"echo"}, 1, test::echo_handler()};
  auto rest = read_to_end(s, 30s);
  CAF_CHECK(s.ended());
  got.insert(got.end(), rest.begin(), rest.end());
  CAF_CHECK(gap_free(got));
  CAF_CHECK_EQUAL(got.back().type, "WORKFLOW_COMPLETED");
  CAF_CHECK(same(got, history(id)));
  CAF_CHECK(f.await([&] { return f.count(listen_backends) == 1; }, 10s));
  // The hub saw the loss and listened again.
  CAF_CHECK(f.await([&] { return log_lines_with(f.node_log, "event_hub_listening") == 2; }, 10s));
  CAF_CHECK_EQUAL(log_lines_with(f.node_log, "event_hub_listen_lost"), 1);
}

CAF_TEST(a thousand streams on one node share one LISTEN connection) {
  constexpr int workflows = 4;
  std::vector<std::string> ids;
  for (int i = 0; i < workflows; ++i)
    ids.push_back(f.start("history_three"));
  std::vector<std::unique_ptr<test::sse_reader>> streams;
  streams.reserve(streams_at_once);
  for (int i = 0; i < streams_at_once; ++i) {
    streams.push_back(std::make_unique<test::sse_reader>("127.0.0.1", f.http_port,
                                                         stream_target(ids[i % workflows])));
    CAF_REQUIRE_EQUAL(streams.back()->head().status, 200u);
  }
  // All 1,000 are open: one LISTEN backend serves them.
  CAF_CHECK_EQUAL(f.count(listen_backends), 1);
  // One more is beyond http.max_event_streams.
  test::sse_reader extra{"127.0.0.1", f.http_port, stream_target(ids[0])};
  check_error(extra.head(), 503);
  CAF_CHECK_EQUAL(extra.head().header("retry-after"), "1");
  // The workflows run while everyone watches; each stream gets every event of its workflow.
  test::worker_pool workers{f.client_opts(), {"echo"}, 4, test::echo_handler()};
  for (const auto& id : ids)
    CAF_REQUIRE_EQUAL(f.await_end(id, 30s), "COMPLETED");
  std::vector<std::vector<seen_event>> want;
  for (const auto& id : ids) {
    want.push_back(history(id));
    CAF_REQUIRE(gap_free(want.back()));
  }
  int complete = 0;
  for (int i = 0; i < streams_at_once; ++i) {
    auto got = read_to_end(*streams[static_cast<size_t>(i)], 10s);
    if (streams[static_cast<size_t>(i)]->ended() && same(got, want[static_cast<size_t>(i % workflows)]))
      ++complete;
    else
      CAF_MESSAGE("stream " << i << " got " << got.size() << " events");
  }
  CAF_CHECK_EQUAL(complete, streams_at_once);
  CAF_CHECK_EQUAL(f.count(listen_backends), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
