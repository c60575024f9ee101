// Conductor's signal: the task a workflow is blocked on (its first pending WAIT, or a running
// sub-workflow's: blocking.hpp) completed or failed without the caller naming it. The plain
// route answers once the update is accepted; /sync answers where the workflow waits next,
// shaped by returnStrategy.

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <boost/json.hpp>

#include "net/web/errors.hpp"
#include "net/web/routes/blocking.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/task_ref_update.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// How long a /sync signal waits for the workflow to block again or end before answering.
constexpr std::chrono::seconds sync_wait{10};

// Finds the workflow's blocking WAIT and sends it the update: `done(task id)`, or
// the refusal answered (400 for a bad status or body, 409 when nothing waits).
void signal(gateway* api, const exchange_ptr& ex, const json_limits& lim,
            std::function<void(const std::string&)> done) {
  const auto& id = ex->param("workflowId");
  if (!check_id(ex, id))
    return;
  const auto& status = ex->param("status");
  if (status != "COMPLETED" && status != "FAILED" && status != "FAILED_WITH_TERMINAL_ERROR") {
    ex->fail(400, "status: expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, got \""
                    + status + "\" (a WAIT task reports no progress)",
             "status");
    return;
  }
  auto update = read_task_update(ex, lim, status);
  if (!update)
    return;
  read_execution(api, ex, id, [api, ex, id, u = std::move(*update), done](
                                const json::object& wf) mutable {
    if (!is_live(wf)) {
      ex->fail(409, "workflow " + id + " is " + text_field(wf, "status")
                      + ": nothing in it waits for a signal");
      return;
    }
    find_blocking_wait(api, ex, wf, true, {}, [api, ex, id, u, done](
                                          std::optional<blocking_point> point) mutable {
      if (!point) {
        ex->fail(409, "workflow " + id + " has no pending WAIT task, nor has any of its "
                        "running sub-workflows: nothing waits for a signal");
        return;
      }
      u.workflow_id = text_field(point->workflow, "workflowId");
      u.task_ref = text_field(point->task, "referenceTaskName");
      auto task_id = text_field(point->task, "taskId");
      send_task_ref_update(api, ex, std::move(u),
                           [done, task_id](const std::string&) { done(task_id); });
    });
  });
}

} // namespace

void add_task_signal_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::post, "/api/tasks/{workflowId}/{status}/signal",
         "Complete or fail the WAIT task the workflow is blocked on (its first pending one, "
         "timed or not, or a running sub-workflow's) without naming it; answers once the "
         "update is accepted. X-Request-Id: a retry is never applied twice",
         {}, body_kind::json, "the task's output (a JSON object; empty body = {})",
         "200, empty; 409 when nothing in the workflow waits", "task", access::worker,
         [api, lim](const exchange_ptr& ex) {
           signal(api, ex, lim, [ex](const std::string&) { empty_answer(ex, 200); });
         }});
  r.add({verb::post, "/api/tasks/{workflowId}/{status}/signal/sync",
         "Complete or fail the WAIT task the workflow is blocked on, then answer once the "
         "workflow ends or blocks at another WAIT (at most 10 s later)",
         {{"returnStrategy",
           "TARGET_WORKFLOW (default: the workflow in the path), BLOCKING_WORKFLOW (the one "
           "holding the next blocking task, perhaps a sub-workflow), BLOCKING_TASK or "
           "BLOCKING_TASK_INPUT; with nothing blocking, the target workflow",
           false}},
         body_kind::json, "the task's output (a JSON object; empty body = {})",
         "SignalResponse: responseType, targetWorkflowId, targetWorkflowStatus and the workflow "
         "(Conductor's shape) or the blocking task",
         "task", access::worker,
         [api, lim, max_wait = ctx.max_poll_timeout_ms](const exchange_ptr& ex) {
           auto strategy = read_return_strategy(ex);
           if (!strategy)
             return;
           signal(api, ex, lim, [api, ex, max_wait, strategy = *strategy](
                                  const std::string& task_id) {
             wait_until_blocked(
               api, ex, ex->param("workflowId"), std::chrono::steady_clock::now() + sync_wait,
               max_wait, task_id, [](const json::object&) { return false; },
               [ex, strategy](const json::object& wf, const std::optional<blocking_point>& p) {
                 ex->respond_json(200, signal_response(strategy, wf, p));
               });
           });
         },
         true});
}

} // namespace nf::net::web
