#define CAF_SUITE net.checks
#include "caf/test/unit_test.hpp"

#include "net/api/checks.hpp"
#include "proto/errors.hpp"
#include "store/queues.hpp"

using namespace nf;

namespace {

constexpr const char* wf = "01890000-0000-7000-8000-000000000001";
constexpr const char* task = "01890000-0000-7000-8000-0000000000aa";
constexpr const char* token = "01890000-0000-7000-8000-0000000000bb";

const net::check_limits limits{};

// A check that takes the node's limits is given the defaults when a test names none.
template <class T>
auto check_with_defaults(const T& x, int) -> decltype(net::check(x, limits)) {
  return net::check(x, limits);
}
template <class T>
caf::error check_with_defaults(const T& x, long) {
  return net::check(x);
}

// The message of an `invalid` error, or "" when the request passed.
template <class... Ts>
std::string problems(const Ts&... xs) {
  caf::error err;
  if constexpr (sizeof...(Ts) == 1)
    err = check_with_defaults(xs..., 0);
  else
    err = net::check(xs...);
  if (!err)
    return "";
  CAF_CHECK(nf::code_of(err) == nf::errc::invalid);
  return nf::message_of(err);
}

bool mentions(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos)
    return true;
  CAF_MESSAGE("\"" << text << "\" does not mention \"" << part << "\"");
  return false;
}

} // namespace

CAF_TEST(a start needs a name and an object input within bounds) {
  msg::start_request ok;
  ok.workflow_name = "order";
  CAF_CHECK_EQUAL(problems(ok), "");
  auto r = ok;
  r.workflow_name = "";
  CAF_CHECK(mentions(problems(r), "workflow_name: expected a non-empty string"));
  r = ok;
  r.input_json = "[1,2]";
  CAF_CHECK(mentions(problems(r), "input: expected a JSON object, got an array"));
  r = ok;
  r.input_json = "{\"a\":";
  CAF_CHECK(mentions(problems(r), "input: expected JSON, got malformed text"));
  r = ok;
  r.version = -1;
  CAF_CHECK(mentions(problems(r), "version: expected an integer 0 … "));
  r = ok;
  r.priority = 100;
  CAF_CHECK(mentions(problems(r), "priority: expected an integer 0 … 99, got 100"));
  r = ok;
  r.namespace_id = "default";
  CAF_CHECK(mentions(problems(r), "namespace_id: expected a UUID, got \"default\""));
  r = ok;
  r.idempotency_key = std::string("k\0y", 3);
  CAF_CHECK(mentions(problems(r), "idempotency_key: expected text without NUL characters"));
  // Every problem at once, not just the first.
  r = ok;
  r.workflow_name = "";
  r.priority = -5;
  auto text = problems(r);
  CAF_CHECK(mentions(text, "workflow_name:"));
  CAF_CHECK(mentions(text, "priority:"));
}

CAF_TEST(ids must be uuids) {
  CAF_CHECK_EQUAL(problems(msg::workflow_query{wf, true}), "");
  CAF_CHECK(mentions(problems(msg::workflow_query{"", true}),
                     "workflow_id: expected a UUID, got an empty string"));
  CAF_CHECK(mentions(problems(msg::workflow_query{"01890000-0000-7000-8000-00000000000g", true}),
                     "workflow_id: expected a UUID"));
  CAF_CHECK(mentions(problems(msg::heartbeat_request{task, wf, "nope"}), "lease_token:"));
}

CAF_TEST(search filters and pages are checked) {
  msg::search_request ok;
  CAF_CHECK_EQUAL(problems(ok), "");
  auto r = ok;
  r.status = "running";
  CAF_CHECK(mentions(problems(r), "status: expected RUNNING, COMPLETED"));
  r = ok;
  r.limit = 0;
  CAF_CHECK(mentions(problems(r), "limit: expected an integer 1 … 1000, got 0"));
  r = ok;
  r.cursor = "page-2";
  CAF_CHECK(mentions(problems(r), "cursor: expected a UUID"));
  r = ok;
  r.started_after_ms = -1;
  CAF_CHECK(mentions(problems(r), "started_after_ms:"));
}

CAF_TEST(operator commands name a known op and only the fields it takes) {
  msg::workflow_command ok{"pause", wf, "", "", 0, ""};
  CAF_CHECK_EQUAL(problems(ok), "");
  auto c = ok;
  c.op = "suspend";
  CAF_CHECK(mentions(problems(c), "op: expected pause, resume, terminate, retry, rerun, restart, "
                                  "skip, variables, state, decide or resetcallbacks"));
  c = ok;
  c.op = "rerun";
  CAF_CHECK(mentions(problems(c), "task_ref: expected a non-empty string"));
  c.task_ref = "charge";
  c.iteration = -1;
  CAF_CHECK(mentions(problems(c), "iteration: expected an integer 0 …"));
  c.iteration = 2;
  c.input_json = "3";
  CAF_CHECK(mentions(problems(c), "input: expected a JSON object, got 3"));
  c.input_json = R"({"amount":3})";
  CAF_CHECK_EQUAL(problems(c), "");
  c = ok;
  c.input_json = "{}";
  CAF_CHECK(mentions(problems(c), "input: only a rerun, a restart, a skip or variables take"));
  c = ok;
  c.task_ref = "x";
  CAF_CHECK(mentions(problems(c), "task_ref: only a rerun, a skip or a state update names a task"));
  c = ok;
  c.task_status = "COMPLETED";
  CAF_CHECK(mentions(problems(c), "task_status: only a state update ends a task"));
  // A state update: variables, a task ended with a status, or both.
  c = ok;
  c.op = "state";
  CAF_CHECK(mentions(problems(c), "task_ref: a state update sets variables"));
  c.input_json = R"({"stage":"two"})";
  CAF_CHECK_EQUAL(problems(c), "");
  c.task_ref = "hold";
  CAF_CHECK(mentions(problems(c), "task_status: expected COMPLETED, FAILED or"));
  c.task_status = "IN_PROGRESS";
  CAF_CHECK(mentions(problems(c), "task_status: expected COMPLETED, FAILED or"));
  c.task_status = "FAILED";
  c.task_id = "nope";
  CAF_CHECK(mentions(problems(c), "task_id: expected a UUID"));
  c.task_id.clear();
  c.output_json = "[]";
  CAF_CHECK(mentions(problems(c), "output: expected a JSON object"));
  c.output_json = R"({"by":"ann"})";
  CAF_CHECK_EQUAL(problems(c), "");
  c.task_ref.clear();
  CAF_CHECK(mentions(problems(c), "task_ref: task_status and task_id describe"));
  c = ok;
  c.output_json = "{}";
  CAF_CHECK(mentions(problems(c), "output: only a skip takes an output"));
  c = ok;
  c.op = "restart";
  c.input_json = R"({"a":null})";
  CAF_CHECK_EQUAL(problems(c), "");
  c = ok;
  c.op = "skip";
  c.task_ref = "charge";
  c.output_json = "[]";
  CAF_CHECK(mentions(problems(c), "output: expected a JSON object"));
  c.output_json = R"({"paid":false})";
  CAF_CHECK_EQUAL(problems(c), "");
  c.iteration = 1;
  CAF_CHECK(mentions(problems(c), "iteration: expected an integer 0 … 0"));
  c = ok;
  c.op = "variables";
  CAF_CHECK(mentions(problems(c), "input: the variables to set"));
  c.input_json = R"({"stage":"review"})";
  CAF_CHECK_EQUAL(problems(c), "");
}

CAF_TEST(signals need a name and JSON payload) {
  CAF_CHECK_EQUAL(problems(msg::signal_request{wf, "approved", "null"}), "");
  CAF_CHECK_EQUAL(problems(msg::signal_request{wf, "approved", R"({"by":"ada"})"}), "");
  CAF_CHECK(mentions(problems(msg::signal_request{wf, "", "null"}), "name: expected a non-empty"));
  CAF_CHECK(mentions(problems(msg::signal_request{wf, "a", "{nope"}), "payload: expected JSON"));
}

CAF_TEST(polls stay within the node limits) {
  msg::poll_request ok{"", "email", "w1", 10, 1000};
  CAF_CHECK_EQUAL(problems(ok, limits), "");
  auto r = ok;
  r.queue = "";
  CAF_CHECK(mentions(problems(r, limits), "queue: expected a non-empty string"));
  r = ok;
  r.max_tasks = 0;
  CAF_CHECK(mentions(problems(r, limits), "max_tasks: expected an integer 1 … 1000, got 0"));
  r.max_tasks = store::max_lease_tasks;
  CAF_CHECK_EQUAL(problems(r, limits), "");
  r.max_tasks = store::max_lease_tasks + 1;
  CAF_CHECK(mentions(problems(r, limits), "max_tasks: expected an integer 1 … 1000, got 1001"));
  r = ok;
  r.timeout_ms = limits.max_poll_timeout_ms + 1;
  CAF_CHECK(mentions(problems(r, limits), "timeout_ms: expected an integer 0 … 60000 "
                                          "(lessor.max_poll_timeout_ms), got 60001"));
}

CAF_TEST(a report batch carries at most what one poll may lease) {
  CAF_CHECK(!net::check_report_count(store::max_lease_tasks));
  auto e = net::check_report_count(store::max_lease_tasks + 1);
  CAF_CHECK_EQUAL(nf::message_of(e), "results: expected at most 1000 results in one call, got 1001");
}

CAF_TEST(task results carry the lease and a known status) {
  msg::task_result ok{task, wf, token, "COMPLETED", R"({"sent":true})", ""};
  CAF_CHECK_EQUAL(problems(ok), "");
  auto r = ok;
  r.status = "DONE";
  CAF_CHECK(mentions(problems(r), "status: expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR"));
  r = ok;
  r.lease_token = "";
  CAF_CHECK(mentions(problems(r), "lease_token: expected a UUID, got an empty string"));
  r = ok;
  r.output_json = "null";
  CAF_CHECK(mentions(problems(r), "output: expected a JSON object, got null"));
  r = ok;
  r.output_json = "";
  CAF_CHECK_EQUAL(problems(r), ""); // no output: the stored one is kept
}

CAF_TEST(events and dead letters are bounded) {
  msg::events_request ok{wf, 0, 100, 0};
  CAF_CHECK_EQUAL(problems(ok, limits), "");
  auto e = ok;
  e.after_seq = -1;
  CAF_CHECK(mentions(problems(e, limits), "after_seq:"));
  e = ok;
  e.wait_ms = 10'000'000;
  CAF_CHECK(mentions(problems(e, limits), "wait_ms:"));
  CAF_CHECK_EQUAL(problems(msg::deadletter_request{"list", {}, 0, 100}), "");
  CAF_CHECK_EQUAL(problems(msg::deadletter_request{"replay", {1, 2}, 0, 100}), "");
  CAF_CHECK(mentions(problems(msg::deadletter_request{"purge", {}, 0, 100}),
                     "op: expected list or replay"));
  CAF_CHECK(mentions(problems(msg::deadletter_request{"replay", {4, -2}, 0, 100}),
                     "ids[1]: expected a positive dead-letter id, got -2"));
  CAF_CHECK(mentions(problems(msg::deadletter_request{"list", {}, 0, 0}), "limit:"));
}

CAF_TEST(definitions text must not be empty) {
  CAF_CHECK(!net::check_definitions_text("{}"));
  auto err = net::check_definitions_text("  \n");
  CAF_REQUIRE(err);
  CAF_CHECK(mentions(nf::message_of(err), "$: expected a task or workflow definition"));
}

CAF_TEST(definitions queries name a known op and kind and the fields each takes) {
  CAF_CHECK_EQUAL(problems(msg::definitions_query{"list", "task", "", 0}), "");
  CAF_CHECK_EQUAL(problems(msg::definitions_query{"get", "workflow", "pay", 0}), "");
  CAF_CHECK_EQUAL(problems(msg::definitions_query{"delete", "workflow", "pay", 2}), "");
  CAF_CHECK(mentions(problems(msg::definitions_query{"purge", "task", "x", 0}),
                     "op: expected list, get or delete"));
  CAF_CHECK(mentions(problems(msg::definitions_query{"list", "queue", "", 0}),
                     "kind: expected task or workflow"));
  CAF_CHECK(mentions(problems(msg::definitions_query{"get", "task", "", 0}), "name:"));
  CAF_CHECK(mentions(problems(msg::definitions_query{"get", "task", "x", 3}),
                     "version: task definitions have no versions"));
  CAF_CHECK(mentions(problems(msg::definitions_query{"delete", "workflow", "pay", 0}),
                     "version:"));
  CAF_CHECK(mentions(problems(msg::definitions_query{"list", "task", "x", 0}), "name:"));
}

// payloads.max_bytes bounds every payload alike, before it is parsed, and names the field
// and the setting; a payload at the limit passes.
CAF_TEST(payloads past payloads.max_bytes are refused naming the field and the limit) {
  net::check_limits small;
  small.max_payload_bytes = 1024;
  const std::string fits = "{\"a\": \"" + std::string(1024 - 9, 'x') + "\"}";
  const std::string big = "{\"a\": \"" + std::string(1024, 'x') + "\"}";
  CAF_REQUIRE_EQUAL(fits.size(), 1024u);
  const std::string limit = "expected at most 1024 bytes (payloads.max_bytes), got "
                            + std::to_string(big.size());

  msg::start_request s;
  s.workflow_name = "order";
  s.input_json = fits;
  CAF_CHECK_EQUAL(problems(s, small), "");
  s.input_json = big;
  CAF_CHECK(mentions(problems(s, small), "input: " + limit));
  CAF_CHECK_EQUAL(problems(s), ""); // the default is 8 MiB

  msg::task_result r;
  r.task_id = task;
  r.workflow_id = wf;
  r.lease_token = token;
  r.status = "COMPLETED";
  r.output_json = fits;
  CAF_CHECK_EQUAL(problems(r, small), "");
  r.output_json = big;
  CAF_CHECK(mentions(problems(r, small), "output: " + limit));
  // Past the limit it is not parsed: the size is the only complaint.
  r.output_json = std::string(2048, '{');
  auto text = problems(r, small);
  CAF_CHECK(mentions(text, "output: expected at most 1024 bytes"));
  CAF_CHECK(text.find("malformed") == std::string::npos);

  msg::signal_request g;
  g.workflow_id = wf;
  g.name = "go";
  g.payload_json = big;
  CAF_CHECK(mentions(problems(g, small), "payload: " + limit));

  msg::workflow_command c;
  c.op = "restart";
  c.workflow_id = wf;
  c.input_json = big;
  CAF_CHECK(mentions(problems(c, small), "input: " + limit));
  c.input_json = fits;
  CAF_CHECK_EQUAL(problems(c, small), "");

  msg::task_ref_update u;
  u.workflow_id = wf;
  u.task_ref = "step";
  u.status = "COMPLETED";
  u.output_json = big;
  CAF_CHECK(mentions(problems(u, small), "output: " + limit));

  msg::task_progress pr;
  pr.task_id = task;
  pr.workflow_id = wf;
  pr.logs_json = "[]";
  pr.output_json = big;
  CAF_CHECK(mentions(problems(pr, small), "output: " + limit));
}
