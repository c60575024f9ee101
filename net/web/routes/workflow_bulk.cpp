// Conductor's bulk commands: pause, resume, restart, retry, terminate or remove many
// workflows in one request. Each id gets the same command its single route sends, and the
// answer lists which were applied and why the others were refused (Conductor's BulkResponse).

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "net/web/routes/fan_out.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "proto/limits.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// Conductor's own bound on one bulk request.
constexpr size_t max_bulk = 1000;
constexpr size_t commands_in_flight = 16;
// A command's request id is the request's X-Request-Id, a slash and the workflow id.
constexpr size_t uuid_suffix = 37;

struct bulk_result {
  std::mutex m;
  json::object errors;
  json::array applied;
};

std::optional<std::vector<std::string>> read_ids(const exchange_ptr& ex, const json_limits& lim) {
  auto body = read_json_body(ex, lim);
  if (!body)
    return std::nullopt;
  if (!body->is_array()) {
    ex->fail(400, "body: expected an array of workflow ids", "body");
    return std::nullopt;
  }
  const auto& arr = body->as_array();
  if (arr.size() > max_bulk) {
    ex->fail(400, "body: cannot process more than " + std::to_string(max_bulk)
                    + " workflows in one request, got " + std::to_string(arr.size())
                    + ": send several",
             "body");
    return std::nullopt;
  }
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) {
      auto at = "body[" + std::to_string(i) + "]";
      ex->fail(400, at + ": expected a workflow id (a string)", at);
      return std::nullopt;
    }
    std::string id{arr[i].as_string()};
    if (seen.insert(id).second)
      ids.push_back(std::move(id));
  }
  return ids;
}

// Sends `make(id)` for every id of the body and answers the BulkResponse.
void bulk(gateway* api, const exchange_ptr& ex, const json_limits& lim,
          std::function<msg::workflow_command(const std::string&)> make) {
  auto request_id = ex->header("x-request-id");
  if (request_id.size() + uuid_suffix > max_key_bytes) {
    ex->fail(400, "X-Request-Id: expected at most " + std::to_string(max_key_bytes - uuid_suffix)
                    + " bytes for a bulk request, got " + std::to_string(request_id.size()),
             "X-Request-Id");
    return;
  }
  auto ids = read_ids(ex, lim);
  if (!ids)
    return;
  auto result = std::make_shared<bulk_result>();
  auto shared_ids = std::make_shared<std::vector<std::string>>(std::move(*ids));
  fan_out::run(
    shared_ids->size(), commands_in_flight,
    [api, ex, make, result, shared_ids, request_id](size_t i, std::function<void()> next) {
      const auto& id = (*shared_ids)[i];
      auto refuse = [result, id, next](unsigned, const std::string& message) {
        {
          std::lock_guard<std::mutex> guard{result->m};
          result->errors[id] = message;
        }
        next();
      };
      if (!flow::is_uuid(id))
        return refuse(400, "expected a workflow id (UUID), got \"" + id + "\"");
      auto c = make(id);
      if (!request_id.empty())
        c.request_id = request_id + "/" + id;
      send_command(
        api, ex, std::move(c),
        [result, id, next] {
          {
            std::lock_guard<std::mutex> guard{result->m};
            result->applied.push_back(json::string{id});
          }
          next();
        },
        refuse);
    },
    [ex, result] {
      ex->respond_json(200, json::object{{"bulkErrorResults", std::move(result->errors)},
                                         {"bulkSuccessfulResults", std::move(result->applied)}});
    });
}

const char* const bulk_answer =
  "BulkResponse: {\"bulkSuccessfulResults\": [workflowId], \"bulkErrorResults\": "
  "{\"<workflowId>\": why it was refused}}";
const char* const bulk_body = "[workflowId] (at most 1000; each id once)";

} // namespace

void add_workflow_bulk_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  for (const char* op : {"pause", "resume"}) {
    r.add({verb::put, std::string{"/api/workflow/bulk/"} + op,
           std::string{std::string{op} == "pause" ? "Pause" : "Resume"}
             + " many workflows (X-Request-Id: a retry is applied once per workflow)",
           {}, body_kind::json, bulk_body, bulk_answer, "workflow", access::operator_,
           [api, lim, op](const exchange_ptr& ex) {
             bulk(api, ex, lim, [op](const std::string& id) { return command_of(op, id); });
           }});
  }
  r.add({verb::post, "/api/workflow/bulk/terminate",
         "Terminate many workflows (X-Request-Id: a retry is applied once per workflow)",
         {{"reason", "why (recorded as each one's reasonForIncompletion)", false},
          {"triggerFailureWorkflow", "false only: a terminated workflow starts no failure workflow",
           false, "boolean"}},
         body_kind::json, bulk_body, bulk_answer, "workflow", access::operator_,
         [api, lim](const exchange_ptr& ex) {
           if (!terminate_params_ok(ex))
             return;
           const auto* r = ex->query("reason");
           std::string reason = r ? *r : std::string{};
           bulk(api, ex, lim, [reason](const std::string& id) {
             return command_of("terminate", id, reason);
           });
         }});
  r.add({verb::post, "/api/workflow/bulk/restart",
         "Run many ended workflows again from the start (X-Request-Id: a retry is applied once "
         "per workflow)",
         {{"useLatestDefinitions", "false only: a restart runs the version it started with",
           false, "boolean"}},
         body_kind::json, bulk_body, bulk_answer, "workflow", access::operator_,
         [api, lim](const exchange_ptr& ex) {
           if (!restart_params_ok(ex))
             return;
           bulk(api, ex, lim, [](const std::string& id) { return command_of("restart", id); });
         }});
  r.add({verb::post, "/api/workflow/bulk/delete",
         "Remove many ended workflows for good, each as DELETE /api/workflow/{id}/remove does "
         "(X-Request-Id: a retry is answered as the first per workflow)",
         {remove_param_doc()}, body_kind::json, bulk_body, bulk_answer, "workflow",
         access::admin, [api, lim](const exchange_ptr& ex) {
           if (!remove_params_ok(ex))
             return;
           bulk(api, ex, lim, [](const std::string& id) { return command_of("remove", id); });
         }});
  r.add({verb::post, "/api/workflow/bulk/retry",
         "Retry the failed tasks of many ended workflows (X-Request-Id: a retry is applied once "
         "per workflow)",
         {{"resumeSubworkflowTasks", "false only", false, "boolean"}}, body_kind::json, bulk_body,
         bulk_answer, "workflow", access::operator_, [api, lim](const exchange_ptr& ex) {
           if (!retry_params_ok(ex))
             return;
           bulk(api, ex, lim, [](const std::string& id) { return command_of("retry", id); });
         }});
}

} // namespace nf::net::web
