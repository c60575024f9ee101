// Conductor's scheduler REST (Orkes' shapes): workflow schedules by name in the principal's
// namespace. Every route asks the api (schedules_atom), so the CAF clients and the CLI share
// the checks, the store work and the audit record (engine/schedules/schedules.hpp).
// Pause and resume answer both GET (Orkes) and PUT (OSS Conductor; the JS SDK tries PUT
// first and falls back to GET on 405).

#include <boost/json.hpp>

#include "net/web/json_body.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

void ask(gateway* api, const exchange_ptr& ex, msg::schedule_request r) {
  api->ask<std::string>(
    [ex](std::string& t) { ex->respond(response{200, "application/json", std::move(t), {}}); },
    [ex](caf::error& e) { ex->fail(e); }, schedules_atom_v, scoped(ex, std::move(r)));
}

msg::schedule_request op_on(const char* op, std::string name = {}) {
  msg::schedule_request r;
  r.op = op;
  r.name = std::move(name);
  return r;
}

const char* schedule_answer =
  "a WorkflowSchedule {name, cronExpression, zoneId, startWorkflowRequest, paused, "
  "pausedReason, runCatchupScheduleInstances, scheduleStartTime, scheduleEndTime, "
  "description, createdBy, updatedBy, createTime, updatedTime, nextRunTime, lastRunTime, "
  "lastWorkflowId}";

} // namespace

void add_scheduler_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::post, "/api/scheduler/schedules",
         "Create or replace a workflow schedule (admin)", {}, body_kind::json,
         "a SaveScheduleRequest {name, cronExpression (6 fields with seconds, or 5), zoneId "
         "(IANA, default UTC), startWorkflowRequest {name, version, input, correlationId, "
         "priority}, paused, runCatchupScheduleInstances, scheduleStartTime, scheduleEndTime "
         "(epoch ms), description, createdBy, updatedBy}",
         schedule_answer, "scheduler", access::admin, [api, lim](const exchange_ptr& ex) {
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto req = op_on("save");
           req.body = boost::json::serialize(*body);
           ask(api, ex, std::move(req));
         }});
  r.add({verb::get, "/api/scheduler/schedules",
         "Every schedule of the namespace, by name; those of one workflow with workflowName",
         {{"workflowName", "only the schedules starting this workflow"}}, body_kind::none, {},
         "an array of WorkflowSchedule", "scheduler", access::reader,
         [api](const exchange_ptr& ex) {
           auto req = op_on("list");
           if (const auto* w = ex->query("workflowName"))
             req.workflow_name = *w;
           ask(api, ex, std::move(req));
         }});
  r.add({verb::get, "/api/scheduler/schedules/{name}", "One schedule (404 when there is none)",
         {}, body_kind::none, {}, schedule_answer, "scheduler", access::reader,
         [api](const exchange_ptr& ex) { ask(api, ex, op_on("get", ex->param("name"))); }});
  r.add({verb::delete_, "/api/scheduler/schedules/{name}", "Delete a schedule (admin)", {},
         body_kind::none, {}, "{\"deleted\":name}", "scheduler", access::admin,
         [api](const exchange_ptr& ex) { ask(api, ex, op_on("delete", ex->param("name"))); }});
  for (auto method : {verb::get, verb::put}) {
    r.add({method, "/api/scheduler/schedules/{name}/pause",
           "Pause a schedule (admin): no tick starts until it is resumed",
           {{"reason", "recorded as pausedReason"}}, body_kind::none, {}, schedule_answer,
           "scheduler", access::admin, [api](const exchange_ptr& ex) {
             auto req = op_on("pause", ex->param("name"));
             if (const auto* reason = ex->query("reason"))
               req.reason = *reason;
             ask(api, ex, std::move(req));
           }});
    r.add({method, "/api/scheduler/schedules/{name}/resume",
           "Resume a schedule (admin): it runs from its next tick; ticks that fell due while "
           "it was paused do not start",
           {}, body_kind::none, {}, schedule_answer, "scheduler", access::admin,
           [api](const exchange_ptr& ex) { ask(api, ex, op_on("resume", ex->param("name"))); }});
  }
  r.add({verb::get, "/api/scheduler/nextFewSchedules",
         "The next times (epoch ms) of a cron expression",
         {{"cronExpression", "6 fields with seconds, or 5", true},
          {"scheduleStartTime", "epoch ms to count from (default now)", false, "integer"},
          {"scheduleEndTime", "epoch ms not to pass", false, "integer"},
          {"limit", "how many (1-100, default 3)", false, "integer"},
          {"zoneId", "IANA time zone (default UTC)"}},
         body_kind::none, {}, "an array of epoch milliseconds", "scheduler", access::reader,
         [api](const exchange_ptr& ex) {
           auto req = op_on("next");
           const auto* cron = ex->query("cronExpression");
           if (cron == nullptr || cron->empty()) {
             ex->fail(400, "cronExpression: missing required query parameter", "cronExpression");
             return;
           }
           req.cron_expression = *cron;
           if (const auto* z = ex->query("zoneId"))
             req.zone_id = *z;
           auto start = query_int(ex, "scheduleStartTime", 0, 0, INT64_MAX / 2);
           if (!start)
             return;
           auto end = query_int(ex, "scheduleEndTime", 0, 0, INT64_MAX / 2);
           if (!end)
             return;
           auto limit = query_int(ex, "limit", 3, 1, 100);
           if (!limit)
             return;
           req.start_ms = *start;
           req.end_ms = *end;
           req.limit = static_cast<int32_t>(*limit);
           ask(api, ex, std::move(req));
         }});
}

} // namespace nf::net::web
