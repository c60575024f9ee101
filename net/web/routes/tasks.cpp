// Conductor's task routes, so a Conductor SDK's workers are nodeflow workers: polls (long,
// served by the lessor's parked polls), reports, task logs, queue sizes and the completion
// of a WAIT task by its reference name. Each maps onto the client protocol; the taskId a
// poll hands out carries the lease (task_handle.hpp).

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "net/web/conductor_shapes.hpp"
#include "net/web/errors.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/routes/workflow_calls.hpp"
#include "net/web/task_handle.hpp"
#include "proto/domains.hpp"
#include "proto/errors.hpp"
#include "proto/limits.hpp"
#include "net/web/scope.hpp"
#include "store/db_clock.hpp" // token and lease times are Postgres's, whichever node stamped them

namespace nf::net::web {

namespace {

namespace json = boost::json;


// A stored JSON object as the worker reads it: {} when there is none (empty, or not an object).
json::value object_of(const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  return ec || !v.is_object() ? json::value(json::object{}) : v;
}

// Conductor's Task as a worker reads it. A SIMPLE task's taskType is its definition's name,
// as in Conductor. responseTimeoutSeconds is what is left of the lease, so an SDK that
// extends leases (LeaseTracker) heartbeats before it ends.
json::object conductor_task(const msg::leased_task& t, const std::string& worker_id) {
  auto now = db_clock_now_ms();
  auto left_ms = std::max<int64_t>(0, t.lease_expires_at_ms - now);
  return json::object{
    {"taskId", format_task_handle(t.task_id, t.workflow_id, t.lease_token)},
    {"taskType", t.task_type == "SIMPLE" ? t.task_def_name : t.task_type},
    {"taskDefName", t.task_def_name},
    {"referenceTaskName", conductor_ref(t.ref, t.iteration)},
    {"workflowInstanceId", t.workflow_id},
    {"inputData", object_of(t.input_json)},
    // What a worker reported before a callback, for the worker that takes the task again.
    {"outputData", object_of(t.output_json)},
    {"status", "IN_PROGRESS"},
    {"retryCount", t.attempt},
    {"iteration", t.iteration},
    {"pollCount", t.poll_count},
    {"seq", 0},
    {"responseTimeoutSeconds", (left_ms + 999) / 1000},
    {"callbackAfterSeconds", 0},
    {"workerId", worker_id},
    {"startTime", now},
    {"updateTime", now},
    {"leaseExpiresAt", t.lease_expires_at_ms},
  };
}

// The `domain` query parameter (proto/domains.hpp): "" when absent or empty; nullopt, with
// the 400 answered, when it cannot name a domain.
std::optional<std::string> domain_param(const exchange_ptr& ex) {
  const auto* d = ex->query("domain");
  if (d == nullptr || d->empty())
    return std::string{};
  if (!valid_domain(*d)) {
    ex->fail(400, "domain: expected 1-128 of A-Z a-z 0-9 _ -, got \"" + *d + "\"", "domain");
    return std::nullopt;
  }
  return *d;
}

std::optional<msg::poll_request> read_poll(const exchange_ptr& ex, int64_t count,
                                           int64_t timeout_ms) {
  msg::poll_request req;
  // A domain polls only the tasks a workflow's taskToDomain routed to it (proto/domains.hpp).
  auto domain = domain_param(ex);
  if (!domain)
    return std::nullopt;
  req.domain = std::move(*domain);
  req.queue = ex->param("tasktype");
  if (const auto* w = ex->query("workerid"))
    req.worker_id = *w;
  req.max_tasks = static_cast<int32_t>(count);
  req.timeout_ms = timeout_ms;
  return req;
}

void poll(gateway* api, const exchange_ptr& ex, msg::poll_request req, bool batch) {
  // A client that hung up before its poll got here leases nothing.
  if (ex->peer_closed())
    return ex->respond(response{204, "application/json", {}, {}});
  auto worker = req.worker_id;
  auto wait = api->timeout() + std::chrono::milliseconds{req.timeout_ms};
  api->ask_for<std::vector<msg::leased_task>>(
    wait,
    [api, ex, worker, batch](std::vector<msg::leased_task>& tasks) {
      if (!tasks.empty() && ex->peer_closed()) {
        // The client closed its connection while the poll waited: nobody would read these
        // tasks, so their leases go back now rather than after responseTimeoutSeconds.
        api->tell(lent_atom_v, std::move(tasks));
        ex->respond(response{204, "application/json", {}, {}});
        return;
      }
      if (!batch) {
        if (tasks.empty())
          ex->respond(response{204, "application/json", {}, {}});
        else
          ex->respond_json(200, conductor_task(tasks.front(), worker));
        return;
      }
      json::array out;
      for (const auto& t : tasks)
        out.push_back(conductor_task(t, worker));
      ex->respond_json(200, out);
    },
    [ex](caf::error& e) { ex->fail(e); }, poll_atom_v, scoped(ex, std::move(req)));
}

// A report presented a lease that is no longer the task's.
void fail_report(const exchange_ptr& ex, const caf::error& e) {
  if (nf::is_nodeflow_error(e) && nf::code_of(e) == nf::errc::lease_lost) {
    ex->fail(409, "taskId: the lease was lost (the task outlived its responseTimeoutSeconds "
                  "and went back to its queue, or it was ended): this result changed nothing",
             "taskId");
    return;
  }
  ex->fail(e);
}

// Where a report's reader sends what it refuses: the message and the field it names.
using refusal = std::function<void(const std::string& message, const std::string& field)>;

// A TaskResult's log lines as stored ({"log","createdTime"}); false when one is malformed
// (answered).
bool read_logs(const refusal& refuse, const json::value* logs, json::array& out) {
  if (logs == nullptr || logs->is_null())
    return true;
  if (!logs->is_array()) {
    refuse("logs: expected an array of {\"log\", \"createdTime\"}", "logs");
    return false;
  }
  for (size_t i = 0; i < logs->get_array().size(); ++i) {
    const auto& l = logs->get_array()[i];
    auto field = "logs[" + std::to_string(i) + "]";
    const auto* o = l.if_object();
    const auto* line = o ? o->if_contains("log") : nullptr;
    if (line == nullptr || !line->is_string()) {
      refuse(field + ".log: expected the log line as a string", field + ".log");
      return false;
    }
    int64_t at = db_clock_now_ms();
    if (const auto* c = o->if_contains("createdTime"); c != nullptr && !c->is_null()) {
      if (!c->is_int64() && !c->is_uint64()) {
        refuse(field + ".createdTime: expected milliseconds since the epoch",
                 field + ".createdTime");
        return false;
      }
      at = c->is_int64() ? c->get_int64() : static_cast<int64_t>(c->get_uint64());
    }
    out.push_back(json::object{{"log", line->get_string()}, {"createdTime", at}});
  }
  return true;
}

// The fields of Conductor's TaskResult this route reads; any other is refused by name.
constexpr const char* result_fields[] = {
  "taskId", "workflowInstanceId", "status", "outputData", "reasonForIncompletion",
  "callbackAfterSeconds", "logs", "workerId", "extendLease",
  "externalOutputPayloadStoragePath", "subWorkflowId"};

struct report {
  task_handle task;
  std::string status;
  json::object output;
  bool has_output = false;
  std::string reason;
  json::array logs;
  int64_t callback_after_seconds = 0;
  bool extend_lease = false;
};

std::optional<report> read_report(const refusal& refuse, const json::object& body) {
  for (const auto& [k, v] : body) {
    bool known = false;
    for (const char* f : result_fields)
      known = known || k == f;
    if (!known) {
      refuse(std::string{k} + ": not a field of a task result", std::string{k});
      return std::nullopt;
    }
  }
  auto text = [&](const char* name, bool required) -> std::optional<std::string> {
    const auto* v = body.if_contains(name);
    if (v == nullptr || v->is_null()) {
      if (required)
        refuse(std::string{name} + ": required", name);
      else
        return std::string{};
      return std::nullopt;
    }
    if (!v->is_string()) {
      refuse(std::string{name} + ": expected a string", name);
      return std::nullopt;
    }
    return std::string{v->get_string()};
  };
  report r;
  auto task_id = text("taskId", true);
  if (!task_id)
    return std::nullopt;
  std::string why;
  auto h = parse_task_handle(*task_id, why);
  if (!h) {
    refuse("taskId: " + why, "taskId");
    return std::nullopt;
  }
  if (h->lease_token.empty()) {
    refuse("taskId: \"" + *task_id + "\" names no lease: report with the taskId the "
                  "poll answered", "taskId");
    return std::nullopt;
  }
  r.task = *h;
  auto wf = text("workflowInstanceId", false);
  if (!wf)
    return std::nullopt;
  if (!wf->empty() && *wf != h->workflow_id) {
    refuse("workflowInstanceId: " + *wf + " is not the workflow of taskId (" +
                    h->workflow_id + ")", "workflowInstanceId");
    return std::nullopt;
  }
  auto status = text("status", true);
  if (!status)
    return std::nullopt;
  if (*status != "COMPLETED" && *status != "FAILED" && *status != "FAILED_WITH_TERMINAL_ERROR"
      && *status != "IN_PROGRESS") {
    refuse("status: expected COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR or "
                  "IN_PROGRESS, got \"" + *status + "\"", "status");
    return std::nullopt;
  }
  r.status = *status;
  if (const auto* o = body.if_contains("outputData"); o != nullptr && !o->is_null()) {
    if (!o->is_object()) {
      refuse("outputData: expected a JSON object", "outputData");
      return std::nullopt;
    }
    r.output = o->get_object();
    r.has_output = !r.output.empty();
  }
  auto reason = text("reasonForIncompletion", false);
  if (!reason || !text("workerId", false))
    return std::nullopt;
  r.reason = *reason;
  if (const auto* c = body.if_contains("callbackAfterSeconds"); c != nullptr && !c->is_null()) {
    if (!c->is_number()) {
      refuse("callbackAfterSeconds: expected a number of seconds", "callbackAfterSeconds");
      return std::nullopt;
    }
    if (r.status != "IN_PROGRESS" && c->to_number<double>() != 0) {
      refuse("callbackAfterSeconds: only an IN_PROGRESS report takes it",
               "callbackAfterSeconds");
      return std::nullopt;
    }
    auto secs = c->to_number<double>();
    if (secs < 0 || secs > static_cast<double>(max_callback_after_seconds)
        || secs != static_cast<double>(static_cast<int64_t>(secs))) {
      refuse("callbackAfterSeconds: expected a whole number of seconds 0 … "
               + std::to_string(max_callback_after_seconds),
             "callbackAfterSeconds");
      return std::nullopt;
    }
    r.callback_after_seconds = static_cast<int64_t>(secs);
  }
  if (const auto* e = body.if_contains("extendLease"); e != nullptr && !e->is_null()) {
    if (!e->is_bool()) {
      refuse("extendLease: expected true or false", "extendLease");
      return std::nullopt;
    }
    if (e->get_bool() && r.status != "IN_PROGRESS") {
      refuse("extendLease: only an IN_PROGRESS report extends a lease", "extendLease");
      return std::nullopt;
    }
    r.extend_lease = e->get_bool();
  }
  for (const char* unsupported : {"externalOutputPayloadStoragePath", "subWorkflowId"})
    if (const auto* v = body.if_contains(unsupported);
        v != nullptr && !v->is_null() && !(v->is_string() && v->get_string().empty())) {
      refuse(std::string{unsupported} + ": not supported by nodeflow", unsupported);
      return std::nullopt;
    }
  if (!read_logs(refuse, body.if_contains("logs"), r.logs))
    return std::nullopt;
  return r;
}

// A final report as the client protocol's task result (the lease from its taskId).
msg::task_result result_of(const report& r) {
  msg::task_result res;
  res.task_id = r.task.task_id;
  res.workflow_id = r.task.workflow_id;
  res.lease_token = r.task.lease_token;
  res.status = r.status;
  res.output_json = json::serialize(r.output);
  res.reason = r.reason;
  return res;
}

msg::task_progress progress_of(const report& r) {
  msg::task_progress p;
  p.task_id = r.task.task_id;
  p.workflow_id = r.task.workflow_id;
  p.logs_json = json::serialize(r.logs);
  if (r.has_output)
    p.output_json = json::serialize(r.output);
  return p;
}

// Applies a report. IN_PROGRESS: a heartbeat (the lease extended by the task's
// responseTimeoutSeconds), then its logs and output so far into the history; with
// callbackAfterSeconds (and no extendLease, which keeps the task) the worker then gives the
// task back, and it is queued again when the seconds have passed, as in Conductor.
// COMPLETED / FAILED…: the logs first, behind a heartbeat that proves the lease (a lost one
// is refused before anything is written), then the report itself.
void apply_report(gateway* api, const exchange_ptr& ex, std::shared_ptr<report> r,
                  std::function<void()> answer) {
  auto finish = [api, ex, r, answer]() {
    if (r->status == "IN_PROGRESS" && r->callback_after_seconds > 0 && !r->extend_lease) {
      msg::heartbeat_request later{r->task.task_id, r->task.workflow_id, r->task.lease_token};
      later.callback_after_seconds = r->callback_after_seconds;
      api->ask<int64_t>([answer](int64_t) { answer(); },
                        [ex](caf::error& e) { fail_report(ex, e); }, heartbeat_atom_v,
                        scoped(ex, std::move(later)));
      return;
    }
    if (r->status == "IN_PROGRESS") {
      answer();
      return;
    }
    api->ask<std::string>([answer](std::string&) { answer(); },
                          [ex](caf::error& e) { fail_report(ex, e); }, complete_atom_v,
                          scoped(ex, result_of(*r)));
  };
  auto record = [api, ex, r, finish]() {
    if (r->logs.empty() && (r->status != "IN_PROGRESS" || !r->has_output))
      return finish();
    api->ask<std::string>([finish](std::string&) { finish(); },
                          [ex](caf::error& e) { ex->fail(e); }, progress_atom_v,
                          scoped(ex, progress_of(*r)));
  };
  if (r->status != "IN_PROGRESS" && r->logs.empty())
    return finish();
  msg::heartbeat_request hb{r->task.task_id, r->task.workflow_id, r->task.lease_token};
  api->ask<int64_t>([record](int64_t) { record(); }, [ex](caf::error& e) { fail_report(ex, e); },
                    heartbeat_atom_v, scoped(ex, std::move(hb)));
}

// POST /api/tasks and /api/tasks/update-v2: one TaskResult read and applied, then
// `answer(exchange, taskId)`.
template <class Answer>
handler report_handler(gateway* api, const json_limits& lim, Answer answer) {
  return [api, lim, answer](const exchange_ptr& ex) {
    auto body = read_json_object(ex, lim);
    if (!body)
      return;
    auto rep = read_report(
      [ex](const std::string& m, const std::string& f) { ex->fail(400, m, f); }, *body);
    if (!rep)
      return;
    std::string task_id{body->at("taskId").get_string()};
    apply_report(api, ex, std::make_shared<report>(std::move(*rep)),
                 [ex, task_id, answer] { answer(ex, task_id); });
  };
}

// Several final results in one request (nodeflow's own route, the HTTP form of the client
// library's report_batch): every item is read first and any problem refuses the whole
// request, naming `[i].field`, before anything is applied. Each result then goes on as a
// report of its own and is answered in its place: `{"taskId","status","message"}` with the
// HTTP status that result alone would have had (200, 409 for a lost lease, …).
void report_batch(gateway* api, const exchange_ptr& ex, const json::array& items) {
  if (items.empty() || items.size() > 1000) {
    ex->fail(400, "body: expected 1 to 1000 task results, got " + std::to_string(items.size()),
             "body");
    return;
  }
  std::vector<msg::task_result> results;
  std::vector<std::string> ids;
  results.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto prefix = "[" + std::to_string(i) + "]";
    bool refused = false;
    auto refuse = [&](const std::string& m, const std::string& f) {
      refused = true;
      ex->fail(400, prefix + "." + m, prefix + "." + f);
    };
    const auto* o = items[i].if_object();
    if (o == nullptr) {
      ex->fail(400, prefix + ": expected a task result object", prefix);
      return;
    }
    auto r = read_report(refuse, *o);
    if (!r || refused)
      return;
    if (r->status == "IN_PROGRESS" || !r->logs.empty()) {
      ex->fail(400, prefix + ".status: a batch takes final results without logs "
                    "(COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR); report IN_PROGRESS or "
                    "logs with POST /api/tasks", prefix + ".status");
      return;
    }
    results.push_back(result_of(*r));
    ids.emplace_back(o->at("taskId").get_string());
  }
  api->ask<std::vector<msg::report_outcome>>(
    [ex, ids](std::vector<msg::report_outcome>& outcomes) {
      json::array out;
      for (size_t i = 0; i < outcomes.size() && i < ids.size(); ++i) {
        const auto& oc = outcomes[i];
        json::object item{{"taskId", ids[i]}};
        if (!oc.error) {
          item["status"] = 200;
        } else if (nf::is_nodeflow_error(oc.error)
                   && nf::code_of(oc.error) == nf::errc::lease_lost) {
          item["status"] = 409;
          item["message"] = "the lease was lost: this result changed nothing";
        } else {
          item["status"] = status_of(oc.error);
          item["message"] = nf::message_of(oc.error);
        }
        out.push_back(std::move(item));
      }
      ex->respond_json(200, out);
    },
    [ex](caf::error& e) { ex->fail(e); }, complete_atom_v, scoped(ex, std::move(results)));
}

// The task's log lines, read from its workflow's history page by page.
struct log_read {
  gateway* api;
  exchange_ptr ex;
  std::string handle_text;
  task_handle task;
  json::array lines;
};

void read_log_page(std::shared_ptr<log_read> st, int64_t after) {
  msg::events_request req;
  req.workflow_id = st->task.workflow_id;
  req.after_seq = after;
  req.limit = 1000;
  st->api->ask<std::vector<msg::event_view>>(
    [st](std::vector<msg::event_view>& evs) {
      for (const auto& e : evs) {
        if (e.type != "TASK_IN_PROGRESS")
          continue;
        json::error_code ec;
        auto p = json::parse(e.payload_json, ec);
        const auto* o = ec ? nullptr : p.if_object();
        const auto* id = o ? o->if_contains("taskId") : nullptr;
        const auto* logs = o ? o->if_contains("logs") : nullptr;
        if (id == nullptr || !id->is_string() || id->get_string() != st->task.task_id
            || logs == nullptr || !logs->is_array())
          continue;
        for (const auto& l : logs->get_array()) {
          const auto* lo = l.if_object();
          if (lo == nullptr)
            continue;
          json::object line = *lo;
          line["taskId"] = st->handle_text;
          st->lines.push_back(std::move(line));
        }
      }
      if (evs.size() < 1000)
        st->ex->respond_json(200, st->lines);
      else
        read_log_page(st, evs.back().seq);
    },
    [st](caf::error& e) { st->ex->fail(e); }, events_atom_v, scoped(st->ex, std::move(req)));
}

std::optional<task_handle> handle_param(const exchange_ptr& ex) {
  std::string why;
  auto h = parse_task_handle(ex->param("taskId"), why);
  if (!h)
    ex->fail(400, "taskId: " + why, "taskId");
  return h;
}

// The queues of the node's status read (engine/operations.cpp): [{name, ready, leased, …}].
json::array queues_of(const std::string& status_text) {
  json::error_code ec;
  auto status = json::parse(status_text, ec);
  auto* o = ec ? nullptr : status.if_object();
  auto* queues = o ? o->if_contains("queues") : nullptr;
  return queues != nullptr && queues->is_array() ? std::move(queues->get_array()) : json::array{};
}

// The ready (unleased) count of each queue in the node's status read: of the queues in
// `only` (0 for one with none), or of every queue when it is empty.
json::object ready_by_queue(const std::string& status_text, const std::vector<std::string>& only) {
  json::object out;
  for (const auto& t : only)
    out[t] = 0;
  for (const auto& q : queues_of(status_text)) {
    const auto* qo = q.if_object();
    const auto* name = qo ? qo->if_contains("name") : nullptr;
    const auto* ready = qo ? qo->if_contains("ready") : nullptr;
    if (name != nullptr && name->is_string() && ready != nullptr
        && (only.empty() || out.contains(name->get_string())))
      out[name->get_string()] = *ready;
  }
  return out;
}

// The ready counts of the task types in `only`, or of every queue when it is empty.
void ready_counts(gateway* api, const exchange_ptr& ex, std::vector<std::string> only) {
  api->ask<std::string>(
    [ex, only](std::string& text) { ex->respond_json(200, ready_by_queue(text, only)); },
    fail_with(ex), status_atom_v);
}

// Conductor's verbose queue details: per queue, one shard ("a", as Conductor's Postgres store
// answers) with its ready (`size`) and leased (`uacked`) tasks.
void queue_details(gateway* api, const exchange_ptr& ex) {
  api->ask<std::string>(
    [ex](std::string& text) {
      json::object out;
      for (const auto& q : queues_of(text)) {
        const auto* qo = q.if_object();
        const auto* name = qo ? qo->if_contains("name") : nullptr;
        if (name == nullptr || !name->is_string())
          continue;
        auto count = [qo](const char* key) {
          const auto* v = qo->if_contains(key);
          return v != nullptr && v->is_number() ? v->to_number<int64_t>() : int64_t{0};
        };
        out[name->get_string()] =
          json::object{{"a", json::object{{"size", count("ready")}, {"uacked", count("leased")}}}};
      }
      ex->respond_json(200, out);
    },
    fail_with(ex), status_atom_v);
}

// Conductor's queue sizes for the task types asked (repeated or comma-separated), from the
// status read's queue depths: the ready (unleased) count of each.
void queue_sizes(gateway* api, const exchange_ptr& ex) {
  std::vector<std::string> types;
  for (const auto& v : ex->query_all("taskType")) {
    size_t start = 0;
    while (start <= v.size()) {
      auto comma = v.find(',', start);
      auto t = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!t.empty())
        types.push_back(t);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  }
  if (types.empty()) {
    ex->fail(400, "taskType: name at least one task type", "taskType");
    return;
  }
  ready_counts(api, ex, std::move(types));
}

// Conductor's depth of one task type's queue in one domain (Java's getQueueSizeForTask):
// its ready tasks, as a number.
void queue_depth(gateway* api, const exchange_ptr& ex) {
  const auto* type = ex->query("taskType");
  if (type == nullptr || type->empty()) {
    ex->fail(400, "taskType: name a task type", "taskType");
    return;
  }
  for (const char* unkept : {"isolationGroupId", "executionNamespace"})
    if (const auto* v = ex->query(unkept); v != nullptr && !v->empty()) {
      ex->fail(400, std::string{unkept} + ": nodeflow has no isolation groups or execution "
                                          "namespaces (leave it out)",
               unkept);
      return;
    }
  auto domain = domain_param(ex);
  if (!domain)
    return;
  // No domain, or NO_DOMAIN: the plain queue.
  auto queue = domain_queue(*domain, *type);
  api->ask<std::string>(
    [ex, queue](std::string& text) {
      ex->respond_json(200, ready_by_queue(text, {queue}).at(queue));
    },
    fail_with(ex), status_atom_v);
}

// Conductor's poll data of the request's namespace: of one task type, or of every one when
// `task_type` is empty.
void poll_data(gateway* api, const exchange_ptr& ex, std::string task_type) {
  msg::poll_data_query q;
  q.task_type = std::move(task_type);
  api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); }, fail_with(ex),
                        poll_data_atom_v, scoped(ex, std::move(q)));
}

} // namespace

void add_task_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  auto max_wait = ctx.max_poll_timeout_ms;
  r.add({verb::get, "/api/tasks/poll/{tasktype}",
         "Lease one task of a type (long poll up to `timeout` ms); 204 when none came",
         {{"workerid", "the polling worker's id", false},
          {"domain", "the task domain to poll (taskToDomain); absent = tasks routed to none", false},
          {"timeout", "wait up to this many ms for a task (default 100)", false, "integer"}},
         body_kind::none, {},
         "Task: {taskId (carries the lease), taskType, taskDefName, referenceTaskName, "
         "workflowInstanceId, inputData, status, retryCount, iteration, "
         "responseTimeoutSeconds, workerId, startTime…}",
         "task", access::worker,
         [api, max_wait](const exchange_ptr& ex) {
           auto timeout = query_int(ex, "timeout", 100, 0, max_wait);
           if (!timeout)
             return;
           if (auto req = read_poll(ex, 1, *timeout))
             poll(api, ex, std::move(*req), false);
         },
         true});
  r.add({verb::get, "/api/tasks/poll/batch/{tasktype}",
         "Lease up to `count` tasks of a type, waiting up to `timeout` ms for the first",
         {{"count", "the most tasks to lease (default 1)", false, "integer"},
          {"timeout", "wait up to this many ms (default 100)", false, "integer"},
          {"workerid", "the polling worker's id", false},
          {"domain", "the task domain to poll (taskToDomain); absent = tasks routed to none", false}},
         body_kind::none, {}, "[Task, …] (empty when none came)", "task", access::worker,
         [api, max_wait](const exchange_ptr& ex) {
           auto count = query_int(ex, "count", 1, 1, 1000);
           if (!count)
             return;
           auto timeout = query_int(ex, "timeout", 100, 0, max_wait);
           if (!timeout)
             return;
           if (auto req = read_poll(ex, *count, *timeout))
             poll(api, ex, std::move(*req), true);
         },
         true});
  r.add({verb::post, "/api/tasks", "Report a leased task's result (Conductor's TaskResult)",
         {}, body_kind::json,
         "{taskId (as polled), workflowInstanceId, status: COMPLETED | FAILED | "
         "FAILED_WITH_TERMINAL_ERROR | IN_PROGRESS (extends the lease), outputData, "
         "reasonForIncompletion, callbackAfterSeconds (with IN_PROGRESS: give the task back "
         "for that long), extendLease, logs: [{log, "
         "createdTime}], workerId}",
         "the taskId, as text; 409 when the lease was lost", "task", access::worker,
         report_handler(api, lim, [](const exchange_ptr& ex, const std::string& task_id) {
           ex->respond_text(200, task_id);
         })});
  r.add({verb::post, "/api/tasks/update-v2",
         "Report a leased task's result, as POST /api/tasks, and answer the next task to work "
         "on: nodeflow answers none (null), so the worker polls for its next", {},
         body_kind::json, "TaskResult, as POST /api/tasks",
         "null (no next task); 409 when the lease was lost", "task", access::worker,
         report_handler(api, lim, [](const exchange_ptr& ex, const std::string&) {
           ex->respond_json(200, json::value(nullptr));
         })});
  r.add({verb::post, "/api/tasks/batch",
         "Report several leased tasks' final results at once (nodeflow's own route)", {},
         body_kind::json,
         "[TaskResult, …] (1 … 1000; COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, no logs)",
         "[{taskId, status: 200 | 409 (lease lost) | …, message}], one per result, in order",
         "task", access::worker, [api, lim](const exchange_ptr& ex) {
           auto body = read_json_body(ex, lim);
           if (!body)
             return;
           if (!body->is_array()) {
             ex->fail(400, "body: expected an array of task results", "body");
             return;
           }
           report_batch(api, ex, body->get_array());
         }});
  r.add({verb::post, "/api/tasks/{taskId}/log", "Add a line to a task's log", {},
         body_kind::json, "the log line as a JSON string", "nothing (200)", "task", access::worker,
         [api, lim](const exchange_ptr& ex) {
           auto h = handle_param(ex);
           if (!h)
             return;
           auto body = read_json_body(ex, lim);
           if (!body)
             return;
           if (!body->is_string()) {
             ex->fail(400, "body: expected the log line as a JSON string", "body");
             return;
           }
           msg::task_progress p;
           p.task_id = h->task_id;
           p.workflow_id = h->workflow_id;
           p.logs_json = json::serialize(json::array{
             json::object{{"log", body->get_string()}, {"createdTime", db_clock_now_ms()}}});
           api->ask<std::string>([ex](std::string&) { ex->respond_text(200, ""); },
                                 [ex](caf::error& e) { ex->fail(e); }, progress_atom_v,
                                 scoped(ex, std::move(p)));
         }});
  r.add({verb::get, "/api/tasks/{taskId}/log", "A task's log lines, oldest first", {},
         body_kind::none, {}, "[{log, taskId, createdTime}]", "task", access::reader,
         [api](const exchange_ptr& ex) {
           auto h = handle_param(ex);
           if (!h)
             return;
           auto st = std::make_shared<log_read>(
             log_read{api, ex, ex->param("taskId"), *h, json::array{}});
           read_log_page(st, 0);
         }});
  r.add({verb::get, "/api/tasks/{taskId}",
         "One task in Conductor's shape, by the taskId a poll answered or "
         "<taskId>.<workflowId>", {}, body_kind::none, {},
         "Task (its taskId as asked, so a result sent back with it keeps its lease)", "task",
         access::reader, [api](const exchange_ptr& ex) {
           const auto& text = ex->param("taskId");
           if (flow::is_uuid(text)) {
             ex->fail(400, "taskId: a bare task id names no workflow: send the taskId a poll "
                           "answered, or <taskId>.<workflowId> with the task's "
                           "workflowInstanceId",
                      "taskId");
             return;
           }
           auto h = handle_param(ex);
           if (!h)
             return;
           read_execution(api, ex, h->workflow_id, [ex, h = *h, text](const json::object& wf) {
             auto shaped = workflow_shape(wf, true);
             for (auto& t : shaped["tasks"].as_array())
               if (t.at("taskId").as_string() == h.task_id) {
                 t.as_object()["taskId"] = text;
                 ex->respond_json(200, t);
                 return;
               }
             ex->fail(404, "task " + h.task_id + " not found in workflow " + h.workflow_id);
           });
         }});
  r.add({verb::get, "/api/tasks/queue/sizes", "Ready tasks per task type",
         {{"taskType", "a task type (repeat it, or separate them by commas)", true, "string",
           true}},
         body_kind::none, {}, "{\"<taskType>\": ready count}", "task", access::reader,
         [api](const exchange_ptr& ex) { queue_sizes(api, ex); }});
  r.add({verb::get, "/api/tasks/queue/size", "Ready tasks of one task type in one domain",
         {{"taskType", "the task type", true},
          {"domain", "the task domain (absent or NO_DOMAIN: tasks routed to none)", false},
          {"isolationGroupId", "empty only: nodeflow has no isolation groups", false},
          {"executionNamespace", "empty only: nodeflow has no execution namespaces", false}},
         body_kind::none, {}, "a number: the ready tasks", "task", access::reader,
         [api](const exchange_ptr& ex) { queue_depth(api, ex); }});
  r.add({verb::get, "/api/tasks/queue/all", "Ready tasks of every queue that has any",
         {}, body_kind::none, {}, "{\"<queue>\": ready count}", "task", access::reader,
         [api](const exchange_ptr& ex) { ready_counts(api, ex, {}); }});
  r.add({verb::get, "/api/tasks/queue/all/verbose",
         "Ready and leased tasks of every queue that has any (Conductor's verbose details)", {},
         body_kind::none, {}, "{\"<queue>\": {\"a\": {\"size\": ready, \"uacked\": leased}}}",
         "task", access::reader, [api](const exchange_ptr& ex) { queue_details(api, ex); }});
  const char* poll_data_answer =
    "[{queueName (the task type), domain (\"DEFAULT\" for polls that named none), workerId, "
    "lastPollTime (Unix ms)}]; a node's own polls show at once, other nodes' within 5 s";
  r.add({verb::get, "/api/tasks/queue/polldata", "When each worker last polled a task type",
         {{"taskType", "the task type", true}}, body_kind::none, {}, poll_data_answer, "task",
         access::reader, [api](const exchange_ptr& ex) {
           const auto* type = ex->query("taskType");
           if (type == nullptr || type->empty()) {
             ex->fail(400, "taskType: name a task type", "taskType");
             return;
           }
           poll_data(api, ex, *type);
         }});
  r.add({verb::get, "/api/tasks/queue/polldata/all", "When each worker last polled each task type",
         {}, body_kind::none, {}, poll_data_answer, "task", access::reader,
         [api](const exchange_ptr& ex) { poll_data(api, ex, {}); }});
}

} // namespace nf::net::web
