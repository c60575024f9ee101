#define CAF_SUITE engine.script
#include "caf/test/unit_test.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include <csignal>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/script/evaluate.hpp"
#include "engine/script/jq_modules.hpp"
#include "engine/script/pool.hpp"
#include "engine/system_tasks/script_task.hpp"

using namespace nf::engine;
using namespace nf::engine::script;
using namespace std::chrono_literals;

namespace {

// The node's own binary, run as `nodeflow sandbox` exactly as the node runs it.
pool_options options() {
  pool_options o;
  o.argv = {NF_NODEFLOW_BIN, "sandbox"};
  o.processes = 2;
  o.timeout = 1000ms;
  o.memory_mb = 32;
  return o;
}

request js(std::string program, std::string input = "{}") {
  return {language::javascript, 32, 1000, std::move(program), std::move(input)};
}

request jq(std::string program, std::string input = "{}") {
  return {language::jq, 32, 1000, std::move(program), std::move(input)};
}

std::string one(const answer& a) {
  if (a.kind != outcome::ok || a.values.size() != 1)
    return "<" + std::string(1, static_cast<char>(a.kind)) + ": " + a.message + ">";
  return a.values.front();
}

bool says(const answer& a, outcome kind, const std::string& text) {
  bool ok = a.kind == kind && a.message.find(text) != std::string::npos;
  if (!ok)
    CAF_MESSAGE("answer kind " << static_cast<char>(a.kind) << " message: " << a.message);
  return ok;
}

} // namespace

CAF_TEST(javascript sees the input as $ and answers the completion value) {
  pool p(options());
  CAF_CHECK_EQUAL(one(p.run(js("$.value * 2", R"({"value": 21})"))), "42");
  CAF_CHECK_EQUAL(one(p.run(js("function e(){ return $.a + 1 } e();", R"({"a": 1})"))), "2");
  CAF_CHECK_EQUAL(one(p.run(js("({x: [1, 'two'], y: null})"))), R"({"x":[1,"two"],"y":null})");
  CAF_CHECK_EQUAL(one(p.run(js("var unused = 1;"))), "null");
}

CAF_TEST(jq gives every output and its errors with the jq message) {
  pool p(options());
  auto a = p.run(jq("{ key3: (.key1.value1 + .key2.value2) }",
                    R"({"key1":{"value1":["a","b"]},"key2":{"value2":["d","e"]}})"));
  CAF_CHECK_EQUAL(one(a), R"({"key3":["a","b","d","e"]})");
  auto many = p.run(jq(".xs[]", R"({"xs":[1,2,3]})"));
  CAF_REQUIRE_EQUAL(many.values.size(), 3u);
  CAF_CHECK_EQUAL(many.values[2], "3");
  CAF_CHECK(says(p.run(jq(".a |||")), outcome::compile, "syntax error"));
  CAF_CHECK(says(p.run(jq(".a + 1", R"({"a":"x"})")), outcome::error, "cannot be added"));
  CAF_CHECK(says(p.run(jq("error(\"no\")")), outcome::error, "no"));
  // A sandbox keeps compiled programs: the same program on other input, and its errors.
  for (int i = 0; i < 4; ++i) {
    auto n = std::to_string(i);
    CAF_CHECK_EQUAL(one(p.run(jq(".n + 1", R"({"n":)" + n + "}"))), std::to_string(i + 1));
    CAF_CHECK(says(p.run(jq("error(.m)", "{\"m\":\"m" + n + "\"}")), outcome::error, "m" + n));
  }
}

CAF_TEST(an endless script is killed at the time limit and the pool still answers) {
  pool p(options());
  auto start = std::chrono::steady_clock::now();
  auto a = p.run(js("while(true){}"));
  auto took = std::chrono::steady_clock::now() - start;
  CAF_CHECK(says(a, outcome::timeout, "script ran past its time limit of 1000 ms"));
  CAF_CHECK(took >= 1000ms && took < 3000ms);
  CAF_CHECK(says(p.run(jq("def f: f; f")), outcome::timeout, "time limit"));
  // An ever-growing array: whichever limit it reaches first.
  auto growing = p.run(jq("[range(0; infinite)] | length"));
  CAF_CHECK(growing.kind == outcome::memory || growing.kind == outcome::timeout);
  CAF_CHECK_EQUAL(one(p.run(js("1 + 1"))), "2");
}

CAF_TEST(a script past its memory limit fails with the limit and the pool still answers) {
  // Time enough to reach the memory limit on a loaded machine: it, not the time limit, is
  // what these scripts are to run into.
  auto o = options();
  o.timeout = 10000ms;
  pool p(o);
  CAF_CHECK(says(p.run(js("var a = []; while (true) a.push(new Array(1e6));")), outcome::memory,
                 "script ran past its memory limit of 32 MB"));
  CAF_CHECK(says(p.run(js("'x'.repeat(1e9)")), outcome::memory, "memory limit of 32 MB"));
  CAF_CHECK(says(p.run(js("var s = 'x'; while (true) s = s + s;")), outcome::memory,
                 "memory limit"));
  CAF_CHECK_EQUAL(one(p.run(js("'still' + ' here'"))), "\"still here\"");
  CAF_CHECK_EQUAL(one(p.run(jq(".a", R"({"a":true})"))), "true");
}

CAF_TEST(scripts cannot reach the host) {
  ::setenv("NF_SCRIPT_TEST_SECRET", "hunter2", 1);
  auto o = options();
  pool p(o);
  CAF_CHECK(says(p.run(js("require('fs')")), outcome::error,
                 "ReferenceError: identifier 'require' undefined"));
  CAF_CHECK(says(p.run(js("java.lang.System.exit(1)")), outcome::error,
                 "identifier 'java' undefined"));
  CAF_CHECK(says(p.run(js("Java.type('java.lang.Runtime')")), outcome::error,
                 "identifier 'Java' undefined"));
  CAF_CHECK(says(p.run(js("process.env")), outcome::error, "identifier 'process' undefined"));
  CAF_CHECK(says(p.run(js("a b c")), outcome::compile, "SyntaxError"));
  // The environment is empty: the node's own variables do not reach jq.
  CAF_CHECK_EQUAL(one(p.run(jq("$ENV"))), "{}");
  CAF_CHECK_EQUAL(one(p.run(jq("env | length"))), "0");
  CAF_CHECK(says(p.run(jq("input")), outcome::error, "No more inputs"));
  CAF_CHECK(says(p.run(jq("import \"a\" as a; .")), outcome::compile, "`import` is not allowed"));
  CAF_CHECK(says(p.run(jq("include \"a\"; .")), outcome::compile, "`include` is not allowed"));
  CAF_CHECK(says(p.run(jq("import \"passwd\" as $p {search: \"/etc\"}; $p")), outcome::compile,
                 "not allowed"));
  CAF_CHECK(says(p.run(jq("\"x\" | modulemeta")), outcome::error, ""));
  CAF_CHECK_EQUAL(one(p.run(js("1 + 1"))), "2");
  CAF_CHECK(p.started() <= 2);
  ::unsetenv("NF_SCRIPT_TEST_SECRET");
}

CAF_TEST(a sandbox that dies fails only its own request) {
  auto o = options();
  o.argv = {"/bin/sh", "-c", "exit 3"};
  pool dying(o);
  CAF_CHECK(says(dying.run(js("1")), outcome::crash, "exited with status 3"));
  CAF_CHECK(says(dying.run(js("1")), outcome::crash, "exited with status 3"));
  o.argv = {"/nonexistent/nodeflow", "sandbox"};
  pool missing(o);
  CAF_CHECK(says(missing.run(js("1")), outcome::crash, "cannot start /nonexistent/nodeflow"));
}

CAF_TEST(a sandbox outlives the thread that started it) {
  // The node's task workers are threads that end after their task: the process one of
  // them started serves the next task too.
  pool p(options());
  std::thread([&] { CAF_CHECK_EQUAL(one(p.run(js("1"))), "1"); }).join();
  std::this_thread::sleep_for(200ms);
  CAF_CHECK_EQUAL(one(p.run(js("2"))), "2");
  CAF_CHECK_EQUAL(p.started(), 1);
}

CAF_TEST(a sandbox left running by a dead node stops at its CPU limit) {
  // As the node would start it, but with nobody to kill it: a 10 ms time limit gives
  // a CPU limit of 3 s (the limit rounded up to seconds, plus two).
  int sv[2];
  CAF_REQUIRE_EQUAL(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  std::string bin = NF_NODEFLOW_BIN, cmd = "sandbox";
  char* argv[] = {bin.data(), cmd.data(), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  CAF_REQUIRE_EQUAL(::posix_spawn(&pid, argv[0], &fa, nullptr, argv, envp), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  request r{language::javascript, 32, 10, "while(true){}", "{}"};
  CAF_REQUIRE(write_frame(sv[0], encode(r)));
  int status = 0;
  pid_t done = 0;
  auto start = std::chrono::steady_clock::now();
  // Three CPU seconds; on a busy machine the wall clock takes longer.
  while (done == 0 && std::chrono::steady_clock::now() - start < 30s) {
    done = ::waitpid(pid, &status, WNOHANG);
    std::this_thread::sleep_for(50ms);
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(sv[0]);
  CAF_CHECK_EQUAL(done, pid);
  CAF_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU);
}

CAF_TEST(module directives are found as jq tokens and not as text) {
  CAF_CHECK(module_directive("import \"x\" as x; .").has_value());
  CAF_CHECK(module_directive("  # c\n include \"x\"; .").has_value());
  CAF_CHECK(module_directive("{a: 1} | .import").value_or("") == "");
  CAF_CHECK(!module_directive("{import: 1, include: 2}").has_value());
  CAF_CHECK(!module_directive("\"import \\(.a) include\"").has_value());
  CAF_CHECK(!module_directive("$import").has_value());
  CAF_CHECK(module_directive("\"\\(\")\")\" | import \"a\" as a; .").has_value());
}

CAF_TEST(script tasks read their input and give Conductor output) {
  nf::msg::leased_task t;
  t.task_id = "t1";
  t.task_type = "INLINE";
  t.input_json = R"({"evaluatorType": "value-param", "expression": "v", "v": {"k": 1}})";
  auto direct = read_script_task(t);
  CAF_REQUIRE(std::holds_alternative<nf::msg::task_result>(direct));
  CAF_CHECK_EQUAL(std::get<nf::msg::task_result>(direct).output_json, R"({"result":{"k":1}})");
  t.input_json = R"({"evaluatorType": "python", "expression": "1"})";
  auto bad = std::get<nf::msg::task_result>(read_script_task(t));
  CAF_CHECK_EQUAL(bad.status, "FAILED_WITH_TERMINAL_ERROR");
  CAF_CHECK_EQUAL(bad.reason,
                  "INLINE: evaluatorType: expected one of value-param, javascript, graaljs, got "
                  "\"python\"");
  t.task_type = "LAMBDA";
  t.input_json = R"({"scriptExpression": "return {n: $.n + 1}; // done", "n": 1})";
  auto req = std::get<request>(read_script_task(t));
  pool p(options());
  auto lam = script_task_result(t, p.run(req));
  CAF_CHECK_EQUAL(lam.status, "COMPLETED");
  CAF_CHECK_EQUAL(lam.output_json, R"({"result":{"n":2}})");
  t.task_type = "JSON_JQ_TRANSFORM";
  t.input_json = R"({"queryExpression": ".xs[]", "xs": []})";
  auto none = script_task_result(t, p.run(std::get<request>(read_script_task(t))));
  CAF_CHECK_EQUAL(none.output_json, R"({"result":null,"resultList":[]})");
  t.task_type = "INLINE";
  t.input_json = R"js({"evaluatorType": "graaljs", "expression": "[1].map(x => x)"})js";
  auto modern = script_task_result(t, p.run(std::get<request>(read_script_task(t))));
  CAF_CHECK_EQUAL(modern.status, "FAILED");
  CAF_CHECK_EQUAL(modern.reason, "INLINE: script does not compile: SyntaxError: parse error "
                                 "(line 1) (scripts run as ECMAScript 5.1: no let, arrow "
                                 "functions, classes or template literals)");
  t.input_json = R"({"evaluatorType": "javascript", "expression": "while(true){}"})";
  auto slow = script_task_result(t, p.run(std::get<request>(read_script_task(t))));
  CAF_CHECK_EQUAL(slow.status, "FAILED");
  CAF_CHECK_EQUAL(slow.reason, "INLINE: script ran past its time limit of 1000 ms");
  CAF_CHECK_EQUAL(slow.output_json,
                  R"({"error":"script ran past its time limit of 1000 ms"})");
}

CAF_TEST(the frames survive a round trip and refuse truncation) {
  request r{language::jq, 7, 250, ".a", R"({"a":1})"};
  auto back = decode_request(encode(r));
  CAF_REQUIRE(back.has_value());
  CAF_CHECK_EQUAL(back->program, ".a");
  CAF_CHECK_EQUAL(back->input_json, R"({"a":1})");
  CAF_CHECK_EQUAL(back->memory_mb, 7u);
  CAF_CHECK_EQUAL(back->timeout_ms, 250u);
  auto bytes = encode(r);
  CAF_CHECK(!decode_request(bytes.substr(0, 6)).has_value());
  answer a{outcome::ok, {"1", "[2]"}, ""};
  auto ab = decode_answer(encode(a));
  CAF_REQUIRE(ab.has_value());
  CAF_CHECK_EQUAL(ab->values.size(), 2u);
  auto enc = encode(a);
  CAF_CHECK(!decode_answer(enc.substr(0, enc.size() - 1)).has_value());
}
