#include "net/web/routes/workflow_calls.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "flow/uuid.hpp"
#include "net/web/errors.hpp"
#include "net/web/json_body.hpp"
#include "proto/errors.hpp"

namespace nf::net::web {

namespace json = boost::json;

bool check_id(const exchange_ptr& ex, const std::string& id, const char* field) {
  if (flow::is_uuid(id))
    return true;
  ex->fail(400, std::string{field} + ": expected a workflow id (UUID), got \"" + id + "\"", field);
  return false;
}

namespace {

bool status_in(const json::object& wf, std::initializer_list<const char*> statuses) {
  const auto* s = wf.if_contains("status");
  if (s == nullptr || !s->is_string())
    return false;
  for (const char* want : statuses)
    if (s->as_string() == want)
      return true;
  return false;
}

struct workflow_wait : std::enable_shared_from_this<workflow_wait> {
  gateway* api;
  exchange_ptr ex;
  std::string id;
  std::chrono::steady_clock::time_point deadline;
  int64_t max_wait_ms;
  std::function<bool(const json::object&)> done;
  std::function<void(const json::object&)> answer;
  std::shared_ptr<history_wait> history;

  void check() {
    auto self = shared_from_this();
    read_execution(api, ex, id, [self](const json::object& wf) {
      if (self->done(wf) || std::chrono::steady_clock::now() >= self->deadline)
        return self->answer(wf);
      self->history->wait(self->deadline, self->max_wait_ms, [self] { self->check(); });
    });
  }
};

} // namespace

void wait_for(gateway* api, const exchange_ptr& ex, const std::string& id,
              std::chrono::steady_clock::time_point deadline, int64_t max_wait_ms,
              std::function<bool(const json::object&)> done,
              std::function<void(const json::object&)> answer) {
  auto w = std::make_shared<workflow_wait>();
  w->api = api;
  w->ex = ex;
  w->id = id;
  w->deadline = deadline;
  w->max_wait_ms = max_wait_ms;
  w->done = std::move(done);
  w->answer = std::move(answer);
  w->history = std::make_shared<history_wait>(api, ex, id);
  w->check();
}

void history_wait::wait(std::chrono::steady_clock::time_point deadline, int64_t max_wait_ms,
                        std::function<void()> next) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
    deadline - std::chrono::steady_clock::now());
  int64_t ms = std::clamp<int64_t>(left.count(), 1, std::max<int64_t>(1, max_wait_ms));
  msg::events_request req;
  req.workflow_id = id_;
  req.after_seq = after_seq_;
  req.limit = 1000;
  req.wait_ms = ms;
  auto self = shared_from_this();
  api_->ask_for<std::vector<msg::event_view>>(
    std::chrono::milliseconds{ms} + api_->timeout(),
    [self, next](std::vector<msg::event_view>& evs) {
      if (!evs.empty())
        self->after_seq_ = evs.back().seq;
      next();
    },
    fail_with(ex_), events_atom_v, scoped(ex_, req));
}

bool is_ended(const json::object& wf) {
  return status_in(wf, {"COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"});
}

bool is_live(const json::object& wf) {
  return status_in(wf, {"RUNNING", "PAUSED"});
}

msg::workflow_command command_of(const char* op, const std::string& id, std::string reason) {
  msg::workflow_command c;
  c.op = op;
  c.workflow_id = id;
  c.reason = std::move(reason);
  return c;
}

// Conductor answers a refused state change (pausing an ended workflow, retrying a running
// one) with 409; nodeflow's engine says `invalid` once the request itself passed its checks.
void send_command(gateway* api, const exchange_ptr& ex, msg::workflow_command c,
                  std::function<void()> ok,
                  std::function<void(unsigned, const std::string&)> refused) {
  api->ask<std::string>([ok](std::string&) { ok(); },
                        [refused](caf::error& e) {
                          auto status = status_of(e);
                          refused(status == 400 ? 409 : status, nf::message_of(e));
                        },
                        command_atom_v, scoped(ex, std::move(c)));
}

void command(gateway* api, const exchange_ptr& ex, msg::workflow_command c,
             std::function<void()> done) {
  if (!with_request_id(ex, c))
    return;
  send_command(api, ex, std::move(c), std::move(done),
               [ex](unsigned status, const std::string& message) { ex->fail(status, message); });
}

bool terminate_params_ok(const exchange_ptr& ex) {
  // Refused rather than ignored when it asks for a start.
  if (const auto* trigger = ex->query("triggerFailureWorkflow");
      trigger != nullptr && *trigger != "false") {
    ex->fail(400,
             "triggerFailureWorkflow: nodeflow starts a workflow's failureWorkflow when it "
             "fails or times out, not when it is terminated; leave it out or false",
             "triggerFailureWorkflow");
    return false;
  }
  return true;
}

bool remove_params_ok(const exchange_ptr& ex) {
  auto archive = query_bool(ex, "archiveWorkflow", true);
  if (!archive)
    return false;
  if (*archive) {
    ex->fail(400,
             "archiveWorkflow: nodeflow keeps no archive beside its tables, so a removal "
             "deletes the workflow and its history for good; send archiveWorkflow=false",
             "archiveWorkflow");
    return false;
  }
  return true;
}

param_doc remove_param_doc() {
  return {"archiveWorkflow",
          "false only (Conductor's default is true): nodeflow keeps no archive beside its tables",
          false, "boolean"};
}

namespace {

// A boolean parameter nodeflow honours only as false: true is refused with `why`.
bool false_only(const exchange_ptr& ex, const char* name, const char* why) {
  auto value = query_bool(ex, name, false);
  if (!value)
    return false;
  if (*value) {
    ex->fail(400, std::string{name} + ": not supported; " + why, name);
    return false;
  }
  return true;
}

} // namespace

bool restart_params_ok(const exchange_ptr& ex) {
  return false_only(ex, "useLatestDefinitions",
                    "a restart runs the version the workflow started with");
}

bool retry_params_ok(const exchange_ptr& ex) {
  return false_only(ex, "resumeSubworkflowTasks",
                    "a retry schedules the failed SUB_WORKFLOW task again");
}

void empty_answer(const exchange_ptr& ex, unsigned status) {
  ex->respond(response{status, "text/plain", {}, {}});
}

} // namespace nf::net::web
