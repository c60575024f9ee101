// Completing or failing a WAIT or HUMAN task by its workflow and reference name, as
// Conductor's updateTask by ref does: answered with the task's id, or (/sync) with the
// workflow as the update left it.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <boost/json.hpp>

#include "flow/loop_frame.hpp"
#include "net/web/conductor_shapes.hpp"
#include "net/web/errors.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/task_ref_update.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// How long a /sync update waits for the decider to apply it before answering anyway.
constexpr std::chrono::seconds sync_wait{10};

// Conductor names a loop's task "ref__<iteration>" (conductor_ref): the reference name and
// iteration such a name stands for, or nullopt when it has no such suffix.
std::optional<std::pair<std::string, int64_t>> loop_name(const std::string& ref) {
  auto split = flow::split_iteration_suffix(ref);
  if (!split || split->first.empty() || split->second < 1)
    return std::nullopt;
  return std::pair{std::string{split->first}, int64_t{split->second}};
}

template <class Done>
void send_update(gateway* api, const exchange_ptr& ex, msg::task_ref_update u, Done done,
                 bool loop_fallback);

// `u.task_ref` was not found and names a loop's iteration ("wait__2"): the update goes to
// the task of that reference name when that iteration is the latest one it has.
template <class Done>
void update_loop_task(gateway* api, const exchange_ptr& ex, msg::task_ref_update u, Done done,
                      caf::error not_found) {
  auto name = *loop_name(u.task_ref);
  read_execution(api, ex, u.workflow_id, [api, ex, u, done, name, not_found](
                                             const json::object& wf) mutable {
    int64_t latest = -1;
    if (const auto* tasks = wf.if_contains("tasks"); tasks && tasks->is_array())
      for (const auto& t : tasks->as_array())
        if (const auto* o = t.if_object(); o && o->if_contains("referenceTaskName")
                                             && o->at("referenceTaskName") == name.first.c_str())
          latest = std::max(latest, o->at("iteration").to_number<int64_t>());
    if (latest < 0 || latest < name.second)
      return ex->fail(not_found);
    if (latest != name.second) {
      ex->fail(409, "taskRefName: " + u.task_ref + " is iteration " + std::to_string(name.second)
                      + " of " + name.first + ", whose latest is iteration "
                      + std::to_string(latest) + ": only that one can be updated",
               "taskRefName");
      return;
    }
    u.task_ref = name.first;
    send_update(api, ex, std::move(u), std::move(done), false);
  });
}

template <class Done>
void send_update(gateway* api, const exchange_ptr& ex, msg::task_ref_update u, Done done,
                 bool loop_fallback) {
  auto retry = loop_fallback && loop_name(u.task_ref) ? std::optional{u} : std::nullopt;
  api->ask<std::string>(
    [done](std::string& text) mutable {
      json::error_code ec;
      auto v = json::parse(text, ec);
      const auto* o = ec ? nullptr : v.if_object();
      const auto* id = o ? o->if_contains("taskId") : nullptr;
      done(id != nullptr && id->is_string() ? std::string{id->get_string()} : text);
    },
    [api, ex, retry, done](caf::error& e) mutable {
      if (retry && status_of(e) == 404)
        return update_loop_task(api, ex, std::move(*retry), std::move(done), e);
      ex->fail(e);
    },
    task_ref_atom_v, scoped(ex, std::move(u)));
}

// Who reports an update by reference name: Python's older client sends its host name with
// every one.
param_doc worker_param() {
  return {"workerid",
          "who reports it: named in the history event that ends the task (workerId) and in "
          "its audit record",
          false};
}

// Sends the update the path, body and `workerid` name: `done(task id)` once it is applied, or
// the refusal answered.
template <class Done>
void update_by_ref(gateway* api, const exchange_ptr& ex, const json_limits& lim, Done done) {
  auto u = read_task_update(ex, lim, ex->param("status"));
  if (!u)
    return;
  u->workflow_id = ex->param("workflowId");
  u->task_ref = ex->param("taskRefName");
  if (const auto* worker = ex->query("workerid"))
    u->worker_id = *worker;
  send_update(api, ex, std::move(*u), std::move(done), true);
}

} // namespace

std::optional<msg::task_ref_update> read_task_update(const exchange_ptr& ex,
                                                     const json_limits& lim,
                                                     const std::string& status) {
  auto body = read_json_body(ex, lim, json::value(json::object{}));
  if (!body)
    return std::nullopt;
  if (!body->is_object()) {
    ex->fail(400, "body: expected the task's output as a JSON object", "body");
    return std::nullopt;
  }
  msg::task_ref_update u;
  u.status = status;
  u.output_json = json::serialize(*body);
  if (!with_request_id(ex, u))
    return std::nullopt;
  return u;
}

void send_task_ref_update(gateway* api, const exchange_ptr& ex, msg::task_ref_update u,
                          std::function<void(const std::string&)> done) {
  send_update(api, ex, std::move(u), std::move(done), true);
}

void add_task_ref_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::post, "/api/tasks/{workflowId}/{taskRefName}/{status}",
         "Complete or fail a WAIT or HUMAN task by its reference name (X-Request-Id: a retry "
         "is applied once and answers the same task)", {worker_param()}, body_kind::json,
         "the task's output (a JSON object; empty body = {})", "the task's id, as text",
         "task", access::worker, [api, lim](const exchange_ptr& ex) {
           update_by_ref(api, ex, lim,
                         [ex](const std::string& task_id) { ex->respond_text(200, task_id); });
         }});
  r.add({verb::post, "/api/tasks/{workflowId}/{taskRefName}/{status}/sync",
         "Complete or fail a WAIT or HUMAN task by its reference name and answer the workflow "
         "(X-Request-Id: a retry is applied once)",
         {worker_param()}, body_kind::json,
         "the task's output (a JSON object; empty body = {})",
         "Workflow, with its tasks, once the task shows its new status (at most 10 s later)",
         "task", access::worker, [api, lim, max_wait = ctx.max_poll_timeout_ms](const exchange_ptr& ex) {
           if (!check_id(ex, ex->param("workflowId")))
             return;
           // The update is applied by the workflow's decider after it commits: the answer
           // waits (at most sync_wait) until the task shows its new status.
           update_by_ref(api, ex, lim, [api, ex, max_wait](const std::string& task_id) {
             wait_for(
               api, ex, ex->param("workflowId"), std::chrono::steady_clock::now() + sync_wait,
               max_wait,
               [task_id](const json::object& wf) {
                 const auto* t = find_task(wf, task_id);
                 const auto* st = t ? t->if_contains("status") : nullptr;
                 return st == nullptr || !st->is_string()
                        || (st->as_string() != "SCHEDULED" && st->as_string() != "IN_PROGRESS");
               },
               [ex](const json::object& wf) { ex->respond_json(200, workflow_shape(wf, true)); });
           });
         }});
}

} // namespace nf::net::web
