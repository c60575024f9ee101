// Orkes Conductor's update of a workflow's state (POST /api/workflow/{workflowId}/state, the
// JS SDK's WorkflowExecutor.updateState): its variables set and a WAIT or HUMAN task ended,
// in one command the workflow's decider applies in one transaction, then answered as a
// synchronous execution is, where the workflow blocks next.

#include <optional>
#include <string>

#include <boost/json.hpp>

#include "net/web/routes/blocking.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// A field of TaskResult that nodeflow does not take is refused unless it holds its empty
// value: a worker's own fields, which an update of state has no use for.
bool empty_value(const json::value& v) {
  return v.is_null() || (v.is_string() && v.get_string().empty())
         || (v.is_array() && v.get_array().empty()) || (v.is_bool() && !v.get_bool())
         || (v.is_number() && v.to_number<double>() == 0);
}

// The TaskResult's part of the command; false with the 400 answered.
bool read_task_result(const exchange_ptr& ex, const json::object& result,
                      msg::workflow_command& c) {
  auto refuse = [&](const std::string& field, const std::string& why) {
    ex->fail(400, "taskResult." + field + ": " + why, "taskResult." + field);
    return false;
  };
  for (const auto& [key, v] : result) {
    std::string k{key};
    if (k == "status") {
      if (!v.is_string())
        return refuse(k, "expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR");
      c.task_status = std::string{v.get_string()};
      if (c.task_status == "IN_PROGRESS" || c.task_status == "SCHEDULED")
        return refuse(k, c.task_status + ": an update of state ends the task (COMPLETED, "
                                           "FAILED or FAILED_WITH_TERMINAL_ERROR)");
    } else if (k == "outputData") {
      if (v.is_null())
        continue;
      if (!v.is_object())
        return refuse(k, "expected a JSON object");
      c.output_json = json::serialize(v);
    } else if (k == "reasonForIncompletion") {
      if (v.is_null())
        continue;
      if (!v.is_string())
        return refuse(k, "expected text");
      c.reason = std::string{v.get_string()};
    } else if (k == "workflowInstanceId") {
      if (!v.is_null() && (!v.is_string() || v.get_string() != c.workflow_id))
        return refuse(k, "names another workflow than the path's " + c.workflow_id);
    } else if (k == "taskId") {
      if (v.is_null())
        continue;
      if (!v.is_string())
        return refuse(k, "expected the task's id");
      c.task_id = std::string{v.get_string()};
    } else if (k == "workerId" || k == "logs" || k == "callbackAfterSeconds"
               || k == "extendLease" || k == "externalOutputPayloadStoragePath"
               || k == "subWorkflowId") {
      if (!empty_value(v))
        return refuse(k, "not taken by an update of state, which ends a WAIT or HUMAN task "
                         "(a worker reports its own task with POST /api/tasks)");
    } else {
      return refuse(k, "not a TaskResult field nodeflow takes (status, outputData, "
                       "reasonForIncompletion, workflowInstanceId, taskId)");
    }
  }
  if (c.task_status.empty())
    return refuse("status", "expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR");
  return true;
}

// WorkflowStateUpdate as a "state" command; nullopt with the 400 answered.
std::optional<msg::workflow_command> read_state_update(const exchange_ptr& ex,
                                                        const std::string& id,
                                                        const json::object& body) {
  auto c = command_of("state", id);
  const json::object* result = nullptr;
  for (const auto& [key, v] : body) {
    std::string k{key};
    if (v.is_null())
      continue;
    if (k == "variables") {
      if (!v.is_object()) {
        ex->fail(400, "variables: expected a JSON object", "variables");
        return std::nullopt;
      }
      c.input_json = json::serialize(v);
    } else if (k == "taskReferenceName") {
      if (!v.is_string() || v.get_string().empty()) {
        ex->fail(400, "taskReferenceName: expected the task's reference name",
                 "taskReferenceName");
        return std::nullopt;
      }
      c.task_ref = std::string{v.get_string()};
    } else if (k == "taskResult") {
      if (!v.is_object()) {
        ex->fail(400, "taskResult: expected a TaskResult (a JSON object)", "taskResult");
        return std::nullopt;
      }
      result = &v.get_object();
    } else {
      ex->fail(400, k + ": not a WorkflowStateUpdate field (taskReferenceName, taskResult, "
                        "variables)",
               k);
      return std::nullopt;
    }
  }
  if ((result == nullptr) != c.task_ref.empty()) {
    auto missing = result == nullptr ? "taskResult" : "taskReferenceName";
    ex->fail(400, std::string{missing} + ": taskReferenceName and taskResult name and end "
                                         "the task together",
             missing);
    return std::nullopt;
  }
  if (result == nullptr && c.input_json.empty()) {
    ex->fail(400, "body: nothing to update: give variables, or a taskReferenceName and its "
                  "taskResult",
             "body");
    return std::nullopt;
  }
  if (result != nullptr && !read_task_result(ex, *result, c))
    return std::nullopt;
  return c;
}

} // namespace

void add_workflow_state_route(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::post, "/api/workflow/{workflowId}/state",
         "Update a RUNNING or PAUSED workflow's state in one transaction: set variables and "
         "end a WAIT or HUMAN task by its reference name, then answer where the workflow "
         "blocks next (X-Request-Id: a retry is applied once)",
         sync_answer_params(),
         body_kind::json,
         "WorkflowStateUpdate: variables (an object), taskReferenceName and taskResult "
         "(status COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, outputData, "
         "reasonForIncompletion; taskId and workflowInstanceId, when given, must match)",
         "SignalResponse with the Workflow (WorkflowRun's fields): once it ends, blocks at a "
         "WAIT, schedules a task of waitUntilTaskRef or waitForSeconds pass (409 when the "
         "workflow or the task is not in a state to update; nothing is then written)",
         "workflow", access::operator_,
         [api, lim, max_wait = ctx.max_poll_timeout_ms](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto wait = read_sync_answer(ex);
           if (!wait)
             return;
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto c = read_state_update(ex, id, *body);
           if (!c)
             return;
           command(api, ex, std::move(*c), [api, ex, id, wait = std::move(*wait), max_wait] {
             answer_when_blocked(api, ex, id, wait, max_wait, return_strategy::target_workflow);
           });
         },
         true});
}

} // namespace nf::net::web
