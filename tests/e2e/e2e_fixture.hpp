#pragma once

// The end-to-end fixture: a fresh migrated database, a real `nodeflow serve`
// process on a port of its own (same port across restarts, so clients
// reconnect), workers through the client library (`worker_pool`) or as
// `nodeflow worker` processes, and SQL to check what the history says.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "caf/test/unit_test.hpp"

#include "net/client/client.hpp"
#include "store/pg/connection.hpp"
#include "proto/errors.hpp"
#include "tests/e2e/process.hpp"
#include "tests/support/test_database.hpp"

namespace nf::test {

using settings_list = std::vector<std::pair<std::string, std::string>>;

/// A port nothing listens on right now (support/free_port.hpp).
uint16_t free_port();

/// What a worker does with one leased task.
struct task_outcome {
  enum kind_t { complete, fail, fail_terminal, abandon } kind = complete;
  std::string output_json = "{}";
  std::string reason;

  static task_outcome completed(std::string out) { return {complete, std::move(out), {}}; }
  static task_outcome failed(std::string why) { return {fail, "{}", std::move(why)}; }
  static task_outcome abandoned() { return {abandon, {}, {}}; }
};

using task_handler = std::function<task_outcome(const msg::leased_task&)>;

/// Worker threads over the client library: each long-polls its queue (queues
/// taken round robin), runs the handler and reports the result, retrying a
/// report the node did not answer (a restart) with the same lease token.
class worker_pool {
public:
  worker_pool(client_options opts, std::vector<std::string> queues, int threads,
              task_handler handler, int max_tasks_per_poll = 1);
  ~worker_pool();

  void stop();
  /// Reports the node answered with an error other than unavailable, e.g. `lease lost`.
  int64_t rejected() const { return rejected_; }
  int64_t reported() const { return reported_; }
  /// Calls `f` for every report the node accepted, in acceptance order:
  /// (task, outcome kind). Called under the pool's lock.
  void on_accepted(std::function<void(const msg::leased_task&, task_outcome::kind_t)> f);
  /// Called under the pool's lock for every leased task before its handler runs.
  void on_leased(std::function<void(const msg::leased_task&)> f);

private:
  void loop(size_t first);

  client client_;
  std::vector<std::string> queues_;
  task_handler handler_;
  int max_tasks_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> rejected_{0};
  std::atomic<int64_t> reported_{0};
  std::mutex mx_;
  std::function<void(const msg::leased_task&, task_outcome::kind_t)> accepted_cb_;
  std::function<void(const msg::leased_task&)> leased_cb_;
  std::vector<std::thread> threads_;
};

/// Output = input: the `nodeflow worker --behavior echo` of the in-test workers.
task_handler echo_handler();

/// A key's roles, least first: each may do what the ones before it may.
inline const std::vector<std::string> roles{"reader", "worker", "operator", "admin"};

/// A role's place in `roles` (-1 for none).
inline int rank_of(const std::string& role) {
  for (size_t i = 0; i < roles.size(); ++i)
    if (roles[i] == role)
      return static_cast<int>(i);
  return -1;
}

/// A `nodeflow` command run to its end: exit code, stdout lines, stderr's tail.
struct cli_run {
  int exit_code = -1;
  std::vector<std::string> lines;
  std::string log;
};

struct e2e_fixture {
  test_database db;
  store::connection conn;
  std::string dir; ///< scratch: config, logs
  uint16_t port;
  uint16_t http_port = 0; ///< the node's HTTP port (a free one, read from its `http` line)
  std::string config_path;
  std::string node_log;
  std::unique_ptr<child_process> node;
  std::vector<std::unique_ptr<child_process>> worker_processes;
  std::unique_ptr<client> api;

  /// `settings` go to the scratch config on top of the suites' fast defaults.
  explicit e2e_fixture(const std::string& suite, const settings_list& settings = {});
  ~e2e_fixture();

  client_options client_opts(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  /// Starts `nodeflow serve` and waits for its `listening` line (aborts the test without).
  void start_node(const settings_list& flags = {});
  /// kill -9 of the node; returns once it is gone.
  void kill_node();
  /// SIGTERM; true when it exited 0.
  bool stop_node();

  /// `nodeflow ARGS...` to its end (30 s at most), its stderr in a log of its own.
  cli_run run_cli(std::vector<std::string> args);
  /// `nodeflow ARGS` through the shell (ARGS quoted as the shell needs), `input` on its stdin;
  /// its exit code, its stdout and stderr in `out`.
  int run_shell(const std::string& args, const std::string& input, std::string& out);
  /// `nodeflow keys create --role ROLE EXTRA...` against the test database: the key id and
  /// secret of its last line (aborts the test on an error).
  std::pair<std::string, std::string> create_key(const std::string& role,
                                                 std::vector<std::string> extra = {});

  /// Makes `api`, and every client made from client_opts() from then on, log in with `key`
  /// (from create_key), for a node that checks credentials.
  void use_key(const std::pair<std::string, std::string>& key);

  /// `nodeflow worker ARGS... --node 127.0.0.1:PORT`, its output in a log of its own.
  child_process& start_worker_process(std::vector<std::string> args);

  /// Registers definitions through the client (aborts the test on an error).
  void define(const std::string& json_text);
  /// Starts a workflow; returns its id (aborts the test on an error).
  std::string start(const std::string& name, const std::string& input_json = "{}",
                    const std::string& key = {});
  /// The execution as JSON through the client (null on an error).
  boost::json::value get(const std::string& workflow_id);
  /// Polls until the workflow reaches a terminal status; its status, or "" after `patience`.
  std::string await_end(const std::string& workflow_id,
                        std::chrono::milliseconds patience = std::chrono::seconds(60));
  /// Polls `count_sql` until it answers `want`; false after `patience`.
  bool await_count(const std::string& count_sql, int64_t want,
                   std::chrono::milliseconds patience = std::chrono::seconds(60));
  /// Polls until `pred` holds; false after `patience`.
  bool await(const std::function<bool()>& pred,
             std::chrono::milliseconds patience = std::chrono::seconds(60));

  store::result sql(const std::string& text, const store::params& p = {});
  std::string scalar(const std::string& text, const store::params& p = {});
  int64_t count(const std::string& text, const store::params& p = {});

  /// The address ("Nodes"."address") that holds each partition's live lease.
  std::map<int, std::string> partition_owners();

  /// Every row of every table of the database, as text, one row a line (for "this value is
  /// stored nowhere" checks).
  std::string every_row();

  /// Workflows whose history has a gap, a repeat or does not start at 1.
  int64_t workflows_with_history_gaps();
  /// The node's log (tail), for failure messages.
  std::string node_log_tail() const { return tail_of(node_log); }
  /// The node log's warning and error lines, in order.
  std::vector<std::string> node_log_complaints() const;

private:
  settings_list extra_settings_;
  int worker_count_ = 0;
  int cli_runs_ = 0;
  std::pair<std::string, std::string> key_; ///< use_key's; empty = no login
};

} // namespace nf::test
