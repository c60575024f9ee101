#define CAF_SUITE flow.language
#include "caf/test/unit_test.hpp"

#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "flow/definitions.hpp"
#include "flow/expression.hpp"
#include "flow/json_transform.hpp"
#include "flow/parse.hpp"
#include "flow/retry.hpp"
#include "flow/safe_expr.hpp"
#include "flow/serialise.hpp"
#include "flow/snapshot.hpp"
#include "flow/status.hpp"
#include "flow/validate.hpp"
#include "flow/wait_time.hpp"

using namespace nf::flow;

namespace {

std::string slurp(const std::string& name) {
  std::ifstream in(std::string(NF_FLOW_TEST_DIR) + "/valid/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string resolved(const char* tmpl, const char* input) {
  scope s;
  s.workflow_id = "wf-9";
  s.workflow_type = "w";
  s.workflow_version = 2;
  s.correlation_id = "order-7";
  auto in = boost::json::parse(input).as_object();
  boost::json::object out{{"list", boost::json::array{1, "two", nullptr}}, {"n", 1.5}};
  s.input = &in;
  s.variables = &in;
  s.task = [&](std::string_view ref, bool output) -> const boost::json::object* {
    return ref == "t" && output ? &out : nullptr;
  };
  return boost::json::serialize(resolve(boost::json::parse(tmpl), s));
}

std::string eval(const char* expr, const char* root) {
  safe_expr e;
  std::string error;
  if (!e.compile(expr, error))
    return "compile error: " + error;
  boost::json::value v;
  if (!e.evaluate(boost::json::parse(root), v, error))
    return "error: " + error;
  return boost::json::serialize(v);
}

}  // namespace

CAF_TEST(status and type labels round trip) {
  for (int i = 0; i <= static_cast<int>(workflow_status::paused); ++i) {
    auto s = static_cast<workflow_status>(i);
    CAF_CHECK(parse_workflow_status(to_string(s)) == s);
  }
  for (int i = 0; i <= static_cast<int>(task_status::skipped); ++i) {
    auto s = static_cast<task_status>(i);
    CAF_CHECK(parse_task_status(to_string(s)) == s);
  }
  for (int i = 0; i <= static_cast<int>(task_type::json_jq_transform); ++i) {
    auto t = static_cast<task_type>(i);
    CAF_CHECK(parse_task_type(to_string(t)) == t);
  }
  CAF_CHECK_EQUAL(to_string(task_status::failed_with_terminal_error), "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(to_string(workflow_status::timed_out), "TIMED_OUT");
  CAF_CHECK(!parse_task_status("completed"));
  CAF_CHECK(is_terminal(task_status::skipped) && is_successful(task_status::skipped));
  CAF_CHECK(!is_terminal(workflow_status::paused));
}

CAF_TEST(parse serialise parse is the identity) {
  auto wf = load_workflow_def(slurp("order.json"));
  CAF_REQUIRE(wf.ok());
  problems errs;
  auto again = read_workflow_def(boost::json::parse(boost::json::serialize(to_json(wf.def))), "",
                                 errs);
  CAF_CHECK(errs.empty());
  CAF_CHECK(again == wf.def);
  CAF_CHECK_EQUAL(wf.def.tasks[1].decision_cases.at(0).value, "express");
  CAF_CHECK_EQUAL(wf.def.tasks[1].default_case.at(0).start_delay, 5);
  auto list = boost::json::parse(slurp("tasks.json"));
  for (const auto& v : list.as_array()) {
    problems e1, e2;
    auto d = read_task_def(v, "", e1);
    auto d2 = read_task_def(to_json(d), "", e2);
    CAF_CHECK(e1.empty() && e2.empty());
    CAF_CHECK(d == d2);
  }
  auto approval = load_workflow_def(slurp("approval.json"));
  CAF_REQUIRE(approval.ok());
  CAF_CHECK(read_workflow_def(to_json(approval.def), "", errs) == approval.def);
}

CAF_TEST(numbers in a definition come back exactly after serialising) {
  // Boost.JSON's own parser reads some long decimals one unit in the last place off, so a
  // definition serialised and loaded again differed (a fuzzer's finding).
  auto wf = load_workflow_def(R"({"name": "w", "tasks": [{"name": "a", "taskReferenceName": "a",
    "inputParameters": {"big": 44444444444444444444444444444444444444444444444444444444,
                        "tenth": 0.30000000000000004, "tiny": 4.9e-324, "n": -12}}]})");
  CAF_REQUIRE(wf.ok());
  auto again = load_workflow_def(boost::json::serialize(to_json(wf.def)));
  CAF_REQUIRE(again.ok());
  CAF_CHECK(again.def == wf.def);
  const auto& in = wf.def.tasks[0].input_parameters;
  CAF_CHECK_EQUAL(in.at("big").as_double(), 4.4444444444444443e55);
  CAF_CHECK_EQUAL(in.at("tenth").as_double(), 0.1 + 0.2);
  CAF_CHECK_EQUAL(in.at("n").as_int64(), -12);
  CAF_CHECK(!load_workflow_def(R"({"name": "w", "tasks": []} x)").ok());
}

CAF_TEST(defaults follow conductor except for unregistered tasks) {
  auto d = load_task_def(R"({"name":"t"})");
  CAF_REQUIRE(d.ok());
  CAF_CHECK_EQUAL(d.def.retry_count, 3);
  CAF_CHECK_EQUAL(d.def.retry_delay_seconds, 60);
  CAF_CHECK(d.def.policy == timeout_policy::time_out_wf);
  auto u = task_def::unregistered("t");
  CAF_CHECK_EQUAL(u.retry_count, 0);
  CAF_CHECK_EQUAL(u.timeout_seconds, 0);
  workflow_task wt;
  wt.name = "t";
  CAF_CHECK_EQUAL(queue_of(wt, &u), "t");
}

CAF_TEST(counts accept integral numbers only) {
  auto ok = load_task_def(R"({"name":"t","retryCount":3.0,"timeoutSeconds":0})");
  CAF_CHECK(ok.ok());
  CAF_CHECK_EQUAL(ok.def.retry_count, 3);
  for (const char* bad : {"1.5", "-3", "\"3\"", "true", "2147483648", "1e300", "null"}) {
    auto r = load_task_def(std::string(R"({"name":"t","retryCount":)") + bad + "}");
    if (std::string(bad) == "null") {
      CAF_CHECK(r.ok());  // null is "not given"
      continue;
    }
    CAF_CHECK_EQUAL(r.errors.size(), 1u);
    CAF_CHECK_EQUAL(r.errors.at(0).path, "retryCount");
  }
}

CAF_TEST(json null stays null) {
  auto wf = load_workflow_def(
    R"({"name":"w","tasks":[{"name":"a","taskReferenceName":"a","inputParameters":{"x":null,"y":{"z":null}}}],
        "variables":{"v":null}})");
  CAF_REQUIRE(wf.ok());
  CAF_CHECK(wf.def.tasks[0].input_parameters.at("x").is_null());
  CAF_CHECK_EQUAL(boost::json::serialize(to_json(wf.def).as_object().at("variables")), R"({"v":null})");
  CAF_CHECK_EQUAL(resolved(R"({"a":"${workflow.input.missing}","b":null})", "{}"),
                  R"({"a":null,"b":null})");
}

CAF_TEST(expressions keep types and paths) {
  CAF_CHECK_EQUAL(resolved(R"("${workflow.input.n}")", R"({"n":5})"), "5");
  CAF_CHECK_EQUAL(resolved(R"("n=${workflow.input.n}")", R"({"n":5})"), R"("n=5")");
  CAF_CHECK_EQUAL(resolved(R"("${workflow.input.o}")", R"({"o":{"a":[1]}})"), R"({"a":[1]})");
  CAF_CHECK_EQUAL(resolved(R"("${workflow.input.o.a[0]}")", R"({"o":{"a":[7]}})"), "7");
  CAF_CHECK_EQUAL(resolved(R"("${workflow.input['odd key']}")", R"({"odd key":true})"), "true");
  CAF_CHECK_EQUAL(resolved(R"("${t.output.list[1]}")", "{}"), R"("two")");
  CAF_CHECK_EQUAL(resolved(R"("${t.output.list[2]}")", "{}"), "null");
  CAF_CHECK_EQUAL(resolved(R"("${t.output.list[9]}")", "{}"), "null");
  CAF_CHECK_EQUAL(resolved(R"("${t.output.n}")", "{}"), "1.5E0");
  CAF_CHECK_EQUAL(resolved(R"("${t.input.x}")", "{}"), "null");
  CAF_CHECK_EQUAL(resolved(R"(["${workflow.workflowId}","${workflow.workflowType}","${workflow.version}"])", "{}"),
                  R"(["wf-9","w",2])");
  CAF_CHECK_EQUAL(resolved(R"("${workflow.correlationId}")", "{}"), R"("order-7")");
  CAF_CHECK_EQUAL(resolved(R"("a ${workflow.input.s} b ${workflow.input.o}")", R"({"s":"x","o":{"k":1}})"),
                  R"("a x b {\"k\":1}")");
  CAF_CHECK_EQUAL(resolved(R"("$${workflow.input.n}")", R"({"n":5})"), R"("${workflow.input.n}")");
  CAF_CHECK_EQUAL(resolved(R"("${workflow.variables.n}")", R"({"n":false})"), "false");
}

namespace {

// A template resolved with its functions; "error: …" when one failed.
std::string with_functions(const char* tmpl, const char* input) {
  scope s;
  auto in = boost::json::parse(input).as_object();
  s.input = &in;
  std::string error;
  auto v = resolve(boost::json::parse(tmpl), s, &error);
  return error.empty() ? boost::json::serialize(v) : "error: " + error;
}

}  // namespace

// Jayway JsonPath's functions, as Conductor evaluates them at the end of a path.
CAF_TEST(path functions follow jayway) {
  const char* in = R"({"l":[3,"x",1.5,7,null],"o":{"b":1,"a":[2]},"s":"text","e":[],"w":["a"]})";
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.length()}")", in), "5");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.o.length()}")", in), "2");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.length()}")", in), "5");
  // Jayway's length() counts arrays and objects only: a string has none.
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.s.length()}")", in), "null");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.missing.length()}")", in), "null");
  // Aggregations skip what is not a number and answer a double.
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.min()}")", in), "1.5E0");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.max()}")", in), "7E0");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.sum()}")", in), "1.15E1");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.o.a.avg()}")", in), "2E0");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.w.max()}")", in),
                  R"(error: "${workflow.input.w.max()}": max() needs an array with at least one number, got none)");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.s.sum()}")", in),
                  R"(error: "${workflow.input.s.sum()}": sum() needs an array with at least one number, got "text")");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.nope.avg()}")", in),
                  R"(error: "${workflow.input.nope.avg()}": avg() needs an array with at least one number, got null)");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.o.keys()}")", in), R"(["b","a"])");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.keys()}")", in), "null");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.first()}")", in), "3");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.l.last()}")", in), "null");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.w.last()}")", in), R"("a")");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.e.first()}")", in),
                  R"(error: "${workflow.input.e.first()}": first() needs a non-empty array, got [])");
  CAF_CHECK_EQUAL(with_functions(R"("${workflow.input.o.last()}")", in),
                  R"(error: "${workflow.input.o.last()}": last() needs a non-empty array, got {"b":1,"a":[2]})");
  // Inside text, and beside the escape, which is never evaluated.
  CAF_CHECK_EQUAL(with_functions(R"("n=${workflow.input.l.length()} $${workflow.input.l.max()}")", in),
                  R"("n=5 ${workflow.input.l.max()}")");
  CAF_CHECK_EQUAL(with_functions(R"("$${workflow.input.e.first()}")", in),
                  R"("${workflow.input.e.first()}")");
  CAF_CHECK_EQUAL(with_functions(R"({"a":["${workflow.input.e.first()}"],"b":"${workflow.input.w.min()}"})", in),
                  R"(error: "${workflow.input.e.first()}": first() needs a non-empty array, got [])");
  // Without an error sink a failed function is null.
  CAF_CHECK_EQUAL(resolved(R"("${workflow.input.e.first()}")", R"({"e":[]})"), "null");
}

CAF_TEST(path functions are checked when parsed) {
  parsed_template t;
  std::string error;
  CAF_CHECK(parse_template("${t.output.body.length()}", t, error));
  CAF_CHECK(t.whole_value() && t.parts[0].ref.fn == path_function::length);
  CAF_CHECK_EQUAL(t.parts[0].ref.path.size(), 1u);
  CAF_CHECK(parse_template("${workflow.input['a b'].keys()}", t, error));
  CAF_CHECK(t.parts[0].ref.fn == path_function::keys);
  CAF_CHECK(!parse_template("${workflow.input.x.count()}", t, error));
  CAF_CHECK_EQUAL(error, R"x(invalid expression "${workflow.input.x.count()}": unknown function "count()" (expected length(), min(), max(), avg(), sum(), keys(), first() or last()))x");
  CAF_CHECK(!parse_template("${workflow.input.x.max().min()}", t, error));
  CAF_CHECK(!parse_template("${length()}", t, error));
  CAF_CHECK_EQUAL(error, R"(invalid expression "${length()}": expected <path>.<function>())");
  CAF_CHECK(!parse_template("${workflow.input.x)}", t, error));
  CAF_CHECK(!parse_template("${secrets.K.length()}", t, error));
  // The escape is literal text, whatever follows it.
  CAF_CHECK(parse_template("$${workflow.input.x.count()}", t, error));
  CAF_CHECK(!t.parts[0].is_reference && t.parts[0].literal == "${workflow.input.x.count()}");
  json_path_view scratch;
  std::vector<reference_view> refs;
  CAF_CHECK(scan_template("$${x.y.z()} ${a.output.l.sum()}", scratch, refs, error));
  CAF_CHECK(refs.size() == 1 && refs[0].task_ref == "a");
  CAF_CHECK(!scan_template("${a.output.l.median()}", scratch, refs, error));
  CAF_CHECK(parse_path_function("avg") == path_function::avg);
  CAF_CHECK(parse_path_function("") == path_function::none);
}

// flow never knows a secret: its reference stays as written, for the HTTP task's runner.
CAF_TEST(secret references are kept for dispatch) {
  CAF_CHECK_EQUAL(resolved(R"("${secrets.API_TOKEN}")", "{}"), R"("${secrets.API_TOKEN}")");
  CAF_CHECK_EQUAL(resolved(R"("Bearer ${secrets.API_TOKEN} for ${workflow.input.n}")",
                           R"({"n":5})"),
                  R"("Bearer ${secrets.API_TOKEN} for 5")");
  // Three segments: a task whose reference name is "secrets".
  CAF_CHECK_EQUAL(resolved(R"("${secrets.output.x}")", "{}"), "null");
  CAF_CHECK(valid_secret_name("DB_password-2"));
  CAF_CHECK(!valid_secret_name("-x"));
  CAF_CHECK(!valid_secret_name("a.b"));
  CAF_CHECK(!valid_secret_name(std::string(129, 'a')));
}

// Conductor's ${CPEWF_TASK_ID}: the id of the task whose input is resolved, whole or in text.
CAF_TEST(the own task id resolves where a task is scheduled) {
  scope s;
  CAF_CHECK_EQUAL(boost::json::serialize(resolve(boost::json::parse(R"("${CPEWF_TASK_ID}")"), s)),
                  "null");
  s.own_task_id = [] { return std::string_view("0193-task"); };
  CAF_CHECK_EQUAL(boost::json::serialize(resolve(
                    boost::json::parse(R"({"id":"${CPEWF_TASK_ID}","url":"/x?t=${CPEWF_TASK_ID}",
                                           "kept":"$${CPEWF_TASK_ID}"})"), s)),
                  R"({"id":"0193-task","url":"/x?t=0193-task","kept":"${CPEWF_TASK_ID}"})");
  parsed_template t;
  std::string error;
  CAF_CHECK(!parse_template("${CPEWF_TASK_ID.length()}", t, error));
  CAF_CHECK_EQUAL(error, R"(invalid expression "${CPEWF_TASK_ID.length()}": )"
                         "CPEWF_TASK_ID takes no function");
  CAF_CHECK(!parse_template("${NETFLIX_ENV}", t, error));
  CAF_CHECK_EQUAL(error, R"(invalid expression "${NETFLIX_ENV}": expected workflow.<field>, )"
                         R"(<taskReferenceName>.input|output or CPEWF_TASK_ID, got "NETFLIX_ENV" )"
                         "(environment variables are not read)");
}

CAF_TEST(safe expressions) {
  CAF_CHECK_EQUAL(eval("$.a + 1", R"({"a":2})"), "3");
  CAF_CHECK_EQUAL(eval("$.a / 2", R"({"a":3})"), "1.5E0");
  CAF_CHECK_EQUAL(eval("'x' + $.a", R"({"a":2})"), R"("x2")");
  CAF_CHECK_EQUAL(eval("$.a == 2 && !$.b", R"({"a":2.0,"b":false})"), "true");
  CAF_CHECK_EQUAL(eval("$.a === '2'", R"({"a":2})"), "false");
  CAF_CHECK_EQUAL(eval("$.list.length > 1 ? $.list[1] : null", R"({"list":[1,"b"]})"), R"("b")");
  CAF_CHECK_EQUAL(eval("$.missing.deeper", "{}"), "null");
  CAF_CHECK_EQUAL(eval("$['k'] || 'default'", R"({"k":""})"), R"("default")");
  CAF_CHECK_EQUAL(eval("iteration < 3", R"({"iteration":2})"), "true");
  CAF_CHECK_EQUAL(eval("-$.a % 4", R"({"a":7})"), "-3");
  CAF_CHECK_EQUAL(eval("if ($.a > 1) { 'big'; } else if ($.a > 0) { 'small'; } else { return 'none'; }",
                       R"({"a":1})"),
                  R"("small")");
  CAF_CHECK_EQUAL(eval("$.a * 2", R"({"a":"x"})"), R"(error: cannot do arithmetic on "x" and 2)");
  CAF_CHECK_EQUAL(eval("1 / 0", "{}"), "error: cannot divide 1 and 0");
  CAF_CHECK_EQUAL(eval("$.a +", "{}"), "compile error: unexpected end of expression at offset 5");
  CAF_CHECK_EQUAL(eval("while (true) {}", "{}"), "compile error: unexpected ( at offset 6");
  CAF_CHECK_EQUAL(eval(std::string(200, '(').c_str(), "{}"),
                  "compile error: expression nested too deeply at offset 64");
  CAF_CHECK_EQUAL(case_label(boost::json::value(true)), "true");
  CAF_CHECK_EQUAL(case_label(boost::json::value(nullptr)), "null");
}

CAF_TEST(json transform) {
  auto out = apply_mapping(
    boost::json::parse(R"({"ids":"$.items[*].id","all":"$","first":"$.items[0]","x":["$.k",1,"lit"],"n":{"deep":"$.k"}})"),
    boost::json::parse(R"({"items":[{"id":1},{"id":2},{"no":3}],"k":"v"})"));
  CAF_CHECK_EQUAL(boost::json::serialize(out),
                  R"({"ids":[1,2],"all":{"items":[{"id":1},{"id":2},{"no":3}],"k":"v"},"first":{"id":1},"x":["v",1,"lit"],"n":{"deep":"v"}})");
  std::vector<std::string> bad;
  CAF_CHECK(!check_mapping(boost::json::parse(R"({"a":"$.x[","b":"$.ok"})"), "m",
                           [&](const std::string& p, const std::string& m) { bad.push_back(p + ": " + m); }));
  CAF_REQUIRE_EQUAL(bad.size(), 1u);
  CAF_CHECK_EQUAL(bad[0], "m.a: invalid path \"$.x[\": expected an array index, a quoted name or * at offset 3");
}

CAF_TEST(wait durations and times) {
  CAF_CHECK(parse_duration_ms("30") == std::optional<std::int64_t>{30'000});
  CAF_CHECK(parse_duration_ms("90s") == std::optional<std::int64_t>{90'000});
  CAF_CHECK(parse_duration_ms("1h 30m") == std::optional<std::int64_t>{5'400'000});
  CAF_CHECK(parse_duration_ms("2 days, 3 hours") == std::optional<std::int64_t>{183'600'000});
  CAF_CHECK(parse_duration_ms("500ms") == std::optional<std::int64_t>{500});
  for (const char* bad : {"", "soon", "5m 30", "-5s", "3 fortnights", "99999999999999999999s"})
    CAF_CHECK(!parse_duration_ms(bad));
  CAF_CHECK(parse_time("1970-01-01T00:00:00Z") == std::optional<time_ms>{0});
  CAF_CHECK(parse_time("2024-02-29T12:00:00.250Z") == std::optional<time_ms>{1709208000250});
  CAF_CHECK(parse_time("2024-02-29 14:00 +02:00") == std::optional<time_ms>{1709208000000});
  CAF_CHECK(parse_time("2024-02-29 12:00 UTC") == std::optional<time_ms>{1709208000000});
  for (const char* bad : {"2023-02-29T00:00:00Z", "2024-01-01T10:00:00", "2024-13-01T00:00Z", "tomorrow"})
    CAF_CHECK(!parse_time(bad));
}

CAF_TEST(retry arithmetic) {
  task_def d = task_def::unregistered("t");
  d.retry_delay_seconds = 10;
  d.logic = retry_logic::exponential_backoff;
  CAF_CHECK_EQUAL(retry_delay_ms(d, "wf", {"r", 0, 0}), 10'000);
  CAF_CHECK_EQUAL(retry_delay_ms(d, "wf", {"r", 0, 3}), 80'000);
  d.retry_delay_seconds = 2147483647;
  CAF_CHECK_GREATER(retry_delay_ms(d, "wf", {"r", 0, 2000000000}), 0);  // saturates, no overflow
  d.max_retry_delay_seconds = 5;
  CAF_CHECK_EQUAL(retry_delay_ms(d, "wf", {"r", 0, 40}), 5'000);
  d.backoff_jitter_ms = 1000;
  auto j1 = retry_delay_ms(d, "wf", {"r", 0, 1});
  CAF_CHECK_EQUAL(j1, retry_delay_ms(d, "wf", {"r", 0, 1}));  // deterministic
  CAF_CHECK(j1 >= 5'000 && j1 < 6'000);
  bool differs = false;
  for (int a = 2; a < 10; ++a)
    differs |= retry_delay_ms(d, "wf", {"r", 0, a}) != j1;
  CAF_CHECK(differs);
  task_execution e;
  e.status = task_status::in_progress;
  e.start_time = 1000;
  task_def t = task_def::unregistered("t");
  t.timeout_seconds = 60;
  t.response_timeout_seconds = 10;
  // The response timeout is the lease's (heartbeats extend it), not a deadline of the row.
  auto dl = next_deadline(t, e, 0);
  CAF_REQUIRE(dl.has_value());
  CAF_CHECK(dl->kind == deadline_kind::start_to_close);
  CAF_CHECK_EQUAL(dl->at, 61'000);
  // pollTimeoutSeconds waits for the first poll only: a task given back after one (a
  // worker's callback) has no poll deadline.
  t.poll_timeout_seconds = 5;
  task_execution waiting;
  waiting.status = task_status::scheduled;
  waiting.scheduled_time = 1000;
  auto first = next_deadline(t, waiting, 0);
  CAF_REQUIRE(first.has_value());
  CAF_CHECK(first->kind == deadline_kind::poll);
  CAF_CHECK_EQUAL(first->at, 6'000);
  waiting.poll_count = 1;
  CAF_CHECK(!next_deadline(t, waiting, 0).has_value());
}
