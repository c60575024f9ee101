#define CAF_SUITE net.api
#include "caf/test/unit_test.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "net/client/system_config.hpp"
#include "cmd/client_commands.hpp"
#include "net/api/api.hpp"
#include "store/workflows.hpp"
#include "tests/store/worker_fixture.hpp"
#include "tests/support/all_rows.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr const char* defs = R"([
  {"name": "charge", "retryCount": 1, "responseTimeoutSeconds": 45},
  {"name": "order", "version": 1, "tasks": [
    {"name": "charge", "taskReferenceName": "charge"},
    {"name": "approval", "taskReferenceName": "approval", "type": "WAIT",
     "inputParameters": {"signal": "approved"}}]}
])";

// Stands in for the node supervisor: counts what reaches it. Every request in
// these tests is rejected by the api's checks, so nothing may arrive here.
caf::behavior counting_node(caf::event_based_actor*, std::shared_ptr<std::atomic<int>> seen) {
  return {[seen](caf::message&) -> caf::result<caf::message> {
    ++*seen;
    return caf::make_error(caf::sec::unexpected_message);
  }};
}

// Stands in for a node that holds the first start it gets until told to answer it (a node
// that never answers, then answers too late), and answers every later start at once.
struct holding_state {
  std::vector<caf::typed_response_promise<msg::start_reply>> held;
  int starts = 0;
};

caf::behavior holding_node(caf::stateful_actor<holding_state>* self) {
  return {
    [self](start_atom, msg::start_request&) -> caf::result<msg::start_reply> {
      auto reply = msg::start_reply{"01890000-0000-7000-8000-000000000001", true};
      if (self->state.starts++ > 0)
        return reply;
      auto rp = self->make_response_promise<msg::start_reply>();
      self->state.held.push_back(rp);
      return rp;
    },
    [self](flush_atom) {
      for (auto& rp : self->state.held)
        rp.deliver(msg::start_reply{"01890000-0000-7000-8000-000000000002", true});
      self->state.held.clear();
    },
  };
}

// Stands in for a node that answers every report alone: the task's id as JSON, `lease lost`
// for a result whose token is `lost_token`, and holds (never answers) one whose token is
// `held_token`. Counts what reaches it.
constexpr const char* lost_token = "01890000-0000-7000-8000-00000000100f";
constexpr const char* held_token = "01890000-0000-7000-8000-00000000200f";

struct reporting_state {
  std::vector<caf::typed_response_promise<std::string>> held;
  int reports = 0;
};

caf::behavior reporting_node(caf::stateful_actor<reporting_state>* self) {
  return {
    [self](complete_atom, msg::task_result& r) -> caf::result<std::string> {
      ++self->state.reports;
      if (r.lease_token == lost_token)
        return nf::make_error(nf::errc::lease_lost, "lease lost");
      if (r.lease_token == held_token) {
        auto rp = self->make_response_promise<std::string>();
        self->state.held.push_back(rp);
        return rp;
      }
      return std::string{R"({"task":")"} + r.task_id + "\"}";
    },
    [self](get_atom) -> int { return self->state.reports; },
  };
}

struct fixture : test::worker_fixture {
  net::system_config cfg;
  caf::actor_system sys{cfg};
  std::shared_ptr<std::atomic<int>> node_seen = std::make_shared<std::atomic<int>>(0);
  client_api api;
  caf::scoped_actor self{sys};

  fixture() : worker_fixture("net_api") {
    sql(R"(DELETE FROM "WorkflowDefinitions")");
    auto opts = net::make_api_options(config::values::defaults(), db.dsn(),
                                      sys.spawn(counting_node, node_seen));
    opts.events_poll_interval = 20ms;
    api = net::spawn_api(sys, opts);
  }

  ~fixture() {
    caf::anon_send_exit(api, caf::exit_reason::user_shutdown);
  }

  // The answer to one request, or its error.
  template <class T, class... Ts>
  caf::expected<T> ask(Ts&&... xs) {
    caf::expected<T> out{caf::error{}};
    self->request(api, 20s, std::forward<Ts>(xs)...)
      .receive([&](T& r) { out = std::move(r); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  workflow_id start(const std::string& name = "order") {
    store::start_request r;
    r.name = name;
    r.input = boost::json::object{{"amount", 12}};
    auto started = store::start_workflow(conn, r, 16);
    CAF_REQUIRE(started);
    return started->id;
  }

  void register_defs() {
    auto r = ask<std::string>(register_atom_v, std::string{defs});
    CAF_REQUIRE(r);
  }
};

// A file the CLI reads; removed with the object.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& content) {
    char name[] = "/tmp/nf_api_testXXXXXX";
    int fd = mkstemp(name);
    CAF_REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
    std::ofstream(path) << content;
  }
  ~temp_file() { std::remove(path.c_str()); }
};

struct cli_outcome {
  int code = -1;
  std::string out;
  std::string err;
};

// One `nodeflow defs put FILES... --node NODE`, in this process.
cli_outcome defs_put(const std::vector<const temp_file*>& files, const std::string& node) {
  std::vector<std::string> args{"put"};
  for (const auto* f : files)
    args.push_back(f->path);
  args.insert(args.end(), {"--node", node});
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  cli_outcome o;
  o.code = cmd::run_client_command("defs", static_cast<int>(args.size()), argv.data(), out, err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

// Names the answer a request expects, for a helper that receives it.
template <class T>
struct reply_tag {
  using type = T;
};

bool contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos)
    return true;
  CAF_MESSAGE("\"" << text << "\" does not contain \"" << part << "\"");
  return false;
}

std::string message(const caf::error& e) {
  return nf::message_of(e);
}

bool is(const caf::error& e, nf::errc code, const std::string& part) {
  if (nf::code_of(e) == code && message(e).find(part) != std::string::npos)
    return true;
  CAF_MESSAGE("got " << nf::to_string(nf::code_of(e)) << ": " << message(e)
                     << " (wanted " << nf::to_string(code) << " mentioning " << part << ")");
  return false;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(api_tests, fixture)

CAF_TEST(bad input on every call is rejected clearly and changes nothing) {
  register_defs();
  auto wf = start();
  auto t = insert_task(wf, "charge", "charge");
  auto leased = lease_one("charge");
  auto before = scalar(test::all_rows_sql);
  const std::string id = wf.str();
  auto expect_invalid = [&](const caf::error& e, const std::string& part) {
    CAF_CHECK(is(e, nf::errc::invalid, part));
  };
  expect_invalid(ask<std::string>(register_atom_v, std::string{"  "}).error(), "$: expected");
  expect_invalid(ask<std::string>(register_atom_v, std::string{R"([{"name":"ok"},
      {"name":"w","version":1,"tasks":[{"name":"x","taskReferenceName":"x","type":"NOPE"}]}])"})
                   .error(),
                 "[1].tasks[0].type");
  expect_invalid(ask<std::string>(register_atom_v, std::string{R"([{"name":"a"},{"name":"a"}])"})
                   .error(),
                 "[1]: task a is defined twice");
  msg::start_request s;
  s.workflow_name = "order";
  s.input_json = "[]";
  expect_invalid(ask<msg::start_reply>(start_atom_v, s).error(), "input: expected a JSON object");
  expect_invalid(ask<std::string>(get_atom_v, msg::workflow_query{"x", true}).error(),
                 "workflow_id: expected a UUID");
  msg::search_request q;
  q.status = "DONE";
  expect_invalid(ask<msg::search_page>(search_atom_v, q).error(), "status:");
  expect_invalid(ask<std::string>(command_atom_v, msg::workflow_command{"rerun", id, "", "", 0, ""})
                   .error(),
                 "task_ref:");
  expect_invalid(ask<std::string>(signal_atom_v, msg::signal_request{id, "", "null"}).error(),
                 "name:");
  expect_invalid(ask<std::vector<msg::leased_task>>(poll_atom_v,
                                                    msg::poll_request{"", "charge", "w", 0, 0})
                   .error(),
                 "max_tasks:");
  expect_invalid(ask<std::string>(complete_atom_v,
                                  msg::task_result{t.str(), id, leased.token.str(), "DONE", "{}", ""})
                   .error(),
                 "status:");
  expect_invalid(ask<std::string>(complete_atom_v, msg::task_result{t.str(), id,
                                                                    leased.token.str(),
                                                                    "COMPLETED", "[1]", ""})
                   .error(),
                 "output:");
  expect_invalid(ask<int64_t>(heartbeat_atom_v, msg::heartbeat_request{t.str(), id, "tok"}).error(),
                 "lease_token:");
  expect_invalid(ask<std::vector<msg::event_view>>(events_atom_v,
                                                   msg::events_request{id, -1, 10, 0})
                   .error(),
                 "after_seq:");
  expect_invalid(ask<std::string>(deadletter_atom_v, msg::deadletter_request{"drop", {}, 0, 10})
                   .error(),
                 "op:");
  // What only the database can reject: still nothing written.
  CAF_CHECK(is(ask<int64_t>(heartbeat_atom_v, msg::heartbeat_request{t.str(), id, new_uuidv7()})
                 .error(),
               nf::errc::lease_lost, "lease"));
  CAF_CHECK(is(ask<std::string>(signal_atom_v, msg::signal_request{new_uuidv7(), "x", "1"}).error(),
               nf::errc::not_found, "not found"));
  CAF_CHECK_EQUAL(scalar(test::all_rows_sql), before);
  CAF_CHECK_EQUAL(node_seen->load(), 0);
}

CAF_TEST(definitions register whole and only whole) {
  auto r = ask<std::string>(register_atom_v, std::string{defs});
  CAF_REQUIRE(r);
  CAF_CHECK_EQUAL(*r, R"({"taskDefs":[{"name":"charge","revision":1}],)"
                      R"("workflowDefs":[{"name":"order","version":1}]})");
  r = ask<std::string>(register_atom_v, std::string{defs});
  CAF_REQUIRE(r);
  CAF_CHECK(r->find(R"("revision":2)") != std::string::npos);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowDefinitions")"), 1);
  // A valid task definition next to an invalid workflow: neither is written.
  auto bad = ask<std::string>(register_atom_v, std::string{R"([{"name":"refund"},
      {"name":"w2","version":1,"tasks":[]}])"});
  CAF_REQUIRE(!bad);
  CAF_CHECK(is(bad.error(), nf::errc::invalid, "[1].tasks"));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskDefinitions" WHERE "name" = 'refund')"), 0);
}

CAF_TEST(definitions of one request commit together even when the database rejects one) {
  // A row the checks pass and the database refuses: the last of the request.
  sql(R"(CREATE OR REPLACE FUNCTION "nf_test_refuse"() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'refused by the test'; END $$)");
  sql(R"(CREATE TRIGGER "nf_test_refuse" BEFORE INSERT ON "WorkflowDefinitions" FOR EACH ROW
         WHEN (NEW."name" = 'refused') EXECUTE FUNCTION "nf_test_refuse"())");
  auto r = ask<std::string>(register_atom_v, std::string{R"([{"name": "refund"},
      {"name": "refund_flow", "version": 1,
       "tasks": [{"name": "refund", "taskReferenceName": "r"}]},
      {"name": "refused", "version": 1,
       "tasks": [{"name": "refund", "taskReferenceName": "r"}]}])"});
  sql(R"(DROP TRIGGER "nf_test_refuse" ON "WorkflowDefinitions")");
  sql(R"(DROP FUNCTION "nf_test_refuse"())");
  CAF_REQUIRE(!r);
  CAF_CHECK(message(r.error()).find("refused by the test") != std::string::npos);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskDefinitions" WHERE "name" = 'refund')"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowDefinitions")"), 0);
}

// A node that answers every start with its own name as the workflow id.
caf::behavior naming_node(caf::event_based_actor*, std::string name) {
  return {[name](start_atom, msg::start_request&) { return msg::start_reply{name, true}; }};
}

CAF_TEST(a peer on the network cannot replace the node of the api) {
  net::attach_node(api, sys.spawn(naming_node, "local"));
  auto port = sys.middleman().publish(api, 0, "127.0.0.1", true);
  CAF_REQUIRE(port);
  net::system_config peer_cfg;
  caf::actor_system peer_sys{peer_cfg};
  auto intruder = peer_sys.spawn(naming_node, "intruder");
  auto remote = peer_sys.middleman().remote_actor<client_api>("127.0.0.1", *port);
  CAF_REQUIRE(remote);
  caf::scoped_actor peer{peer_sys};
  caf::anon_send(caf::actor_cast<caf::actor>(*remote), intruder);
  peer->send(caf::actor_cast<caf::actor>(*remote), intruder);
  msg::start_request s;
  s.workflow_name = "order";
  // The peer's start comes after its handle (one sender's messages arrive in order).
  std::string answered;
  peer->request(*remote, 20s, start_atom_v, s)
    .receive([&](msg::start_reply& r) { answered = r.workflow_id; }, [](caf::error&) {});
  CAF_CHECK_EQUAL(answered, "local");
  auto local = ask<msg::start_reply>(start_atom_v, s);
  CAF_REQUIRE(local);
  CAF_CHECK_EQUAL(local->workflow_id, "local");
  caf::anon_send_exit(intruder, caf::exit_reason::user_shutdown);
}

CAF_TEST(defs put registers every file or none and names the file of a problem) {
  // The api on a loopback port, as `nodeflow serve` publishes it.
  auto port = sys.middleman().publish(api, 0, "127.0.0.1", true);
  CAF_REQUIRE(port);
  const std::string node = "127.0.0.1:" + std::to_string(*port);
  temp_file a{R"([{"name": "refund"}, {"name": "refund_flow", "version": 1,
                  "tasks": [{"name": "refund", "taskReferenceName": "r"}]}])"};
  temp_file c{R"({"name": "audit"})"};
  // Valid as far as `nodeflow validate` sees; only the node's checks refuse version 0.
  temp_file b{R"({"name": "audit_flow", "version": 0,
                  "tasks": [{"name": "audit", "taskReferenceName": "a"}]})"};
  auto defined = [&] {
    return count(R"(SELECT count(*) FROM "TaskDefinitions")")
           + count(R"(SELECT count(*) FROM "WorkflowDefinitions")");
  };
  auto o = defs_put({&a, &c, &b}, node);
  CAF_CHECK_EQUAL(o.code, 1);
  CAF_CHECK(contains(o.err, "nothing registered"));
  CAF_CHECK(contains(o.err, b.path + ": version: expected an integer from 1 to"));
  CAF_CHECK_EQUAL(defined(), 0);
  // The same task definition in two files: both places named.
  temp_file twice{R"([{"name": "other"}, {"name": "refund", "retryCount": 2}])"};
  o = defs_put({&a, &twice}, node);
  CAF_CHECK_EQUAL(o.code, 1);
  CAF_CHECK(contains(o.err, twice.path + ": [1]: task refund is defined twice in this request "
                                         "(also at " + a.path + ": [0])"));
  CAF_CHECK_EQUAL(defined(), 0);
  // All valid: one request, each definition shown under its file.
  o = defs_put({&a, &c}, node);
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, a.path + ": task definition refund (revision 1)"));
  CAF_CHECK(contains(o.out, c.path + ": task definition audit (revision 1)"));
  CAF_CHECK(contains(o.out, a.path + ": workflow definition refund_flow (version 1)"));
  CAF_CHECK_EQUAL(defined(), 3);
}

CAF_TEST(get shows the execution with every task attempt and keeps null null) {
  register_defs();
  auto wf = start();
  insert_task(wf, "charge", "charge", true, 0);
  insert_task(wf, "charge", "charge", false, 1);
  auto r = ask<std::string>(get_atom_v, msg::workflow_query{wf.str(), true});
  CAF_REQUIRE(r);
  auto v = boost::json::parse(*r).as_object();
  CAF_CHECK_EQUAL(v.at("status").as_string(), "RUNNING");
  CAF_CHECK(v.at("output").is_null());
  CAF_CHECK(v.at("endTime").is_null());
  CAF_CHECK_EQUAL(v.at("input").as_object().at("amount").as_int64(), 12);
  const auto& tasks = v.at("tasks").as_array();
  CAF_REQUIRE_EQUAL(tasks.size(), 2u);
  CAF_CHECK_EQUAL(tasks[0].at("attempt").as_int64(), 0);
  CAF_CHECK_EQUAL(tasks[1].at("attempt").as_int64(), 1);
  CAF_CHECK(tasks[0].at("output").is_null());
  auto missing = ask<std::string>(get_atom_v, msg::workflow_query{new_uuidv7(), true});
  CAF_REQUIRE(!missing);
  CAF_CHECK(is(missing.error(), nf::errc::not_found, "not found"));
}

CAF_TEST(search pages newest first with a keyset cursor) {
  register_defs();
  std::vector<workflow_id> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(start());
  sql(R"(UPDATE "WorkflowExecutions" SET "status" = 'COMPLETED', "endedAt" = now() WHERE "id" = $1)",
      store::params::of(ids[0]));
  msg::search_request q;
  q.limit = 2;
  std::vector<std::string> seen;
  for (int page = 0; page < 5; ++page) {
    auto r = ask<msg::search_page>(search_atom_v, q);
    CAF_REQUIRE(r);
    auto items = boost::json::parse(r->items_json);
    for (const auto& item : items.as_array())
      seen.emplace_back(item.at("workflowId").as_string());
    if (r->next_cursor.empty())
      break;
    q.cursor = r->next_cursor;
  }
  std::vector<std::string> want;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it)
    want.push_back(it->str());
  CAF_CHECK_EQUAL(seen, want);
  msg::search_request done;
  done.status = "COMPLETED";
  done.workflow_name = "order";
  auto r = ask<msg::search_page>(search_atom_v, done);
  CAF_REQUIRE(r);
  auto items = boost::json::parse(r->items_json).as_array();
  CAF_REQUIRE_EQUAL(items.size(), 1u);
  CAF_CHECK_EQUAL(items[0].at("workflowId").as_string(), ids[0].str());
  CAF_CHECK(r->next_cursor.empty());
}

CAF_TEST(a signal is an event plus a decider wakeup and ends a waiting events request) {
  register_defs();
  auto wf = start();
  sql(R"(DELETE FROM "DecideQueues")");
  // An events request waiting for what follows the start event...
  msg::events_request wait{wf.str(), 1, 100, 5000};
  caf::expected<std::vector<msg::event_view>> got{caf::error{}};
  auto t0 = std::chrono::steady_clock::now();
  auto waiting = self->request(api, 20s, events_atom_v, wait);
  // ...is answered by the signal delivered meanwhile.
  std::this_thread::sleep_for(200ms);
  auto sent = ask<std::string>(signal_atom_v, msg::signal_request{wf.str(), "approved",
                                                                  R"({"by":"ada"})"});
  CAF_REQUIRE(sent);
  std::move(waiting).receive([&](std::vector<msg::event_view>& evs) { got = std::move(evs); },
                             [&](caf::error& e) { got = std::move(e); });
  auto took = std::chrono::steady_clock::now() - t0;
  CAF_REQUIRE(got);
  CAF_REQUIRE_EQUAL(got->size(), 1u);
  CAF_CHECK_EQUAL(got->front().seq, 2);
  CAF_CHECK_EQUAL(got->front().type, "SIGNAL_RECEIVED");
  CAF_CHECK_EQUAL(boost::json::parse(got->front().payload_json),
                  boost::json::parse(R"({"name":"approved","payload":{"by":"ada"}})"));
  CAF_CHECK_LESS(took, 4s);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "DecideQueues" WHERE "workflowId" = $1)",
                        store::params::of(wf)),
                  1);
  // An ended workflow takes no signals.
  sql(R"(UPDATE "WorkflowExecutions" SET "status" = 'COMPLETED', "endedAt" = now() WHERE "id" = $1)",
      store::params::of(wf));
  auto late = ask<std::string>(signal_atom_v, msg::signal_request{wf.str(), "approved", "null"});
  CAF_REQUIRE(!late);
  CAF_CHECK(is(late.error(), nf::errc::invalid, "is COMPLETED"));
  // A wait with nothing new answers empty at its deadline.
  auto empty = ask<std::vector<msg::event_view>>(events_atom_v,
                                                 msg::events_request{wf.str(), 2, 100, 300});
  CAF_REQUIRE(empty);
  CAF_CHECK(empty->empty());
}

CAF_TEST(heartbeats extend a current lease by the task definition) {
  register_defs();
  auto wf = start();
  auto t = insert_task(wf, "charge", "charge");
  auto leased = lease_one("charge");
  auto r = ask<int64_t>(heartbeat_atom_v,
                        msg::heartbeat_request{t.str(), wf.str(), leased.token.str()});
  CAF_REQUIRE(r);
  // responseTimeoutSeconds 45 from the definition, measured by the server clock.
  auto now_ms = count(R"(SELECT (extract(epoch FROM now()) * 1000)::bigint)");
  CAF_CHECK_GREATER(*r, now_ms + 40000);
  CAF_CHECK_LESS(*r, now_ms + 50000);
}

CAF_TEST(dead letters list and replay) {
  auto id = count(R"(INSERT INTO "OutboxEvents" ("shard", "namespaceId", "eventType", "payload",
                       "attempts", "lastError", "deadLetteredAt")
                     VALUES (0, '00000000-0000-0000-0000-000000000001', 'workflow.started', '{}',
                             10, 'sink down', now()) RETURNING "id")");
  auto list = ask<std::string>(deadletter_atom_v, msg::deadletter_request{"list", {}, 0, 10});
  CAF_REQUIRE(list);
  auto v = boost::json::parse(*list).as_object();
  CAF_REQUIRE_EQUAL(v.at("deadLetters").as_array().size(), 1u);
  CAF_CHECK_EQUAL(v.at("deadLetters").as_array()[0].at("id").as_int64(), id);
  CAF_CHECK_EQUAL(v.at("deadLetters").as_array()[0].at("lastError").as_string(), "sink down");
  CAF_CHECK(v.at("nextAfterId").is_null());
  auto after = ask<std::string>(deadletter_atom_v, msg::deadletter_request{"list", {}, id, 10});
  CAF_REQUIRE(after);
  CAF_CHECK_EQUAL(*after, R"({"deadLetters":[],"nextAfterId":null})");
  auto replay = ask<std::string>(deadletter_atom_v, msg::deadletter_request{"replay", {id}, 0, 10});
  CAF_REQUIRE(replay);
  CAF_CHECK_EQUAL(*replay, R"({"replayed":1})");
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL)"),
                  0);
}

CAF_TEST(status joins the node and the queues) {
  register_defs();
  auto wf = start();
  insert_task(wf, "charge", "charge");
  auto r = ask<std::string>(status_atom_v);
  CAF_REQUIRE(r);
  auto v = boost::json::parse(*r).as_object();
  CAF_CHECK(v.at("node").is_object()); // the counting node answers an error: shown, not fatal
  CAF_CHECK_EQUAL(v.at("queues").as_array()[0].at("name").as_string(), "charge");
  CAF_CHECK_EQUAL(v.at("queues").as_array()[0].at("ready").as_int64(), 1);
  CAF_CHECK_EQUAL(v.at("pendingDecisions").at("total").as_int64(), 1);
}

CAF_TEST(a request the node does not answer in time fails unavailable and its late answer is dropped) {
  auto node = sys.spawn(holding_node);
  auto opts = net::make_api_options(config::values::defaults(), db.dsn(), node);
  opts.request_timeout = 200ms;
  auto slow = net::spawn_api(sys, opts);
  msg::start_request s;
  s.workflow_name = "order";
  s.input_json = "{}";
  auto ask_slow = [&] {
    caf::expected<msg::start_reply> out{caf::error{}};
    // Far longer than the api's deadline: the api answers first, or this test fails.
    self->request(slow, 20s, start_atom_v, s)
      .receive([&](msg::start_reply& r) { out = std::move(r); },
               [&](caf::error& e) { out = std::move(e); });
    return out;
  };
  auto began = std::chrono::steady_clock::now();
  auto held = ask_slow();
  auto took = std::chrono::steady_clock::now() - began;
  CAF_REQUIRE(!held);
  CAF_CHECK(is(held.error(), nf::errc::unavailable, "engine node"));
  CAF_CHECK(took >= 200ms);
  // The node answers the held start now, after its deadline: the api drops that answer, and
  // the next start gets its own.
  caf::anon_send(node, flush_atom_v);
  auto next = ask_slow();
  CAF_REQUIRE(next);
  CAF_CHECK_EQUAL(next->workflow_id, "01890000-0000-7000-8000-000000000001");
  caf::anon_send_exit(slow, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

// api.max_pending and api.max_event_waits: past them a request is refused at once instead of
// queued behind work the api cannot finish sooner.
CAF_TEST(requests beyond the backlog of the api and its waiting event reads are refused at once) {
  auto node = sys.spawn(holding_node);
  auto opts = net::make_api_options(config::values::defaults(), db.dsn(), node);
  opts.max_pending = 1;
  opts.max_event_waits = 1;
  opts.events_poll_interval = 20ms;
  auto api1 = net::spawn_api(sys, opts);
  msg::start_request s;
  s.workflow_name = "order";
  s.input_json = "{}";
  // The node holds the first start: one request taken and not answered, the whole backlog.
  caf::scoped_actor other{sys};
  other->send(api1, start_atom_v, s);
  std::this_thread::sleep_for(200ms);
  // The error of a request that must be refused at once.
  auto refused = [&](auto reply_type, auto... xs) {
    using reply = typename decltype(reply_type)::type;
    caf::error out;
    auto began = std::chrono::steady_clock::now();
    self->request(api1, 20s, xs...)
      .receive([&](reply&) {}, [&](caf::error& e) { out = std::move(e); });
    CAF_CHECK(std::chrono::steady_clock::now() - began < 2s);
    CAF_REQUIRE(out); // answered, not refused
    return out;
  };
  CAF_CHECK(is(refused(reply_tag<msg::start_reply>{}, start_atom_v, s),
               nf::errc::unavailable, "api.max_pending"));
  caf::anon_send(node, flush_atom_v);
  other->receive([](msg::start_reply&) {}, [](caf::error& e) { CAF_FAIL(to_string(e)); });
  // A read waiting for events that do not come holds the one place for waits.
  register_defs();
  auto wf = start();
  caf::scoped_actor waiter{sys};
  waiter->send(api1, events_atom_v, msg::events_request{wf.str(), 1, 100, 3000});
  std::this_thread::sleep_for(300ms);
  CAF_CHECK(is(refused(reply_tag<std::vector<msg::event_view>>{}, events_atom_v,
                       msg::events_request{wf.str(), 1, 100, 3000}),
               nf::errc::unavailable, "api.max_event_waits"));
  waiter->receive([](std::vector<msg::event_view>&) {},
                  [](caf::error& e) { CAF_FAIL(to_string(e)); });
  caf::anon_send_exit(api1, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

CAF_TEST(a batch of reports answers each result in its place) {
  auto node = sys.spawn(reporting_node);
  auto settings = config::values::defaults();
  CAF_REQUIRE(!settings.set("payloads.max_bytes", "1024", "test"));
  auto opts = net::make_api_options(settings, db.dsn(), node);
  opts.request_timeout = 300ms;
  auto batched = net::spawn_api(sys, opts);
  auto ask_batch = [&](std::vector<msg::task_result> rs) {
    caf::expected<std::vector<msg::report_outcome>> out{caf::error{}};
    self->request(batched, 20s, complete_atom_v, std::move(rs))
      .receive([&](std::vector<msg::report_outcome>& r) { out = std::move(r); },
               [&](caf::error& e) { out = std::move(e); });
    return out;
  };
  auto reports_seen = [&] {
    int n = -1;
    self->request(node, 5s, get_atom_v).receive([&](int x) { n = x; }, [](caf::error&) {});
    return n;
  };
  auto result = [](const std::string& task, const std::string& token,
                   const std::string& status = "COMPLETED") {
    return msg::task_result{task, "01890000-0000-7000-8000-000000000001", token, status, "{}", ""};
  };
  const std::string a = "01890000-0000-7000-8000-00000000000a";
  const std::string b = "01890000-0000-7000-8000-00000000000b";
  const std::string token = "01890000-0000-7000-8000-0000000000bb";
  // One applied, one rejected by the checks (it never reaches the node), one whose lease is
  // lost, one applied: four answers in the order given.
  auto r = ask_batch({result(a, token), result(b, token, "DONE"), result(b, lost_token),
                      result(b, token)});
  CAF_REQUIRE(r);
  CAF_REQUIRE_EQUAL(r->size(), 4u);
  CAF_CHECK(!(*r)[0].error);
  CAF_CHECK_EQUAL((*r)[0].answer, R"({"task":")" + a + "\"}");
  CAF_CHECK(is((*r)[1].error, nf::errc::invalid, "status: expected COMPLETED"));
  CAF_CHECK(is((*r)[2].error, nf::errc::lease_lost, "lease lost"));
  CAF_CHECK_EQUAL((*r)[3].answer, R"({"task":")" + b + "\"}");
  CAF_CHECK_EQUAL(reports_seen(), 3);
  // An output past payloads.max_bytes is refused alone, naming the field and the limit;
  // the rest of the batch goes on.
  auto big = result(b, token);
  big.output_json = "{\"blob\": \"" + std::string(2000, 'x') + "\"}";
  auto poisoned = ask_batch({big, result(a, token)});
  CAF_REQUIRE(poisoned);
  CAF_REQUIRE_EQUAL(poisoned->size(), 2u);
  CAF_CHECK(is((*poisoned)[0].error, nf::errc::invalid,
               "output: expected at most 1024 bytes (payloads.max_bytes), got 2012"));
  CAF_CHECK_EQUAL((*poisoned)[1].answer, R"({"task":")" + a + "\"}");
  CAF_CHECK_EQUAL(reports_seen(), 4);
  // More results than one poll may lease: the whole batch is rejected, none reaches the node.
  std::vector<msg::task_result> many(1001, result(a, token));
  auto too_many = ask_batch(many);
  CAF_REQUIRE(!too_many);
  CAF_CHECK(is(too_many.error(), nf::errc::invalid,
               "results: expected at most 1000 results in one call, got 1001"));
  CAF_CHECK_EQUAL(reports_seen(), 4);
  auto none = ask_batch({});
  CAF_REQUIRE(none);
  CAF_CHECK(none->empty());
  // Every result rejected by the checks: answered at once, none reaching the node.
  auto rejected = ask_batch({result(a, token, "DONE"), result("x", token)});
  CAF_REQUIRE(rejected);
  CAF_REQUIRE_EQUAL(rejected->size(), 2u);
  CAF_CHECK(is((*rejected)[0].error, nf::errc::invalid, "status:"));
  CAF_CHECK(is((*rejected)[1].error, nf::errc::invalid, "task_id:"));
  CAF_CHECK_EQUAL(reports_seen(), 4);
  // A result the node does not answer in time is `unavailable` in its place at the deadline;
  // the others keep their answers.
  auto began = std::chrono::steady_clock::now();
  auto late = ask_batch({result(a, token), result(b, held_token)});
  CAF_REQUIRE(late);
  CAF_CHECK(std::chrono::steady_clock::now() - began >= 300ms);
  CAF_REQUIRE_EQUAL(late->size(), 2u);
  CAF_CHECK_EQUAL((*late)[0].answer, R"({"task":")" + a + "\"}");
  CAF_CHECK(is((*late)[1].error, nf::errc::unavailable, "engine node"));
  caf::anon_send_exit(batched, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

// pg_terminate_backend of the backend a request runs on (an operator's, or a failover's):
// the request sees a broken connection, never an internal error. Once, the store worker
// runs it again on a fresh connection and it succeeds; twice, it is answered
// `unavailable`, which a client retries with the same request id.
CAF_TEST(a request whose database backend is terminated is retried or answered unavailable) {
  register_defs();
  auto wf = start();
  auto holder = db.connect();
  auto hold = [&] {
    CAF_REQUIRE(holder.exec("BEGIN"));
    CAF_REQUIRE(holder.exec(R"(SELECT 1 FROM "WorkflowExecutions" WHERE "id" = $1 FOR UPDATE)",
                            store::params::of(wf)));
  };
  // The backend that waits for the row this test holds: the store worker's.
  auto terminate_waiter = [&] {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto pid = scalar(R"(SELECT min(pid)::text FROM pg_stat_activity WHERE datname =
                             current_database() AND wait_event_type = 'Lock'
                             AND pid <> pg_backend_pid())");
      if (!pid.empty()) {
        CAF_REQUIRE_EQUAL(scalar("SELECT pg_terminate_backend(" + pid + ")::text"), "true");
        // Gone before the next look, so the retry's backend is the one found next.
        while (count("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) > 0)
          std::this_thread::sleep_for(2ms);
        return;
      }
      std::this_thread::sleep_for(2ms);
    }
    CAF_FAIL("no backend waited for the held row within 20 s");
  };
  auto signal = [&](const std::string& request_id) {
    msg::signal_request r{wf.str(), "approved", R"({"by":"ada"})"};
    r.request_id = request_id;
    return self->request(api, 30s, signal_atom_v, std::move(r));
  };
  auto received = [&] {
    return count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1
                    AND "eventType" = 'SIGNAL_RECEIVED')",
                 store::params::of(wf));
  };
  // Terminated once: run again on a fresh connection, which waits until the row is free.
  hold();
  auto once = signal("terminated-once");
  terminate_waiter();
  auto t = std::chrono::steady_clock::now();
  while (count(R"(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
                  AND wait_event_type = 'Lock' AND pid <> pg_backend_pid())") == 0
         && std::chrono::steady_clock::now() - t < 20s)
    std::this_thread::sleep_for(2ms);
  CAF_REQUIRE(holder.exec("COMMIT"));
  caf::expected<std::string> first{caf::error{}};
  std::move(once).receive([&](std::string& r) { first = std::move(r); },
                          [&](caf::error& e) { first = std::move(e); });
  if (!first)
    CAF_FAIL("terminated once: " << nf::to_string(nf::code_of(first.error())) << ": "
                                 << message(first.error()));
  CAF_CHECK_EQUAL(received(), 1);
  // Terminated on the fresh connection too: `unavailable`, nothing written; the client's
  // retry with the same request id then delivers it once.
  hold();
  auto twice = signal("terminated-twice");
  terminate_waiter();
  terminate_waiter();
  caf::expected<std::string> second{caf::error{}};
  std::move(twice).receive([&](std::string& r) { second = std::move(r); },
                           [&](caf::error& e) { second = std::move(e); });
  CAF_REQUIRE(holder.exec("COMMIT"));
  CAF_REQUIRE(!second);
  CAF_CHECK(is(second.error(), nf::errc::unavailable, "connection"));
  CAF_CHECK_EQUAL(received(), 1);
  auto again = signal("terminated-twice");
  caf::expected<std::string> retried{caf::error{}};
  std::move(again).receive([&](std::string& r) { retried = std::move(r); },
                           [&](caf::error& e) { retried = std::move(e); });
  CAF_CHECK(retried);
  CAF_CHECK_EQUAL(received(), 2);
}

CAF_TEST_FIXTURE_SCOPE_END()
