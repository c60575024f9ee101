#define CAF_SUITE net.cli
#include "caf/test/unit_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <sstream>

#include "cmd/client_commands.hpp"
#include "cmd/serve_command.hpp"
#include "cmd/serve_config.hpp"
#include "tests/net/fake_node.hpp"

using namespace nf;

namespace {

// argv for a subcommand (its own arguments only, as main passes them).
struct argv_list {
  std::vector<std::string> storage;
  std::vector<char*> ptrs;
  explicit argv_list(std::vector<std::string> args) : storage(std::move(args)) {
    for (auto& s : storage)
      ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(storage.size()); }
  char** argv() { return ptrs.data(); }
};

struct outcome {
  int code = -1;
  std::string out;
  std::string err;
};

outcome run(const std::string& cmd, std::vector<std::string> args) {
  argv_list a{std::move(args)};
  std::ostringstream out, err;
  outcome o;
  o.code = cmd::run_client_command(cmd, a.argc(), a.argv(), out, err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos)
    return "";
  auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string temp_file(const std::string& content) {
  char name[] = "/tmp/nf_cli_testXXXXXX";
  int fd = mkstemp(name);
  CAF_REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(name) << content;
  return name;
}

struct fixture {
  test::fake_node node;
  std::string at = node.address();
};

std::optional<cmd::serve_config> serve(std::vector<std::string> args,
                                       std::vector<std::string>& errors) {
  argv_list a{std::move(args)};
  return cmd::load_serve_config(a.argc(), a.argv(), errors);
}

bool contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos)
    return true;
  CAF_MESSAGE("\"" << text << "\" does not contain \"" << part << "\"");
  return false;
}

} // namespace

CAF_TEST(serve reads defaults then the config file then flags) {
  auto file = temp_file("node.port = 4600\nengine.partitions = 8\nlog.level = \"warn\"\n");
  std::vector<std::string> errors;
  auto cfg = serve({"--dsn", "postgresql://x@h/db", "--config", file, "--engine.partitions", "32",
                    "--decider.batch_size=64", "--migrate"},
                   errors);
  std::remove(file.c_str());
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->dsn, "postgresql://x@h/db");
  CAF_CHECK_EQUAL(cfg->settings.get(config::keys::node_port), 4600);          // file
  CAF_CHECK_EQUAL(cfg->settings.get(config::keys::engine_partitions), 32);    // flag beats file
  CAF_CHECK_EQUAL(cfg->settings.get(config::keys::decider_batch_size), 64);   // --key=value
  CAF_CHECK_EQUAL(cfg->settings.get(config::keys::log_level), "warn");
  CAF_CHECK_EQUAL(cfg->settings.get(config::keys::lessor_max_batch), 256);    // default
  CAF_CHECK(cfg->migrate);
  errors.clear();
  cfg = serve({"--dsn", "d", "--port", "4700"}, errors);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->settings.get(config::keys::node_port), 4700);
}

CAF_TEST(serve names the key of every bad setting) {
  std::vector<std::string> errors;
  CAF_CHECK(!serve({"--dsn", "d", "--engine.partitions", "0", "--log.level", "loud"}, errors));
  CAF_REQUIRE_EQUAL(errors.size(), 2u);
  CAF_CHECK(contains(errors[0], "engine.partitions: expected a whole number from 1 to 1024"));
  CAF_CHECK(contains(errors[1], "log.level: expected trace, debug"));
  errors.clear();
  CAF_CHECK(!serve({"--dsn", "d", "--engine.partition", "4"}, errors));
  CAF_CHECK(contains(errors.at(0), "unknown option --engine.partition"));
  errors.clear();
  CAF_CHECK(!serve({"--dsn", "d", "--port", "70000"}, errors));
  CAF_CHECK(contains(errors.at(0), "node.port"));
  errors.clear();
  unsetenv("NODEFLOW_DSN");
  CAF_CHECK(!serve({}, errors));
  CAF_CHECK(contains(errors.at(0), "no database"));
  errors.clear();
  CAF_CHECK(!serve({"--dsn", "d", "--config", "/nonexistent/nodeflow.conf"}, errors));
  CAF_CHECK_EQUAL(errors.size(), 1u);
}

CAF_TEST(serve --help prints the usage and exits 0) {
  argv_list a{{"--help"}};
  CAF_CHECK_EQUAL(cmd::run_serve_command(a.argc(), a.argv()), 0);
}

CAF_TEST(serve refuses a node advertise address other nodes could not dial) {
  for (const char* bad : {"node1.example.com", "a b:4510", ":4510", "h:0", "h:70000", "h:45x"}) {
    std::vector<std::string> errors;
    CAF_CHECK(!serve({"--dsn", "d", "--node.advertise", bad}, errors));
    CAF_REQUIRE_EQUAL(errors.size(), 1u);
    CAF_CHECK(contains(errors[0], "node.advertise: expected HOST:PORT"));
  }
  std::vector<std::string> errors;
  CAF_CHECK(serve({"--dsn", "d", "--node.advertise", "node1.example.com:4510"}, errors));
  CAF_CHECK(serve({"--dsn", "d", "--node.advertise", "[::1]:4510"}, errors));
}

CAF_TEST_FIXTURE_SCOPE(client_commands, fixture)

CAF_TEST(usage errors exit 2 and send nothing) {
  std::vector<std::pair<std::string, std::vector<std::string>>> bad{
    {"start", {"--node", at}},
    {"start", {"order", "--version", "three", "--node", at}},
    {"start", {"order", "--priority", "100", "--node", at}},
    {"start", {"order", "--count", "5", "--key", "k", "--node", at}},
    {"get", {"a", "b", "--node", at}},
    {"get", {"a", "--verbose", "--node", at}},
    {"rerun", {"a", "--node", at}},
    {"signal", {"a", "--node", at}},
    {"search", {"--limit", "0", "--node", at}},
    {"deadletters", {"purge", "--node", at}},
    {"deadletters", {"replay", "x1", "--node", at}},
    {"defs", {"put", "--node", at}},
    {"defs", {"put", "/nonexistent.json", "--node", at}},
    {"status", {"--node", "nohost"}},
    {"status", {"--node", at, "--timeout", "0"}},
  };
  for (auto& [cmd, args] : bad) {
    auto o = run(cmd, args);
    CAF_CHECK_EQUAL(o.code, 2);
    CAF_CHECK(contains(o.err, "usage: nodeflow " + cmd));
  }
  CAF_CHECK_EQUAL(node.log().take(), std::vector<std::string>{});
}

CAF_TEST(start sends every flag and prints the id alone on the last line) {
  auto o = run("start", {"order", "--version", "3", "--input", R"({"id":7})", "--key", "k1",
                         "--correlation-id", "c1", "--priority", "9", "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK_EQUAL(node.log().take(),
                  std::vector<std::string>{R"(start order v3 input={"id":7} key=k1 corr=c1 prio=9)"});
  // The fake answers created=false for a key: the id still comes last, alone.
  CAF_CHECK_EQUAL(last_line(o.out), "01890000-0000-7000-8000-000000000001");
  o = run("start", {"order", "--count", "3", "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK_EQUAL(node.log().take().size(), 3u);
  CAF_CHECK_EQUAL(last_line(o.out), "01890000-0000-7000-8000-000000000001");
}

CAF_TEST(get prints a summary or the JSON and a failure exits 1) {
  auto o = run("get", {"01890000-0000-7000-8000-000000000001", "--json", "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, R"("output":null)"));
  o = run("get", {"01890000-0000-7000-8000-000000000001", "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, "status    RUNNING"));
  CAF_CHECK(contains(o.out, "output    null"));
  o = run("get", {test::missing_workflow, "--node", at});
  CAF_CHECK_EQUAL(o.code, 1);
  CAF_CHECK(contains(o.err, "nodeflow get: not found: workflow"));
}

CAF_TEST(operator commands signals and searches reach the node) {
  const std::string id = "01890000-0000-7000-8000-000000000001";
  CAF_CHECK_EQUAL(run("pause", {id, "--reason", "audit", "--node", at}).code, 0);
  CAF_CHECK_EQUAL(run("rerun", {id, "--task", "charge", "--iteration", "2", "--input", "{}",
                                "--node", at}).code, 0);
  CAF_CHECK_EQUAL(run("restart", {id, "--node", at}).code, 0);
  CAF_CHECK_EQUAL(run("signal", {id, "approved", "--payload", "true", "--node", at}).code, 0);
  CAF_CHECK_EQUAL(run("signal", {id, "nudge", "--node", at}).code, 0);
  auto s = run("search", {"--status", "RUNNING", "--name", "w", "--limit", "10", "--node", at});
  CAF_CHECK_EQUAL(s.code, 0);
  CAF_CHECK(contains(s.out, "next page: --cursor a"));
  CAF_CHECK_EQUAL(run("deadletters", {"list", "--after", "7", "--node", at}).code, 0);
  CAF_CHECK_EQUAL(run("deadletters", {"replay", "4", "5", "--node", at}).code, 0);
  std::vector<std::string> want{
    "pause " + id + " reason=audit task= iteration=0 input=",
    "rerun " + id + " reason= task=charge iteration=2 input={}",
    "restart " + id + " reason= task= iteration=0 input=",
    "signal " + id + " approved payload=true",
    "signal " + id + " nudge payload=null",
    "search status=RUNNING name=w limit=10 cursor=",
    "deadletters list after=7 ids=",
    "deadletters replay after=0 ids=4,5",
  };
  CAF_CHECK_EQUAL(node.log().take(), want);
}

CAF_TEST(schedules commands build the request and refuse bad usage) {
  CAF_CHECK_EQUAL(run("schedules", {"create", "nightly", "--cron", "0 30 2 * * *", "--workflow",
                                    "report", "--zone", "Europe/Berlin", "--input", R"({"a":1})",
                                    "--catch-up", "--node", at}).code,
                  0);
  CAF_CHECK_EQUAL(run("schedules", {"list", "--workflow", "report", "--node", at}).code, 0);
  CAF_CHECK_EQUAL(run("schedules", {"pause", "nightly", "--reason", "holiday", "--node", at}).code,
                  0);
  CAF_CHECK_EQUAL(run("schedules", {"next", "--cron", "@daily", "--count", "2", "--node", at}).code,
                  0);
  std::vector<std::string> want{
    R"(schedules save nightly {"name":"nightly","cronExpression":"0 30 2 * * *",)"
    R"("startWorkflowRequest":{"name":"report","input":{"a":1}},"paused":false,)"
    R"("runCatchupScheduleInstances":true,"zoneId":"Europe/Berlin"}  3)",
    "schedules list  report  3",
    "schedules pause nightly holiday  3",
    "schedules next  @daily  2",
  };
  CAF_CHECK_EQUAL(node.log().take(), want);
  for (std::vector<std::string> bad : {
         std::vector<std::string>{"create", "nightly", "--workflow", "report"},
         std::vector<std::string>{"create", "nightly", "--cron", "@daily", "--workflow", "r",
                                  "--input", "[1]"},
         std::vector<std::string>{"get"},
         std::vector<std::string>{"list", "extra"},
         std::vector<std::string>{"resume", "nightly", "--reason", "x"},
         std::vector<std::string>{"next"},
         std::vector<std::string>{"explode", "nightly"}}) {
    bad.push_back("--node");
    bad.push_back(at);
    auto o = run("schedules", bad);
    CAF_CHECK_EQUAL(o.code, 2);
    CAF_CHECK(contains(o.err, "usage: nodeflow schedules"));
  }
  CAF_CHECK_EQUAL(node.log().take(), std::vector<std::string>{});
}

CAF_TEST(events follow until the workflow ends) {
  const std::string id = "01890000-0000-7000-8000-000000000001";
  auto o = run("events", {id, "--follow", "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, "WORKFLOW_STARTED"));
  CAF_CHECK(contains(o.out, "WORKFLOW_COMPLETED"));
  CAF_CHECK_EQUAL(node.log().take(),
                  std::vector<std::string>{"events " + id + " after=0 wait=20000"});
  o = run("events", {id, "--after", "1", "--json", "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, R"({"seq":1,"at":1000,"type":"WORKFLOW_STARTED")"));
}

CAF_TEST(defs put checks every file before sending any) {
  auto good = temp_file(R"({"name":"send_email","retryCount":2})");
  auto bad = temp_file(R"({"name":"w","version":1,"tasks":[]})");
  auto o = run("defs", {"put", good, bad, "--node", at});
  CAF_CHECK_EQUAL(o.code, 1);
  CAF_CHECK(contains(o.err, "nothing registered"));
  CAF_CHECK(contains(o.err, bad + ": tasks"));
  CAF_CHECK_EQUAL(node.log().take(), std::vector<std::string>{});
  o = run("defs", {"put", good, "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, "task definition t (revision 2)"));
  CAF_CHECK_EQUAL(node.log().take(),
                  std::vector<std::string>{R"(register {"name":"send_email","retryCount":2})"});
  // Several files go in one request, so the node commits them together or not at all.
  auto more = temp_file(R"([{"name":"w","version":1,"tasks":[
    {"name":"send_email","taskReferenceName":"e"}]}])");
  o = run("defs", {"put", good, more, "--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, good + ": task definition t (revision 2)"));
  CAF_CHECK(contains(o.out, more + ": workflow definition w (version 1)"));
  CAF_CHECK_EQUAL(node.log().take(),
                  std::vector<std::string>{
                    R"(register [{"name":"send_email","retryCount":2},)"
                    R"({"name":"w","version":1,"tasks":[{"name":"send_email","taskReferenceName":"e"}]}])"});
  std::remove(good.c_str());
  std::remove(bad.c_str());
  std::remove(more.c_str());
}

CAF_TEST(status shows node partitions and queues) {
  auto o = run("status", {"--node", at});
  CAF_CHECK_EQUAL(o.code, 0);
  CAF_CHECK(contains(o.out, "partitions"));
  CAF_CHECK(contains(o.out, "q"));
  o = run("status", {"--json", "--node", at});
  CAF_CHECK(contains(o.out, R"("queues":[{"name":"q","ready":3,"leased":1}])"));
}

CAF_TEST(an unreachable node exits 1 with a clear error) {
  std::string gone;
  {
    test::fake_node other;
    gone = other.address();
  }
  auto o = run("status", {"--node", gone, "--timeout", "500"});
  CAF_CHECK_EQUAL(o.code, 1);
  CAF_CHECK(contains(o.err, "nodeflow status: unavailable: cannot reach node " + gone));
}

CAF_TEST_FIXTURE_SCOPE_END()
