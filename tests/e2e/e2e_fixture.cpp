#include "tests/e2e/e2e_fixture.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/free_port.hpp"

namespace nf::test {

namespace {

// An end-to-end test runs for tens of seconds (ctest's TIMEOUT bounds the suite); the
// test engine's default per-test watchdog of 30 s would abort it. Set before main()
// reads it as the default of `-r`, which still overrides.
[[maybe_unused]] const bool e2e_watchdog_set = [] {
  caf::test::engine::max_runtime(200);
  return true;
}();

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Short poll intervals and leases so a suite sees recovery within seconds; the
// relay's backoff is short so a failing sink is retried quickly.
const settings_list fast_defaults{
  {"decider.poll_interval_ms", "200"},     {"lessor.poll_interval_ms", "200"},
  {"timer.poll_interval_ms", "200"},       {"relay.poll_interval_ms", "200"},
  {"relay.base_backoff_ms", "50"},         {"relay.max_backoff_ms", "400"},
  {"membership.heartbeat_ms", "250"},      {"membership.lease_ms", "2000"},
  {"system_tasks.poll_timeout_ms", "1000"}, {"log.level", "info"},
};

bool is_terminal(const std::string& s) {
  return s == "COMPLETED" || s == "FAILED" || s == "TERMINATED" || s == "TIMED_OUT";
}

} // namespace

uint16_t free_port() {
  return free_loopback_port();
}

// -- worker_pool ---------------------------------------------------------------

worker_pool::worker_pool(client_options opts, std::vector<std::string> queues, int threads,
                         task_handler handler, int max_tasks_per_poll)
  : client_(std::move(opts)),
    queues_(std::move(queues)),
    handler_(std::move(handler)),
    max_tasks_(max_tasks_per_poll) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this, i] { loop(static_cast<size_t>(i)); });
}

worker_pool::~worker_pool() {
  stop();
}

void worker_pool::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable())
      t.join();
}

void worker_pool::on_accepted(std::function<void(const msg::leased_task&, task_outcome::kind_t)> f) {
  std::lock_guard<std::mutex> g{mx_};
  accepted_cb_ = std::move(f);
}

void worker_pool::on_leased(std::function<void(const msg::leased_task&)> f) {
  std::lock_guard<std::mutex> g{mx_};
  leased_cb_ = std::move(f);
}

void worker_pool::loop(size_t first) {
  size_t q = first % queues_.size();
  while (!stop_) {
    msg::poll_request req;
    req.queue = queues_[q];
    q = (q + 1) % queues_.size();
    req.worker_id = "e2e-" + std::to_string(first);
    req.max_tasks = max_tasks_;
    req.timeout_ms = queues_.size() == 1 ? 1000 : 200;
    auto got = client_.poll(req);
    if (!got) {
      std::this_thread::sleep_for(50ms); // node away (restart): poll again shortly
      continue;
    }
    for (const auto& t : *got) {
      {
        std::lock_guard<std::mutex> g{mx_};
        if (leased_cb_)
          leased_cb_(t);
      }
      auto outcome = handler_(t);
      if (outcome.kind == task_outcome::abandon)
        continue;
      msg::task_result r;
      r.task_id = t.task_id;
      r.workflow_id = t.workflow_id;
      r.lease_token = t.lease_token;
      r.status = outcome.kind == task_outcome::complete ? "COMPLETED"
                 : outcome.kind == task_outcome::fail   ? "FAILED"
                                                        : "FAILED_WITH_TERMINAL_ERROR";
      r.output_json = outcome.output_json;
      r.reason = outcome.reason;
      // A report the node did not answer is sent again with the same token: the
      // fence makes a duplicate harmless (I5). Gives up only when stopping.
      for (;;) {
        auto rep = client_.report(r);
        if (rep) {
          ++reported_;
          std::lock_guard<std::mutex> g{mx_};
          if (accepted_cb_)
            accepted_cb_(t, outcome.kind);
          break;
        }
        if (!is_unavailable(rep.error())) {
          ++rejected_;
          break;
        }
        if (stop_)
          break;
        std::this_thread::sleep_for(100ms);
      }
    }
  }
}

task_handler echo_handler() {
  return [](const msg::leased_task& t) {
    return task_outcome::completed(t.input_json.empty() ? "{}" : t.input_json);
  };
}

// -- e2e_fixture ---------------------------------------------------------------

e2e_fixture::e2e_fixture(const std::string& suite, const settings_list& settings)
  : db{suite}, conn{db.connect()}, port{free_port()}, extra_settings_{settings} {
  auto base = std::filesystem::temp_directory_path() / ("nodeflow-" + db.name() + "-XXXXXX");
  std::string tmpl = base.string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    CAF_FAIL("mkdtemp failed for " << tmpl);
  dir = tmpl;
  config_path = dir + "/node.conf";
  node_log = dir + "/node.log";
  std::ofstream cfg{config_path};
  cfg << "# scratch config of an end-to-end test\n";
  for (const auto& [k, v] : fast_defaults)
    cfg << k << " = \"" << v << "\"\n";
  for (const auto& [k, v] : settings)
    cfg << k << " = \"" << v << "\"\n";
}

e2e_fixture::~e2e_fixture() {
  // A failed check: show what the node logged before its scratch dir goes.
  if (auto* t = caf::test::engine::current_test(); t != nullptr && t->bad() > 0)
    std::cerr << "---- node log (tail) ----\n" << node_log_tail() << "\n----\n";
  api.reset();
  for (auto& w : worker_processes)
    w->stop(SIGKILL);
  if (node)
    node->stop(SIGKILL);
  worker_processes.clear();
  node.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

client_options e2e_fixture::client_opts(std::chrono::milliseconds timeout) const {
  client_options o;
  o.host = "127.0.0.1";
  o.port = port;
  o.timeout = timeout;
  o.min_backoff = 20ms;
  o.max_backoff = 500ms;
  o.key_id = key_.first;
  o.key_secret = key_.second;
  return o;
}

void e2e_fixture::start_node(const settings_list& flags) {
  if (node && node->running())
    CAF_FAIL("start_node: the node still runs");
  std::vector<std::string> argv{NF_NODEFLOW_BIN, "serve", "--dsn", db.dsn(), "--config",
                                config_path, "--port", std::to_string(port), "--http-port", "-1"};
  // The suites talk to the node on loopback without credentials; a suite that tries
  // authentication (http.auth) turns it on with auth.enabled.
  bool auth_given = false;
  for (const auto& [k, v] : flags)
    auth_given = auth_given || k == "auth" || k == "auth.enabled";
  if (!auth_given) {
    argv.push_back("--auth");
    argv.push_back("off");
  }
  for (const auto& [k, v] : flags) {
    argv.push_back("--" + k);
    argv.push_back(v);
  }
  { std::ofstream{node_log, std::ios::app} << "---- nodeflow serve starts\n"; }
  node = std::make_unique<child_process>(argv, node_log, true);
  if (auto http = node->wait_for_line("http ", 60s)) {
    auto colon = http->rfind(':');
    http_port = static_cast<uint16_t>(std::stoi(http->substr(colon + 1)));
  }
  auto line = node->wait_for_line("listening ", 60s);
  if (!line)
    CAF_FAIL("nodeflow serve did not print `listening HOST:PORT`; its log:\n" << node_log_tail());
  CAF_MESSAGE("node pid " << node->pid() << ": " << *line);
  if (!api)
    api = std::make_unique<client>(client_opts());
}

std::vector<std::string> e2e_fixture::node_log_complaints() const {
  std::ifstream in{node_log};
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if ((line.find(" warning [") != std::string::npos || line.find(" error [") != std::string::npos)
        && line.find("AUTH_OFF") == std::string::npos) // the fixture's own --auth off
      out.push_back(line);
  return out;
}

void e2e_fixture::kill_node() {
  if (!node)
    return;
  auto st = node->stop(SIGKILL);
  CAF_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  { std::ofstream{node_log, std::ios::app} << "---- nodeflow serve killed (SIGKILL)\n"; }
}

bool e2e_fixture::stop_node() {
  if (!node)
    return true;
  auto st = node->stop(SIGTERM);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

std::map<int, std::string> e2e_fixture::partition_owners() {
  auto r = sql(R"(SELECT l."partition", n."address" FROM "PartitionLeases" l
                    JOIN "Nodes" n ON n."id" = l."nodeId"
                   WHERE l."expiresAt" > now() AND n."stoppedAt" IS NULL)");
  std::map<int, std::string> out;
  for (int i = 0; i < r.rows(); ++i)
    out[static_cast<int>(r.i64(i, 0))] = r.str(i, 1);
  return out;
}

std::string e2e_fixture::every_row() {
  std::string rows;
  auto tables = sql(R"(SELECT format('%I', table_name) AS t FROM information_schema.tables
                        WHERE table_schema = 'public' AND table_type = 'BASE TABLE')");
  for (int i = 0; i < tables.rows(); ++i) {
    auto dump = sql("SELECT coalesce(string_agg(x::text, E'\\n'), '') AS rows FROM "
                    + tables.str(i, tables.column_named("t")) + " x");
    rows += dump.str(0, dump.column_named("rows")) + "\n";
  }
  return rows;
}

cli_run e2e_fixture::run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), NF_NODEFLOW_BIN);
  cli_run out;
  auto log = dir + "/cli" + std::to_string(++cli_runs_) + ".log";
  child_process p{args, log, true};
  while (auto line = p.wait_for_line("", std::chrono::seconds(30)))
    out.lines.push_back(*line);
  for (int i = 0; i < 300 && p.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (auto st = p.status(); st && WIFEXITED(*st))
    out.exit_code = WEXITSTATUS(*st);
  out.log = tail_of(log);
  return out;
}

int e2e_fixture::run_shell(const std::string& args, const std::string& input, std::string& out) {
  auto n = std::to_string(++cli_runs_);
  auto in_file = dir + "/shell-in" + n, out_file = dir + "/shell-out" + n;
  std::ofstream(in_file) << input;
  auto cmd = std::string{NF_NODEFLOW_BIN} + " " + args + " < " + in_file + " > " + out_file
             + " 2>&1";
  int status = std::system(cmd.c_str());
  std::remove(in_file.c_str());
  out = read_file(out_file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::pair<std::string, std::string> e2e_fixture::create_key(const std::string& role,
                                                            std::vector<std::string> extra) {
  std::vector<std::string> args{"keys", "create", "--dsn", db.dsn(), "--role", role};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_cli(args);
  if (r.exit_code != 0 || r.lines.empty())
    CAF_FAIL("nodeflow keys create exited " << r.exit_code << " printing " << r.lines.size()
                                             << " lines; its log:\n" << r.log);
  const auto& last = r.lines.back();
  auto id_at = last.find("keyId="), secret_at = last.find(" keySecret=");
  CAF_REQUIRE(id_at == 0 && secret_at != std::string::npos);
  auto id = last.substr(6, secret_at - 6);
  auto secret = last.substr(secret_at + 11);
  CAF_CHECK_EQUAL(secret.size(), 64u);
  return {id, secret};
}

void e2e_fixture::use_key(const std::pair<std::string, std::string>& key) {
  key_ = key;
  api = std::make_unique<client>(client_opts());
}

child_process& e2e_fixture::start_worker_process(std::vector<std::string> args) {
  std::vector<std::string> argv{NF_NODEFLOW_BIN, "worker"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--node");
  argv.push_back("127.0.0.1:" + std::to_string(port));
  auto log = dir + "/worker" + std::to_string(worker_count_++) + ".log";
  worker_processes.push_back(std::make_unique<child_process>(argv, log, false));
  return *worker_processes.back();
}

void e2e_fixture::define(const std::string& json_text) {
  auto r = api->register_definitions(json_text);
  if (!r)
    CAF_FAIL("register_definitions: " << describe(r.error()));
}

std::string e2e_fixture::start(const std::string& name, const std::string& input_json,
                               const std::string& key) {
  msg::start_request r;
  r.workflow_name = name;
  r.input_json = input_json;
  r.idempotency_key = key;
  auto got = api->start(r);
  if (!got)
    CAF_FAIL("start " << name << ": " << describe(got.error()));
  return got->workflow_id;
}

boost::json::value e2e_fixture::get(const std::string& workflow_id) {
  auto r = api->get(workflow_id, true);
  if (!r)
    return nullptr;
  boost::json::error_code ec;
  auto v = boost::json::parse(*r, ec);
  return ec ? boost::json::value{} : v;
}

std::string e2e_fixture::await_end(const std::string& workflow_id,
                                   std::chrono::milliseconds patience) {
  std::string status;
  await(
    [&] {
      status = scalar(R"(SELECT "status"::text FROM "WorkflowExecutions" WHERE "id" = $1)",
                      store::params::of(workflow_id));
      return is_terminal(status);
    },
    patience);
  if (!is_terminal(status)) {
    CAF_MESSAGE("workflow " << workflow_id << " still " << status << " after "
                            << patience.count() << " ms; node log:\n"
                            << node_log_tail());
    // The worker processes' side of it: what they took, reported and were answered.
    for (int i = 0; i < worker_count_; ++i)
      CAF_MESSAGE("worker " << i << " log:\n"
                            << tail_of(dir + "/worker" + std::to_string(i) + ".log", 4000));
    return "";
  }
  return status;
}

bool e2e_fixture::await_count(const std::string& count_sql, int64_t want,
                              std::chrono::milliseconds patience) {
  int64_t last = -1;
  bool ok = await([&] { return (last = count(count_sql)) == want; }, patience);
  if (!ok)
    CAF_MESSAGE("await_count: wanted " << want << ", last saw " << last << ": " << count_sql);
  return ok;
}

bool e2e_fixture::await(const std::function<bool()>& pred, std::chrono::milliseconds patience) {
  auto deadline = clock_type::now() + patience;
  for (;;) {
    if (pred())
      return true;
    if (clock_type::now() >= deadline)
      return false;
    std::this_thread::sleep_for(50ms);
  }
}

store::result e2e_fixture::sql(const std::string& text, const store::params& p) {
  auto r = conn.exec(text, p);
  if (!r)
    CAF_FAIL("sql failed: " << nf::message_of(r.error()) << "\n" << text);
  return std::move(*r);
}

std::string e2e_fixture::scalar(const std::string& text, const store::params& p) {
  auto r = sql(text, p);
  if (r.rows() != 1 || r.is_null(0, 0))
    return "";
  return r.str(0, 0);
}

int64_t e2e_fixture::count(const std::string& text, const store::params& p) {
  auto s = scalar(text, p);
  return s.empty() ? 0 : std::stoll(s);
}

int64_t e2e_fixture::workflows_with_history_gaps() {
  return count(R"(SELECT count(*) FROM (
      SELECT "workflowId" FROM "WorkflowEvents" GROUP BY "workflowId"
      HAVING min("seq") <> 1 OR max("seq") <> count(*) OR count(DISTINCT "seq") <> count(*)) g)");
}

} // namespace nf::test
