// Conductor's workflow routes: start (by name, by StartWorkflowRequest, or start and wait),
// read in Conductor's Workflow shape, the operator commands, search, and nodeflow's signal.
// Every one goes through the client protocol, so a CAF client and HTTP share one engine path.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "net/web/conductor_shapes.hpp"
#include "net/web/errors.hpp"
#include "net/web/routes/blocking.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "net/web/routes/workflow_requests.hpp"
#include "proto/errors.hpp"
#include "proto/limits.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

namespace json = boost::json;

// Starts the workflow and calls `ok(id)` with the workflow the request stands for: the new
// one, or the one its idempotency key already named when the strategy allows that.
template <class Ok>
void start(gateway* api, const exchange_ptr& ex, start_spec spec, Ok ok) {
  if (!with_request_id(ex, spec.req))
    return;
  auto strategy = spec.strategy;
  auto key = spec.req.idempotency_key;
  api->ask<msg::start_reply>(
    [api, ex, strategy, key, ok](msg::start_reply& r) mutable {
      // Without a key, only a request id (X-Request-Id) makes a start idempotent: the same
      // request again is answered with the workflow it started.
      if (r.created || strategy == idempotency::return_existing || key.empty())
        return ok(r.workflow_id);
      auto conflict = [ex, key, id = r.workflow_id](const char* what) {
        ex->fail(409, "idempotencyKey: \"" + key + "\" already started workflow " + id + what,
                 "idempotencyKey");
      };
      if (strategy == idempotency::fail)
        return conflict("");
      // FAIL_ON_RUNNING: refused only while that workflow still runs; an ended one is
      // answered (its key stays its own: nodeflow never starts a second under one key).
      read_execution(api, ex, r.workflow_id, [ok, conflict, id = r.workflow_id](
                                                 const json::object& wf) mutable {
        if (is_live(wf))
          return conflict(", which is still running");
        ok(id);
      });
    },
    fail_with(ex), start_atom_v, scoped(ex, std::move(spec.req)));
}

// A SkipTaskRequest sent as the query parameter `skipTaskRequest`, as the Go client and the
// older Python client do: a JSON object, or either client's rendering of an empty request
// (Go's `%v` of its struct, Python's repr of its model). Anything else is nullopt: their
// renderings of a request with data cannot be read back.
std::optional<json::object> skip_request_in_query(const std::string& text) {
  if (text == "{map[] map[]}" || text == "{'task_input': None, 'task_output': None}")
    return json::object{};
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object())
    return std::nullopt;
  return std::move(v.as_object());
}

void add_start_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  // Conductor's path is /api/workflow/{name}; the segment shares the `workflowId` key of the
  // routes that read or terminate a workflow at the same path, since OpenAPI takes two
  // templates that differ only in a parameter's name for one path.
  r.add({verb::post, "/api/workflow/{workflowId}",
         "Start a workflow by the name of its definition (the path segment); answers its id. "
         "X-Request-Id (optional): the same request again starts nothing and answers the same id",
         {{"version", "the definition's version (absent: the latest)", false, "integer"},
          {"correlationId", "the caller's correlation id", false},
          {"priority", "0 … 99 (default 0)", false, "integer"}},
         body_kind::json, "the workflow's input (a JSON object; empty = {})",
         "the new workflow's id (text/plain)", "workflow", access::operator_,
         [api, lim](const exchange_ptr& ex) {
           auto body = read_json_body(ex, lim, json::value(json::object{}));
           if (!body)
             return;
           if (!body->is_object()) {
             ex->fail(400, "body: expected the workflow's input as a JSON object", "body");
             return;
           }
           auto version = query_int(ex, "version", 0, 1, INT32_MAX);
           if (!version)
             return;
           auto priority = query_int(ex, "priority", 0, 0, 99);
           if (!priority)
             return;
           start_spec spec;
           spec.req.workflow_name = ex->param("workflowId");
           spec.req.version = *version;
           spec.req.priority = static_cast<int32_t>(*priority);
           spec.req.input_json = json::serialize(*body);
           if (const auto* c = ex->query("correlationId")) {
             if (c->size() > max_key_bytes) {
               ex->fail(400, "correlationId: expected at most " + std::to_string(max_key_bytes)
                               + " bytes, got " + std::to_string(c->size()),
                        "correlationId");
               return;
             }
             spec.req.correlation_id = *c;
           }
           start(api, ex, std::move(spec),
                 [ex](const std::string& id) { ex->respond_text(200, id); });
         }});
  r.add({verb::post, "/api/workflow",
         "Start a workflow from Conductor's StartWorkflowRequest; answers its id. X-Request-Id "
         "(optional, without an idempotencyKey): the same request again answers the same id", {},
         body_kind::json,
         "StartWorkflowRequest: name, version, input, correlationId, priority, idempotencyKey, "
         "idempotencyStrategy (FAIL | RETURN_EXISTING | FAIL_ON_RUNNING); taskToDomain, "
         "workflowDef, externalInputPayloadStoragePath and createdBy must be null or empty",
         "the workflow's id (text/plain); 409 when the idempotency key's strategy refuses",
         "workflow", access::operator_, [api, lim](const exchange_ptr& ex) {
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto spec = read_start_request(ex, *body);
           if (!spec)
             return;
           start(api, ex, std::move(*spec),
                 [ex](const std::string& id) { ex->respond_text(200, id); });
         }});
  r.add({verb::post, "/api/workflow/execute/{name}/{version}",
         "Start a workflow and answer once it ends, blocks at a WAIT task that waits for a "
         "signal or an update (its own or a running sub-workflow's; a timed WAIT ends by "
         "itself and is waited out), schedules a task named by waitUntilTaskRef, or "
         "waitForSeconds pass",
         sync_answer_params(
           {{"consistency",
             "DURABLE (default) or SYNCHRONOUS: every start is committed to Postgres before it "
             "runs, so both are durable; REGION_DURABLE is refused (one database, no regions)",
             false},
            {"returnStrategy",
             "TARGET_WORKFLOW (default), BLOCKING_WORKFLOW, BLOCKING_TASK or "
             "BLOCKING_TASK_INPUT: what the answer holds when a WAIT blocks the workflow",
             false}}),
         body_kind::json,
         "StartWorkflowRequest (optional; its name and version, when given, must match the "
         "path)",
         "SignalResponse: responseType, targetWorkflowId, targetWorkflowStatus, requestId and "
         "the Workflow (Conductor's shape, with tasks) or the blocking task",
         "workflow", access::operator_,
         [api, lim, max_wait = ctx.max_poll_timeout_ms](const exchange_ptr& ex) {
           auto body = read_json_body(ex, lim, json::value(json::object{}));
           if (!body)
             return;
           if (!body->is_object()) {
             ex->fail(400, "body: expected a StartWorkflowRequest (a JSON object)", "body");
             return;
           }
           if (const auto* c = ex->query("consistency");
               c != nullptr && !c->empty() && *c != "DURABLE" && *c != "SYNCHRONOUS") {
             ex->fail(400, "consistency: expected DURABLE or SYNCHRONOUS (both are committed "
                           "to Postgres before the workflow runs), got \"" + *c + "\"",
                      "consistency");
             return;
           }
           auto strategy = read_return_strategy(ex);
           if (!strategy)
             return;
           auto wait = read_sync_answer(ex);
           if (!wait)
             return;
           const auto& text = ex->param("version");
           bool ok = !text.empty() && text.size() < 10
                     && std::all_of(text.begin(), text.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
           if (!ok || std::stoll(text) < 1) {
             ex->fail(400, "version: expected an integer >= 1, got \"" + text + "\"", "version");
             return;
           }
           auto spec = read_start_request(ex, body->as_object(), false);
           if (!spec)
             return;
           int64_t version = std::stoll(text);
           const auto& name = ex->param("name");
           if (!spec->req.workflow_name.empty() && spec->req.workflow_name != name) {
             ex->fail(400, "name: the body names \"" + spec->req.workflow_name
                             + "\", the path \"" + name + "\"",
                      "name");
             return;
           }
           if (spec->req.version != 0 && spec->req.version != version) {
             ex->fail(400, "version: the body names " + std::to_string(spec->req.version)
                             + ", the path " + text,
                      "version");
             return;
           }
           spec->req.workflow_name = name;
           spec->req.version = version;
           start(api, ex, std::move(*spec),
                 [api, ex, wait = std::move(*wait), max_wait,
                  strategy = *strategy](const std::string& id) {
                   answer_when_blocked(api, ex, id, wait, max_wait, strategy);
                 });
         },
         true});
}

void add_read_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  r.add({verb::get, "/api/workflow/{workflowId}", "One workflow in Conductor's shape",
         {{"includeTasks", "true (default) or false", false, "boolean"},
          {"summarize", "false only: inputs and outputs are shown whole", false, "boolean"}},
         body_kind::none, {},
         "Workflow: workflowId, workflowName, workflowVersion, correlationId, status, input, "
         "output, variables, reasonForIncompletion, createTime, startTime, endTime, updateTime, "
         "priority, taskToDomain, tasks[Task]",
         "workflow", access::reader, [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto include = query_bool(ex, "includeTasks", true);
           if (!include)
             return;
           auto summarize = query_bool(ex, "summarize", false);
           if (!summarize)
             return;
           if (*summarize) {
             ex->fail(400, "summarize=true: nodeflow shows a workflow's input and output whole "
                           "(leave it out or send false)",
                      "summarize");
             return;
           }
           read_execution(api, ex, id, [ex, include = *include](const json::object& wf) {
             ex->respond_json(200, workflow_shape(wf, include));
           });
         }});
  r.add({verb::get, "/api/workflow/search",
         "Workflows newest first, filtered, a page at a time (keyset paging by cursor)",
         {{"query",
           "clauses joined by AND: status = X, status IN (A,B), workflowType = X, "
           "correlationId = X, startTime > ms, startTime < ms (also >=, <=)",
           false},
          {"status", "one workflow status", false},
          {"workflowType", "the workflow's name", false},
          {"correlationId", "the correlation id", false},
          {"size", "at most this many (1 … 1000, default 100)", false, "integer"},
          {"cursor", "nextCursor of the previous page", false},
          {"start", "0 only: pages follow nextCursor, not offsets", false, "integer"},
          {"freeText", "* or empty only (no full-text search)", false},
          {"sort", "startTime:DESC only (the order of the keyset)", false},
          {"skipCache", "true or false: every search reads the database (nodeflow keeps no "
                        "search cache)", false, "boolean"}},
         body_kind::none, {},
         "{\"totalHits\": the results on this page, \"results\":[WorkflowSummary], "
         "\"nextCursor\": id | null (null on the last page)} — with several statuses a page "
         "may hold fewer than size results and still have a next one",
         "workflow", access::reader, [api](const exchange_ptr& ex) {
           auto size = read_search_page(ex, "startTime:DESC");
           if (!size || !query_bool(ex, "skipCache", false))
             return;
           auto spec = read_search(ex);
           if (!spec)
             return;
           spec->req.limit = *size;
           if (const auto* c = ex->query("cursor"))
             spec->req.cursor = *c;
           api->ask<msg::search_page>(
             [ex, statuses = spec->statuses](msg::search_page& page) {
               json::error_code ec;
               auto items = json::parse(page.items_json, ec);
               json::array results;
               if (!ec && items.is_array())
                 for (const auto& v : items.as_array()) {
                   if (!v.is_object())
                     continue;
                   const auto& o = v.as_object();
                   if (!statuses.empty()
                       && std::find(statuses.begin(), statuses.end(),
                                    o.at("status").as_string().c_str())
                            == statuses.end())
                     continue;
                   results.push_back(summary_shape(o));
                 }
               auto hits = static_cast<int64_t>(results.size());
               ex->respond_json(200,
                                json::object{{"totalHits", hits},
                                             {"results", std::move(results)},
                                             {"nextCursor", page.next_cursor.empty()
                                                              ? json::value(nullptr)
                                                              : json::value(page.next_cursor)}});
             },
             fail_with(ex), search_atom_v, scoped(ex, std::move(spec->req)));
         }});
  r.add({verb::get, "/api/workflow/counts",
         "Per status, how many executions match search's filters, each count stopping at a cap",
         {{"query", "as search's, without status clauses", false},
          {"workflowType", "the workflow's name", false},
          {"correlationId", "the correlation id", false}},
         body_kind::none, {},
         "{\"counts\":{\"RUNNING\":n,\"COMPLETED\":n,…every status},\"cap\":10000} — a "
         "count equal to cap means cap or more",
         "workflow", access::reader, [api](const exchange_ptr& ex) {
           if (ex->query("status") != nullptr) {
             ex->fail(400, "status: counts are per status already; filter by the others",
                      "status");
             return;
           }
           auto spec = read_search(ex);
           if (!spec)
             return;
           if (!spec->statuses.empty() || !spec->req.status.empty()) {
             ex->fail(400, "query: counts are per status already; leave status out of query",
                      "query");
             return;
           }
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 fail_with(ex), count_atom_v, scoped(ex, std::move(spec->req)));
         }});
}

void add_command_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  for (const char* op : {"pause", "resume"}) {
    bool pause = std::string{op} == "pause";
    r.add({verb::put, std::string{"/api/workflow/{workflowId}/"} + op,
           pause ? "Pause a running workflow (X-Request-Id: a retry is applied once)"
                 : "Resume a paused workflow (X-Request-Id: a retry is applied once)", {},
           body_kind::none, {}, "200, empty (409 when its status does not allow it)",
           "workflow", access::operator_, [api, op](const exchange_ptr& ex) {
             const auto& id = ex->param("workflowId");
             if (!check_id(ex, id))
               return;
             command(api, ex, command_of(op, id), [ex] { empty_answer(ex, 200); });
           }});
  }
  r.add({verb::put, "/api/workflow/decide/{workflowId}",
         "Evaluate a RUNNING workflow again now, as the decider would on its next event; "
         "nothing changes for a workflow in any other status", {}, body_kind::none, {},
         "200, empty (404 when no such workflow)", "workflow", access::operator_,
         [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           command(api, ex, command_of("decide", id), [ex] { empty_answer(ex, 200); });
         }});
  r.add({verb::post, "/api/workflow/{workflowId}/resetcallbacks",
         "Queue now every task of a running or paused workflow that waits out a delay: a "
         "worker's callbackAfterSeconds, a retry's delay or a start delay", {}, body_kind::none,
         {}, "204 (409 when the workflow has ended)", "workflow", access::operator_,
         [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           command(api, ex, command_of("resetcallbacks", id), [ex] { empty_answer(ex, 204); });
         }});
  r.add({verb::delete_, "/api/workflow/{workflowId}", "Terminate a workflow (X-Request-Id: a retry is applied once)",
         {{"reason", "why (recorded as its reasonForIncompletion)", false},
          {"triggerFailureWorkflow", "false only: a terminated workflow starts no failure workflow",
           false, "boolean"}},
         body_kind::none, {},
         "200, empty (409 when it already ended)", "workflow", access::operator_, [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           if (!terminate_params_ok(ex))
             return;
           const auto* reason = ex->query("reason");
           command(api, ex, command_of("terminate", id, reason ? *reason : std::string{}),
                   [ex] { empty_answer(ex, 200); });
         }});
  r.add({verb::delete_, "/api/workflow/{workflowId}/remove",
         "Remove an ended workflow for good: its execution, tasks, history and payloads; the "
         "audit record keeps who removed it (X-Request-Id: a retry is answered as the first)",
         {remove_param_doc()}, body_kind::none, {}, "200, empty (409 while it runs or is paused)",
         "workflow", access::admin, [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           if (!remove_params_ok(ex))
             return;
           command(api, ex, command_of("remove", id), [ex] { empty_answer(ex, 200); });
         }});
  r.add({verb::post, "/api/workflow/{workflowId}/restart",
         "Run an ended workflow again from the start, with the same id (X-Request-Id: a retry is "
         "applied once)",
         {{"useLatestDefinitions", "false only: a restart runs the version it started with",
           false, "boolean"}},
         body_kind::none, {}, "204 (409 when it still runs or is not restartable)", "workflow", access::operator_,
         [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           if (!restart_params_ok(ex))
             return;
           command(api, ex, command_of("restart", id), [ex] { empty_answer(ex, 204); });
         }});
  r.add({verb::post, "/api/workflow/{workflowId}/retry",
         "Retry the failed tasks of an ended workflow (X-Request-Id: a retry is applied once)",
         {{"resumeSubworkflowTasks", "false only", false, "boolean"}}, body_kind::none, {},
         "204 (409 when it still runs)", "workflow", access::operator_, [api](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           if (!retry_params_ok(ex))
             return;
           command(api, ex, command_of("retry", id), [ex] { empty_answer(ex, 204); });
         }});
  r.add({verb::post, "/api/workflow/{workflowId}/rerun",
         "Run an ended workflow again from one of its tasks (X-Request-Id: a retry is applied once)", {}, body_kind::json,
         "RerunWorkflowRequest: reRunFromTaskId (required), taskInput; reRunFromWorkflowId "
         "only this workflow's id; workflowInput and correlationId null or empty",
         "the workflow's id (text/plain)", "workflow", access::operator_, [api, lim](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto spec = read_rerun_request(ex, *body, id);
           if (!spec)
             return;
           // The engine reruns a task by its reference and iteration: find them by its id.
           read_execution(api, ex, id, [api, ex, id, spec = *spec](const json::object& wf) {
             const auto* t = find_task(wf, spec.task_id);
             if (t == nullptr) {
               ex->fail(404, "task " + spec.task_id + " not found in workflow " + id);
               return;
             }
             auto c = command_of("rerun", id);
             c.task_ref = std::string{t->at("referenceTaskName").as_string()};
             c.iteration = static_cast<int32_t>(t->at("iteration").to_number<int64_t>());
             c.input_json = spec.task_input_json;
             command(api, ex, std::move(c), [ex, id] { ex->respond_text(200, id); });
           });
         }});
  r.add({verb::post, "/api/workflow/{workflowId}/variables",
         "Set variables of a RUNNING or PAUSED workflow: each top-level key of the body "
         "replaces or adds one (X-Request-Id: a retry is applied once)", {}, body_kind::json,
         "the variables to set (a JSON object)", "the Workflow, with its tasks, after the update",
         "workflow", access::operator_, [api, lim](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           auto c = command_of("variables", id);
           c.input_json = json::serialize(*body);
           command(api, ex, std::move(c), [api, ex, id] {
             read_execution(api, ex, id, [ex](const json::object& wf) {
               ex->respond_json(200, workflow_shape(wf, true));
             });
           });
         }});
  r.add({verb::put, "/api/workflow/{workflowId}/skiptask/{taskReferenceName}",
         "Skip a task the running workflow has not reached yet: it is marked SKIPPED and the "
         "workflow moves past it (X-Request-Id: a retry is applied once)",
         {{"skipTaskRequest",
           "the SkipTaskRequest where the Go and older Python clients send it: a JSON object, "
           "or their rendering of an empty request; otherwise send it as the body",
           false}},
         body_kind::json,
         "SkipTaskRequest (optional): taskInput, taskOutput (objects); taskInputMessage and "
         "taskOutputMessage only when null",
         "200, empty (409 when the workflow is not RUNNING or the task already ran)", "workflow",
         access::operator_, [api, lim](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto body = read_json_body(ex, lim, json::value(json::object{}));
           if (!body)
             return;
           if (!body->is_object()) {
             ex->fail(400, "body: expected a SkipTaskRequest (a JSON object)", "body");
             return;
           }
           if (const auto* q = ex->query("skipTaskRequest")) {
             auto in_query = skip_request_in_query(*q);
             if (!in_query || (!in_query->empty() && !body->as_object().empty())) {
               ex->fail(400,
                        in_query ? "skipTaskRequest: given both here and as the body; send one"
                                 : "skipTaskRequest: expected a JSON object; send the "
                                   "SkipTaskRequest as the body",
                        "skipTaskRequest");
               return;
             }
             if (!in_query->empty())
               *body = json::value(std::move(*in_query));
           }
           auto c = command_of("skip", id);
           c.task_ref = ex->param("taskReferenceName");
           for (const auto& [key, v] : body->as_object()) {
             std::string k{key};
             if (k == "taskInput" || k == "taskOutput") {
               if (v.is_null())
                 continue;
               if (!v.is_object()) {
                 ex->fail(400, k + ": expected a JSON object", k);
                 return;
               }
               (k == "taskInput" ? c.input_json : c.output_json) = json::serialize(v);
             } else if ((k == "taskInputMessage" || k == "taskOutputMessage") && v.is_null()) {
               continue;
             } else {
               ex->fail(400, k + ": not supported (a SkipTaskRequest takes taskInput and "
                                 "taskOutput)",
                        k);
               return;
             }
           }
           command(api, ex, std::move(c), [ex] { empty_answer(ex, 200); });
         }});
  r.add({verb::post, "/api/workflow/{workflowId}/signal/{name}",
         "Deliver a signal: completes the workflow's WAIT tasks waiting for that name (X-Request-Id: "
         "a retry is applied once and answered alike)", {},
         body_kind::json, "the signal's payload (any JSON; empty = null)",
         "{\"workflowId\",\"signal\",\"delivered\":true}", "workflow", access::operator_,
         [api, lim](const exchange_ptr& ex) {
           const auto& id = ex->param("workflowId");
           if (!check_id(ex, id))
             return;
           auto body = read_json_body(ex, lim, json::value(nullptr));
           if (!body)
             return;
           msg::signal_request req{id, ex->param("name"), json::serialize(*body)};
           if (!with_request_id(ex, req))
             return;
           api->ask<std::string>(
             [ex](std::string& t) {
               ex->respond(response{200, "application/json", std::move(t), {}});
             },
             fail_with(ex), signal_atom_v, scoped(ex, std::move(req)));
         }});
}

} // namespace

void add_workflow_routes(router& r, const route_context& ctx) {
  add_start_routes(r, ctx);
  add_read_routes(r, ctx);
  add_command_routes(r, ctx);
}

} // namespace nf::net::web
