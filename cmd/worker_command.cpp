#include "cmd/worker_command.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cmd/cli_args.hpp"
#include "net/client/client.hpp"
#include "proto/domains.hpp"
#include "proto/errors.hpp"

namespace nf::cmd {

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_stop_signal(int) {
  stop_requested = true;
}

enum class behavior { echo, fail_first_attempt, sleep };

struct worker_config {
  std::vector<std::string> queues;
  behavior kind = behavior::echo;
  int64_t sleep_ms = 0;
  int concurrency = 1;
  int64_t max_tasks = 0; // 0 = no limit
  std::string worker_id;
  std::string domain;  ///< the task domain polled (taskToDomain); empty = none
  client_options node;
};

struct counters {
  // With --max-tasks: slots taken by polls in flight and by tasks taken; a
  // poll that comes back empty gives its slot back.
  std::atomic<int64_t> reserved{0};
  std::atomic<int64_t> completed{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> lost{0};
  std::atomic<bool> fatal{false};
};

const char* usage_text =
  "usage: nodeflow worker --queue NAME [--queue NAME]... [--behavior echo|fail-first-attempt|"
  "sleep=MS]\n"
  "                       [--concurrency N] [--max-tasks N] [--worker-id ID] [--node HOST:PORT]\n"
  "                       [--namespace NAME] [--domain NAME]\n"
  "  logs in with the API key in $NODEFLOW_KEY_ID and $NODEFLOW_KEY_SECRET when both are set\n";

std::optional<int64_t> number(const std::string& s, int64_t lo, int64_t hi) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  auto v = std::stoll(s);
  if (v < lo || v > hi)
    return std::nullopt;
  return v;
}

std::optional<worker_config> read_config(int argc, char** argv, std::string& error) {
  auto args = parse_args(argc, argv, 0,
                         {"queue", "behavior", "concurrency", "max-tasks", "worker-id", "node",
                          "namespace", "domain"},
                         {},
                         error);
  if (!args)
    return std::nullopt;
  if (!args->positional.empty()) {
    error = "unexpected argument " + args->positional.front();
    return std::nullopt;
  }
  worker_config c;
  c.queues = args->all("queue");
  if (c.queues.empty()) {
    error = "--queue NAME is required (repeat it for several queues)";
    return std::nullopt;
  }
  auto b = args->value("behavior").value_or("echo");
  if (b == "echo") {
    c.kind = behavior::echo;
  } else if (b == "fail-first-attempt") {
    c.kind = behavior::fail_first_attempt;
  } else if (b.rfind("sleep=", 0) == 0 && number(b.substr(6), 0, 3600000)) {
    c.kind = behavior::sleep;
    c.sleep_ms = *number(b.substr(6), 0, 3600000);
  } else {
    error = "--behavior: expected echo, fail-first-attempt or sleep=MS (MS 0 … 3600000), got \""
            + b + "\"";
    return std::nullopt;
  }
  auto conc = number(args->value("concurrency").value_or("1"), 1, 1024);
  if (!conc) {
    error = "--concurrency: expected an integer 1 … 1024";
    return std::nullopt;
  }
  c.concurrency = static_cast<int>(*conc);
  auto max = number(args->value("max-tasks").value_or("0"), 0, 1000000000);
  if (!max) {
    error = "--max-tasks: expected an integer 0 … 1000000000 (0 = no limit)";
    return std::nullopt;
  }
  c.max_tasks = *max;
  c.domain = args->value("domain").value_or("");
  if (!c.domain.empty() && !valid_domain(c.domain)) {
    error = "--domain: expected 1-128 of A-Z a-z 0-9 _ -, got \"" + c.domain + "\"";
    return std::nullopt;
  }
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  c.worker_id = args->value("worker-id")
                  .value_or(std::string{host} + "-" + std::to_string(getpid()));
  std::string address = "127.0.0.1:4510";
  if (const char* env = std::getenv("NODEFLOW_NODE"); env != nullptr && *env != '\0')
    address = env;
  auto node = parse_node_address(args->value("node").value_or(address));
  if (!node) {
    error = "--node: " + describe(node.error());
    return std::nullopt;
  }
  c.node = *node;
  if (const char* env = std::getenv("NODEFLOW_NAMESPACE"); env != nullptr && *env != '\0')
    c.node.namespace_name = env;
  if (auto ns = args->value("namespace"))
    c.node.namespace_name = *ns;
  key_from_environment(c.node);
  return c;
}

// Whether a report refused with `e` may be sent again: `unavailable` (the link lost, a
// restarted node that does not own the workflow's partition yet) and what a node answers
// when it could not apply it now (its database link broken, a transaction to run again, a
// commit it could not confirm).
bool worth_resending(const caf::error& e) {
  if (is_unavailable(e))
    return true;
  if (!nf::is_nodeflow_error(e))
    return false;
  auto code = nf::code_of(e);
  return code == nf::errc::conn_broken || code == nf::errc::retry_tx
         || code == nf::errc::in_doubt;
}

// Sends a report until it is taken or refused for good (worth_resending), at most until the
// lease runs out by the worker's clock: the lease token fences every send, so a report that
// committed before its answer was lost is refused `lease lost` then, never applied twice.
template <class Send>
caf::expected<std::string> report(Send send, const msg::leased_task& t) {
  auto pause = std::chrono::milliseconds{200};
  for (;;) {
    auto r = send();
    auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    if (r || !worth_resending(r.error()) || stop_requested
        || now_ms + pause.count() >= t.lease_expires_at_ms)
      return r;
    spdlog::info("task_report_retry task={} workflow={} in_ms={} error=\"{}\"", t.task_id,
                 t.workflow_id, pause.count(), describe(r.error()));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds{5000});
  }
}

// Runs one task per the configured behavior and reports it.
void handle(client& c, const worker_config& cfg, const msg::leased_task& t, counters& n) {
  auto began = std::chrono::steady_clock::now();
  spdlog::info("task_started def={} task={} workflow={} ref={} attempt={}", t.task_def_name,
               t.task_id, t.workflow_id, t.ref, t.attempt);
  caf::expected<std::string> r{std::string{}};
  const char* result = "COMPLETED";
  if (cfg.kind == behavior::fail_first_attempt && t.attempt == 0) {
    result = "FAILED";
    r = report([&] { return c.fail(t, "first attempt fails (worker --behavior fail-first-attempt)"); },
               t);
  } else {
    if (cfg.kind == behavior::sleep)
      std::this_thread::sleep_for(std::chrono::milliseconds{cfg.sleep_ms});
    r = report([&] { return c.complete(t, t.input_json.empty() ? "{}" : t.input_json); }, t);
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - began)
                .count();
  if (!r) {
    ++n.lost;
    spdlog::warn("task_report_failed def={} task={} workflow={} ref={} attempt={} error=\"{}\"",
                 t.task_def_name, t.task_id, t.workflow_id, t.ref, t.attempt, describe(r.error()));
    return;
  }
  (result[0] == 'C' ? n.completed : n.failed)++;
  spdlog::info("task_done def={} task={} workflow={} ref={} attempt={} result={} ms={}",
               t.task_def_name, t.task_id, t.workflow_id, t.ref, t.attempt, result, took);
}

// One of --concurrency loops: poll a queue (round robin), run, report.
void run_loop(client& c, const worker_config& cfg, counters& n, size_t first_queue) {
  // With several queues a short poll keeps one idle queue from delaying the others.
  int64_t poll_ms = cfg.queues.size() == 1 ? 5000 : 1000;
  size_t q = first_queue;
  while (!stop_requested && !n.fatal) {
    if (cfg.max_tasks > 0) {
      if (n.completed + n.failed + n.lost >= cfg.max_tasks)
        return;
      if (n.reserved.fetch_add(1) >= cfg.max_tasks) {
        // Every slot is held by another poll, which may still come back empty.
        --n.reserved;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
    }
    msg::poll_request req;
    req.queue = cfg.queues[q++ % cfg.queues.size()];
    req.worker_id = cfg.worker_id;
    req.domain = cfg.domain;
    req.max_tasks = 1;
    req.timeout_ms = poll_ms;
    auto tasks = c.poll(req);
    if (!tasks || tasks->empty()) {
      if (cfg.max_tasks > 0)
        --n.reserved;
      if (tasks)
        continue;
      if (!is_unavailable(tasks.error())) {
        spdlog::error("poll_rejected queue={} error=\"{}\"", req.queue, describe(tasks.error()));
        n.fatal = true;
        return;
      }
      spdlog::warn("poll_failed queue={} error=\"{}\"", req.queue, describe(tasks.error()));
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    for (const auto& t : *tasks)
      handle(c, cfg, t, n);
  }
}

} // namespace

int run_worker_command(int argc, char** argv) {
  std::string error;
  auto cfg = read_config(argc, argv, error);
  if (!cfg) {
    std::cerr << "nodeflow worker: " << error << "\n" << usage_text;
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("worker"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);

  client c{cfg->node};
  spdlog::info("worker_started node={}:{} queues={} concurrency={} max_tasks={} worker_id={}",
               cfg->node.host, cfg->node.port, cfg->queues.size(), cfg->concurrency,
               cfg->max_tasks, cfg->worker_id);
  counters n;
  std::vector<std::thread> threads;
  for (int i = 0; i < cfg->concurrency; ++i)
    threads.emplace_back([&, i] { run_loop(c, *cfg, n, static_cast<size_t>(i)); });
  for (auto& t : threads)
    t.join();
  std::cout << "worker: " << n.completed << " completed, " << n.failed << " failed, " << n.lost
            << " not accepted (lease lost or node unreachable)" << std::endl;
  return n.fatal ? 1 : 0;
}

} // namespace nf::cmd
