#pragma once

// The C++ client library: talks to any node's client protocol (client_api.hpp)
// over CAF's middleman. Each call blocks until the answer or its timeout and
// returns caf::expected<T>; `describe(err)` renders an error for people:
// `invalid: input: expected a JSON object, got an array`, `not found: workflow
// … not found`, `lease lost`, `unavailable: …`. The `*_async` forms take a
// callback instead, for workers that keep many requests in flight.
//
// The connection is made on the first call and remade after it is lost (node
// restarted, network): a call that finds no live connection re-resolves the
// node, with exponential backoff between failed attempts, within its own
// timeout. A request in flight when the connection drops fails at once with
// `unavailable` (it may or may not have been applied: completions are fenced
// by the lease token, starts by the idempotency key).
//
// Thread-safe: one client may be shared by many threads. Callbacks run on the
// client's internal threads: keep them short and never make a blocking call
// from one (use the async forms there).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "proto/messages.hpp"

namespace nf {

struct client_options {
  std::string host = "127.0.0.1";
  uint16_t port = 4510;
  /// Each call's timeout; a poll or an events wait adds its own wait to it.
  std::chrono::milliseconds timeout{30000};
  std::chrono::milliseconds min_backoff{50};   ///< first wait after a failed connect
  std::chrono::milliseconds max_backoff{2000}; ///< cap of the doubling wait
  /// The namespace every request acts in where it names none (empty = "default"). A node
  /// that checks credentials ignores it: a key acts in its own namespace.
  std::string namespace_name;
  /// The API key the client logs in with when it connects (`nodeflow keys create`; the
  /// commands read NODEFLOW_KEY_ID and NODEFLOW_KEY_SECRET). Empty: no login, for a node
  /// run with `--auth off`. The session's token is renewed before it ends.
  std::string key_id;
  std::string key_secret;
};

/// Takes the API key from NODEFLOW_KEY_ID and NODEFLOW_KEY_SECRET when both are set.
void key_from_environment(client_options& opts);

/// Reads `HOST:PORT` (e.g. from `--node` or NODEFLOW_NODE) into `opts`.
caf::expected<client_options> parse_node_address(const std::string& host_port,
                                                  client_options opts = {});

/// `invalid: …`, `not found: …`, `lease lost`, `unavailable: …`, …
std::string describe(const caf::error& err);

/// True for errors that say the node could not be reached or did not answer
/// (worth retrying later), false for answers (invalid input, not found, …).
bool is_unavailable(const caf::error& err);

class client {
public:
  explicit client(client_options opts = {});
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  const client_options& options() const;

  /// Connects now (calls connect on demand anyway): for a clear early error.
  caf::expected<void> connect();

  /// Task and/or workflow definitions (JSON object or array); answers JSON.
  caf::expected<std::string> register_definitions(const std::string& json_text);
  /// Lists, reads or deletes definitions (msg::definitions_query); answers JSON text.
  caf::expected<std::string> definitions(const msg::definitions_query& q);

  /// Starts, commands, signals and task updates carry a request id (msg::*::request_id): one
  /// left empty is filled with a fresh random id, kept when the client sends the request again
  /// after the node answered `unavailable` (twice at most), so the node applies it once. A
  /// caller retrying on its own passes its own id. A start with an idempotency key needs none.
  caf::expected<msg::start_reply> start(const msg::start_request& r);
  /// The execution as JSON (with its tasks unless `include_tasks` is false).
  caf::expected<std::string> get(const std::string& workflow_id, bool include_tasks = true);
  caf::expected<msg::search_page> search(const msg::search_request& r);

  caf::expected<std::string> pause(const std::string& workflow_id, const std::string& reason = {});
  caf::expected<std::string> resume(const std::string& workflow_id,
                                    const std::string& reason = {});
  caf::expected<std::string> terminate(const std::string& workflow_id,
                                       const std::string& reason = {});
  caf::expected<std::string> retry(const std::string& workflow_id, const std::string& reason = {});
  /// Reruns from (task_ref, iteration); `input_json` empty = the task's own input.
  caf::expected<std::string> rerun(const std::string& workflow_id, const std::string& task_ref,
                                   int32_t iteration = 0, const std::string& input_json = {});
  /// `input_json` empty = the original input.
  caf::expected<std::string> restart(const std::string& workflow_id,
                                     const std::string& input_json = {});
  caf::expected<std::string> command(const msg::workflow_command& c);

  caf::expected<std::string> signal(const std::string& workflow_id, const std::string& name,
                                    const std::string& payload_json = "null");
  /// With the caller's own request id (a fresh one when empty), to retry safely.
  caf::expected<std::string> signal(const msg::signal_request& r);

  /// Leases up to `max_tasks` tasks of a queue, waiting up to `timeout_ms` for work.
  caf::expected<std::vector<msg::leased_task>> poll(const msg::poll_request& r);
  /// Reports a leased task COMPLETED with `output_json` (a JSON object).
  caf::expected<std::string> complete(const msg::leased_task& t,
                                      const std::string& output_json = "{}");
  /// Reports a leased task FAILED (retried per its definition) or, with
  /// `terminal`, FAILED_WITH_TERMINAL_ERROR (never retried).
  caf::expected<std::string> fail(const msg::leased_task& t, const std::string& reason,
                                  bool terminal = false, const std::string& output_json = {});
  caf::expected<std::string> report(const msg::task_result& r);
  /// Each result's answer or error, in the order given.
  using report_answers = std::vector<caf::expected<std::string>>;
  /// Reports several leased tasks in one message each way (the tasks of a poll a worker
  /// finished together). Each result is applied as if reported alone and answered in its
  /// place (`lease lost`, `invalid: …` for that one alone). The call itself fails only as a
  /// whole: `unavailable`, or `invalid` for more results than one poll may lease.
  caf::expected<report_answers> report_batch(const std::vector<msg::task_result>& rs);
  /// Extends a lease; answers the new expiry (ms since the epoch).
  caf::expected<int64_t> heartbeat(const msg::leased_task& t);
  /// Gives the task back for `seconds` (1 … a year; Conductor's callbackAfterSeconds): the
  /// lease ends, and the task is queued again, as the same attempt, when they have passed.
  /// Answers that time (ms since the epoch).
  caf::expected<int64_t> postpone(const msg::leased_task& t, int64_t seconds);
  /// A running task's log lines and output so far (msg::task_progress).
  caf::expected<std::string> progress(const msg::task_progress& p);
  /// Completes a WAIT task by its reference name (msg::task_ref_update).
  caf::expected<std::string> update_task(const msg::task_ref_update& u);

  /// History after `after_seq`; with `wait_ms` > 0 waits for the next event.
  caf::expected<std::vector<msg::event_view>> events(const msg::events_request& r);
  /// Node, owned partitions and queue depths, as JSON.
  caf::expected<std::string> status();
  caf::expected<std::string> deadletters(const msg::deadletter_request& r);
  /// Creates, lists or removes namespaces (msg::namespace_request); answers JSON text.
  caf::expected<std::string> namespaces(const msg::namespace_request& r);
  /// The executions of a task definition, newest first (msg::task_history_query); JSON text.
  caf::expected<std::string> task_history(const msg::task_history_query& q);
  /// When each worker last polled each task type (msg::poll_data_query): Conductor's PollData
  /// list, JSON text. Another node's polls show within its 5 s write interval.
  caf::expected<std::string> poll_data(const msg::poll_data_query& q);
  /// Workflow schedules (msg::schedule_request) in the client's namespace; answers JSON text.
  caf::expected<std::string> schedules(const msg::schedule_request& r);

  template <class T>
  using callback = std::function<void(caf::expected<T>)>;

  void poll_async(const msg::poll_request& r, callback<std::vector<msg::leased_task>> cb);
  void report_async(const msg::task_result& r, callback<std::string> cb);
  void report_batch_async(const std::vector<msg::task_result>& rs, callback<report_answers> cb);
  void start_async(const msg::start_request& r, callback<msg::start_reply> cb);

  /// Requests in flight right now (blocking and async).
  size_t in_flight() const;

private:
  template <class Message>
  Message scoped(Message m) const;
  std::vector<msg::task_result> scoped_all(std::vector<msg::task_result> rs) const;
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace nf
