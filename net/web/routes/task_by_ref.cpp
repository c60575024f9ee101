// Completing or failing a WAIT or HUMAN task by its workflow and reference name, as
// Conductor's updateTask by ref does: answered with the task's id, or (/sync) with the
// workflow as the update left it.

#include <chrono>
#include <string>

#include <boost/json.hpp>

#include "net/web/conductor_shapes.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// How long a /sync update waits for the decider to apply it before answering anyway.
constexpr std::chrono::seconds sync_wait{10};

// Sends the update the path and body name: `done(task id)` once it is applied, or the
// refusal answered.
template <class Done>
void update_by_ref(gateway* api, const exchange_ptr& ex, const json_limits& lim, Done done) {
  auto body = read_json_body(ex, lim, json::value(json::object{}));
  if (!body)
    return;
  if (!body->is_object()) {
    ex->fail(400, "body: expected the task's output as a JSON object", "body");
    return;
  }
  msg::task_ref_update u;
  u.workflow_id = ex->param("workflowId");
  u.task_ref = ex->param("taskRefName");
  u.status = ex->param("status");
  u.output_json = json::serialize(*body);
  if (!with_request_id(ex, u))
    return;
  api->ask<std::string>(
    [done](std::string& text) mutable {
      json::error_code ec;
      auto v = json::parse(text, ec);
      const auto* o = ec ? nullptr : v.if_object();
      const auto* id = o ? o->if_contains("taskId") : nullptr;
      done(id != nullptr && id->is_string() ? std::string{id->get_string()} : text);
    },
    fail_with(ex), task_ref_atom_v, scoped(ex, std::move(u)));
}

} // namespace

void add_task_ref_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::post, "/api/tasks/{workflowId}/{taskRefName}/{status}",
         "Complete or fail a WAIT or HUMAN task by its reference name (X-Request-Id: a retry "
         "is applied once and answers the same task)", {}, body_kind::json,
         "the task's output (a JSON object; empty body = {})", "the task's id, as text",
         "task", access::worker, [api, lim](const exchange_ptr& ex) {
           update_by_ref(api, ex, lim,
                         [ex](const std::string& task_id) { ex->respond_text(200, task_id); });
         }});
  r.add({verb::post, "/api/tasks/{workflowId}/{taskRefName}/{status}/sync",
         "Complete or fail a WAIT or HUMAN task by its reference name and answer the workflow "
         "(X-Request-Id: a retry is applied once)",
         {{"workerid", "not supported: an update by reference name records no worker", false}},
         body_kind::json,
         "the task's output (a JSON object; empty body = {})",
         "Workflow, with its tasks, once the task shows its new status (at most 10 s later)",
         "task", access::worker, [api, lim, max_wait = ctx.max_poll_timeout_ms](const exchange_ptr& ex) {
           if (!check_id(ex, ex->param("workflowId")))
             return;
           if (ex->query("workerid") != nullptr) {
             ex->fail(400, "workerid: not supported; an update by reference name records no "
                           "worker (leave it out)",
                      "workerid");
             return;
           }
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
