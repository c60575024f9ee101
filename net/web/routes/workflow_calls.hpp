#pragma once

// What the workflow routes share: checking a workflow id, reading an execution, and sending
// an operator command with Conductor's statuses. One route file per topic (starts and reads,
// lookups by name or correlation id, bulk commands) builds on these.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/json.hpp>
#include <caf/error.hpp>

#include "net/web/exchange.hpp"
#include "net/web/gateway.hpp"
#include "net/web/router.hpp"
#include "net/web/scope.hpp"
#include "proto/messages.hpp"

namespace nf::net::web {

/// An error answered on the exchange as it is.
inline auto fail_with(const exchange_ptr& ex) {
  return [ex](caf::error& e) { ex->fail(e); };
}

/// A workflow id is a UUID; anything else is answered 400 naming `field`.
bool check_id(const exchange_ptr& ex, const std::string& id, const char* field = "workflowId");

/// The execution read back (with its tasks when `with_tasks`), parsed: `ok(execution)`, or
/// `err(error)` (not found, unavailable, …) or 500 when the text is not an object.
template <class Ok, class Err>
void read_execution_or(gateway* api, const exchange_ptr& ex, const std::string& id,
                       bool with_tasks, Ok ok, Err err) {
  msg::workflow_query q;
  q.workflow_id = id;
  q.include_tasks = with_tasks;
  api->ask<std::string>(
    [ex, ok](std::string& text) mutable {
      boost::json::error_code ec;
      auto v = boost::json::parse(text, ec);
      if (ec || !v.is_object()) {
        ex->fail(500, "the execution read back is not a JSON object");
        return;
      }
      ok(v.as_object());
    },
    std::move(err), get_atom_v, scoped(ex, std::move(q)));
}

/// The execution with its tasks: `ok(execution)` or the error answered.
template <class Ok>
void read_execution(gateway* api, const exchange_ptr& ex, const std::string& id, Ok ok) {
  read_execution_or(api, ex, id, true, std::move(ok), fail_with(ex));
}

/// Waits for a workflow's next history events on its long poll: each wait() answers
/// `next()` once events newer than those seen came, or the wait (at most `max_wait_ms`,
/// never past `deadline`) ran out. A failed wait is answered on the exchange.
class history_wait : public std::enable_shared_from_this<history_wait> {
public:
  history_wait(gateway* api, exchange_ptr ex, std::string id)
    : api_(api), ex_(std::move(ex)), id_(std::move(id)) {}
  void wait(std::chrono::steady_clock::time_point deadline, int64_t max_wait_ms,
            std::function<void()> next);

private:
  gateway* api_;
  exchange_ptr ex_;
  std::string id_;
  int64_t after_seq_ = 0;
};

/// Reads the execution until `done(execution)` holds or `deadline` passes, waiting between
/// reads on the history's long poll (events requests of at most `max_wait_ms`), then
/// `answer(execution)`.
void wait_for(gateway* api, const exchange_ptr& ex, const std::string& id,
              std::chrono::steady_clock::time_point deadline, int64_t max_wait_ms,
              std::function<bool(const boost::json::object&)> done,
              std::function<void(const boost::json::object&)> answer);

/// COMPLETED, FAILED, TIMED_OUT or TERMINATED.
bool is_ended(const boost::json::object& wf);
/// RUNNING or PAUSED.
bool is_live(const boost::json::object& wf);

msg::workflow_command command_of(const char* op, const std::string& id,
                                 std::string reason = {});

/// Sends an operator command: `ok()` once it is applied, or `refused(status, message)` with
/// Conductor's status: 409 for a state change the workflow's status does not allow (the
/// engine's `invalid`), the error's own status otherwise.
void send_command(gateway* api, const exchange_ptr& ex, msg::workflow_command c,
                  std::function<void()> ok,
                  std::function<void(unsigned, const std::string&)> refused);

/// send_command with X-Request-Id attached and a refusal answered on the exchange.
void command(gateway* api, const exchange_ptr& ex, msg::workflow_command c,
             std::function<void()> done);

/// The query parameters Conductor's clients send with a terminate, a restart or a retry,
/// each honoured or refused (400 naming it); false when refused.
bool terminate_params_ok(const exchange_ptr& ex);
bool restart_params_ok(const exchange_ptr& ex);
bool retry_params_ok(const exchange_ptr& ex);
/// archiveWorkflow, which a removal honours as false only (Conductor's default is true).
bool remove_params_ok(const exchange_ptr& ex);
param_doc remove_param_doc();

void empty_answer(const exchange_ptr& ex, unsigned status);

} // namespace nf::net::web
