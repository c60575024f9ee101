#include "net/api/checks.hpp"

#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "flow/json_read.hpp"
#include "flow/parse.hpp"
#include "flow/status.hpp"
#include "flow/uuid.hpp"
#include "proto/domains.hpp"
#include "proto/errors.hpp"
#include "proto/limits.hpp"
#include "proto/namespaces.hpp"
#include "store/queues.hpp"

namespace nf::net {

namespace {

// Every problem of one request, reported together.
class problems {
public:
  void add(const std::string& field, const std::string& what) {
    if (!text_.empty())
      text_ += "; ";
    text_ += field + ": " + what;
  }

  void uuid(const char* field, const std::string& v, bool required = true) {
    if (v.empty()) {
      if (required)
        add(field, "expected a UUID, got an empty string");
    } else if (!flow::is_uuid(v)) {
      add(field, "expected a UUID, got " + flow::quoted(clip(v)));
    }
  }

  // What names a leased task (I5: the token fences every report).
  void lease(const std::string& task, const std::string& workflow, const std::string& token) {
    uuid("task_id", task);
    uuid("workflow_id", workflow);
    uuid("lease_token", token);
  }

  // Postgres text cannot hold NUL, and libpq would silently cut the value there.
  void text(const char* field, const std::string& v, size_t max_len, bool required = false) {
    if (required && v.empty())
      add(field, "expected a non-empty string");
    else if (v.find('\0') != std::string::npos)
      add(field, "expected text without NUL characters");
    else if (v.size() > max_len)
      add(field, "expected at most " + std::to_string(max_len) + " bytes, got "
                   + std::to_string(v.size()));
  }

  void range(const char* field, int64_t v, int64_t lo, int64_t hi, const char* note = nullptr) {
    if (v < lo || v > hi) {
      std::string what = "expected an integer " + std::to_string(lo) + " … " + std::to_string(hi);
      if (note != nullptr)
        what += std::string{" ("} + note + ")";
      add(field, what + ", got " + std::to_string(v));
    }
  }

  // A payload's size, checked before it is parsed: past payloads.max_bytes it is refused
  // whatever it holds. True when it fits.
  bool payload(const char* field, const std::string& v, int64_t max_bytes) {
    if (static_cast<int64_t>(v.size()) <= max_bytes)
      return true;
    add(field, "expected at most " + std::to_string(max_bytes) + " bytes (payloads.max_bytes), got "
                 + std::to_string(v.size()));
    return false;
  }

  // JSON text that must be an object (empty only when `empty_ok`).
  void object(const char* field, const std::string& v, bool empty_ok) {
    if (v.empty()) {
      if (!empty_ok)
        add(field, "expected a JSON object, got an empty string");
      return;
    }
    boost::json::value parsed;
    if (!json(field, v, parsed))
      return;
    if (!parsed.is_object())
      add(field, "expected a JSON object, got " + flow::describe(parsed));
  }

  // Any JSON value.
  bool json(const char* field, const std::string& v, boost::json::value& out) {
    boost::json::error_code ec;
    out = boost::json::parse(v, ec);
    if (ec) {
      add(field, "expected JSON, got malformed text (" + ec.message() + ")");
      return false;
    }
    return true;
  }

  caf::error done() const {
    if (text_.empty())
      return caf::error{};
    return nf::make_error(nf::errc::invalid, text_);
  }

private:
  static std::string clip(const std::string& v) {
    return v.size() > 64 ? v.substr(0, 64) + "…" : v;
  }
  std::string text_;
};

constexpr size_t max_name = 256;
constexpr size_t max_reason = 65536;

} // namespace

caf::error check(const msg::start_request& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.text("workflow_name", r.workflow_name, max_name, true);
  p.range("version", r.version, 0, flow::max_count, "0 = the latest");
  if (p.payload("input", r.input_json, limits.max_payload_bytes))
    p.object("input", r.input_json, true);
  p.text("idempotency_key", r.idempotency_key, max_key_bytes);
  p.text("correlation_id", r.correlation_id, max_key_bytes);
  p.text("request_id", r.request_id, max_key_bytes);
  p.range("priority", r.priority, 0, 99);
  // What it maps is checked where the start is read (engine/decide/task_domains.hpp).
  p.object("taskToDomain", r.task_to_domain_json, true);
  return p.done();
}

caf::error check(const msg::workflow_query& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.uuid("workflow_id", r.workflow_id);
  return p.done();
}

caf::error check(const msg::search_request& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  if (!r.status.empty() && !flow::parse_workflow_status(r.status))
    p.add("status", "expected RUNNING, COMPLETED, FAILED, TIMED_OUT, TERMINATED or PAUSED, got "
                      + flow::quoted(r.status));
  p.text("workflow_name", r.workflow_name, max_name);
  p.text("correlation_id", r.correlation_id, max_key_bytes);
  p.range("started_after_ms", r.started_after_ms, 0, INT64_MAX / 2);
  p.range("started_before_ms", r.started_before_ms, 0, INT64_MAX / 2, "0 = no bound");
  p.uuid("cursor", r.cursor, false);
  p.range("limit", r.limit, 1, 1000);
  return p.done();
}

caf::error check(const msg::workflow_command& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  if (!msg::is_workflow_command_op(r.op))
    p.add("op", std::string{"expected "} + msg::workflow_command_ops_text + ", got "
                  + flow::quoted(r.op));
  p.uuid("workflow_id", r.workflow_id);
  p.text("reason", r.reason, max_reason);
  p.text("request_id", r.request_id, max_key_bytes);
  if (r.op == "rerun" || r.op == "skip") {
    p.text("task_ref", r.task_ref, max_name, true);
    p.range("iteration", r.iteration, 0, r.op == "skip" ? 0 : flow::max_count);
  } else {
    if (!r.task_ref.empty() && r.op != "state")
      p.add("task_ref", "only a rerun, a skip or a state update names a task, got "
                          + flow::quoted(r.task_ref));
    p.text("task_ref", r.task_ref, max_name);
    if (r.iteration != 0)
      p.add("iteration", "only a rerun names an iteration, got " + std::to_string(r.iteration));
  }
  if (r.op == "state") {
    if (r.task_ref.empty() && r.input_json.empty())
      p.add("task_ref", "a state update sets variables (input), ends a task (task_ref), or both");
    if (!r.task_ref.empty() && r.task_status != "COMPLETED" && r.task_status != "FAILED"
        && r.task_status != "FAILED_WITH_TERMINAL_ERROR")
      p.add("task_status", "expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, got "
                             + flow::quoted(r.task_status));
    if (r.task_ref.empty() && (!r.task_status.empty() || !r.task_id.empty()))
      p.add("task_ref", "task_status and task_id describe the task task_ref names");
    p.uuid("task_id", r.task_id, false);
    if (p.payload("input", r.input_json, limits.max_payload_bytes))
      p.object("input", r.input_json, true);
    if (p.payload("output", r.output_json, limits.max_payload_bytes))
      p.object("output", r.output_json, true);
    return p.done();
  }
  if (!r.task_status.empty() || !r.task_id.empty())
    p.add("task_status", "only a state update ends a task with a status");
  if (r.op == "variables") {
    if (r.input_json.empty())
      p.add("input", "the variables to set, as a JSON object");
    else if (p.payload("input", r.input_json, limits.max_payload_bytes))
      p.object("input", r.input_json, true);
  } else if (r.op == "rerun" || r.op == "restart" || r.op == "skip") {
    if (p.payload("input", r.input_json, limits.max_payload_bytes))
      p.object("input", r.input_json, true);
  } else if (!r.input_json.empty()) {
    p.add("input", "only a rerun, a restart, a skip or variables take an input");
  }
  if (r.op == "skip") {
    if (p.payload("output", r.output_json, limits.max_payload_bytes))
      p.object("output", r.output_json, true);
  } else if (!r.output_json.empty()) {
    p.add("output", "only a skip takes an output");
  }
  return p.done();
}

caf::error check_removal(const msg::workflow_command& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.uuid("workflow_id", r.workflow_id);
  p.text("reason", r.reason, max_reason);
  p.text("request_id", r.request_id, max_key_bytes);
  if (!r.task_ref.empty())
    p.add("task_ref", "a removal names no task, got " + flow::quoted(r.task_ref));
  if (r.iteration != 0)
    p.add("iteration", "a removal names no iteration, got " + std::to_string(r.iteration));
  if (!r.input_json.empty())
    p.add("input", "a removal takes no input");
  if (!r.output_json.empty())
    p.add("output", "a removal takes no output");
  return p.done();
}

caf::error check(const msg::signal_request& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.uuid("workflow_id", r.workflow_id);
  p.text("name", r.name, max_name, true);
  p.text("request_id", r.request_id, max_key_bytes);
  boost::json::value ignored;
  if (!r.payload_json.empty() && p.payload("payload", r.payload_json, limits.max_payload_bytes))
    p.json("payload", r.payload_json, ignored);
  return p.done();
}

// The only check of a client's poll: the lessor trusts what reaches it.
caf::error check(const msg::poll_request& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.text("queue", r.queue, max_name, true);
  p.text("worker_id", r.worker_id, max_name);
  p.range("max_tasks", r.max_tasks, 1, store::max_lease_tasks);
  p.range("timeout_ms", r.timeout_ms, 0, limits.max_poll_timeout_ms,
          "lessor.max_poll_timeout_ms");
  if (!r.domain.empty() && !valid_domain(r.domain))
    p.add("domain", "expected 1-128 of A-Z a-z 0-9 _ -, got " + flow::quoted(r.domain));
  return p.done();
}

caf::error check(const msg::task_result& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.lease(r.task_id, r.workflow_id, r.lease_token);
  if (r.status != "COMPLETED" && r.status != "FAILED" && r.status != "FAILED_WITH_TERMINAL_ERROR")
    p.add("status", "expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, got "
                      + flow::quoted(r.status));
  if (p.payload("output", r.output_json, limits.max_payload_bytes))
    p.object("output", r.output_json, true);
  p.text("reason", r.reason, max_reason);
  return p.done();
}

caf::error check_report_count(size_t count) {
  problems p;
  if (count > static_cast<size_t>(store::max_lease_tasks))
    p.add("results", "expected at most " + std::to_string(store::max_lease_tasks)
                       + " results in one call, got " + std::to_string(count));
  return p.done();
}

caf::error check(const msg::heartbeat_request& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.lease(r.task_id, r.workflow_id, r.lease_token);
  if (r.callback_after_seconds < 0 || r.callback_after_seconds > max_callback_after_seconds)
    p.add("callback_after_seconds", "expected 0 … "
                                      + std::to_string(max_callback_after_seconds)
                                      + " seconds, got "
                                      + std::to_string(r.callback_after_seconds));
  return p.done();
}

caf::error check(const msg::task_progress& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.uuid("task_id", r.task_id);
  p.uuid("workflow_id", r.workflow_id);
  boost::json::value logs;
  if (p.json("logs", r.logs_json, logs)) {
    if (!logs.is_array()) {
      p.add("logs", "expected an array of {\"log\": text, \"createdTime\": ms}, got "
                      + flow::describe(logs));
    } else {
      const auto& a = logs.get_array();
      for (size_t i = 0; i < a.size(); ++i) {
        auto field = "logs[" + std::to_string(i) + "]";
        const auto* o = a[i].if_object();
        const auto* line = o ? o->if_contains("log") : nullptr;
        const auto* at = o ? o->if_contains("createdTime") : nullptr;
        if (line == nullptr || !line->is_string())
          p.add(field + ".log", "expected the log line as a string");
        else
          p.text((field + ".log").c_str(), std::string{line->get_string()}, max_reason);
        if (at == nullptr || !at->is_int64())
          p.add(field + ".createdTime", "expected milliseconds since the epoch");
      }
      if (a.empty() && r.output_json.empty())
        p.add("logs", "expected a log line or an output: the report holds neither");
    }
  }
  if (p.payload("output", r.output_json, limits.max_payload_bytes))
    p.object("output", r.output_json, true);
  return p.done();
}

caf::error check(const msg::task_ref_update& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.uuid("workflow_id", r.workflow_id);
  p.text("task_ref", r.task_ref, max_name, true);
  p.text("request_id", r.request_id, max_key_bytes);
  p.text("worker_id", r.worker_id, max_name);
  if (r.status != "COMPLETED" && r.status != "FAILED" && r.status != "FAILED_WITH_TERMINAL_ERROR")
    p.add("status", "expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, got "
                      + flow::quoted(r.status));
  if (p.payload("output", r.output_json, limits.max_payload_bytes))
    p.object("output", r.output_json, false);
  return p.done();
}

caf::error check(const msg::events_request& r, const check_limits& limits) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  p.uuid("workflow_id", r.workflow_id);
  p.range("after_seq", r.after_seq, 0, INT64_MAX / 2);
  p.range("limit", r.limit, 1, 1000);
  p.range("wait_ms", r.wait_ms, 0, limits.max_events_wait_ms);
  return p.done();
}

caf::error check(const msg::deadletter_request& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  if (r.op == "list") {
    p.range("after_id", r.after_id, 0, INT64_MAX / 2);
    p.range("limit", r.limit, 1, 1000);
    if (!r.ids.empty())
      p.add("ids", "a list names no ids (use after_id to page)");
  } else if (r.op == "replay") {
    for (size_t i = 0; i < r.ids.size(); ++i)
      if (r.ids[i] <= 0)
        p.add("ids[" + std::to_string(i) + "]",
              "expected a positive dead-letter id, got " + std::to_string(r.ids[i]));
  } else {
    p.add("op", "expected list or replay, got " + flow::quoted(r.op));
  }
  return p.done();
}

caf::error check(const msg::definitions_query& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  bool task = r.kind == "task";
  if (!task && r.kind != "workflow")
    p.add("kind", "expected task or workflow, got " + flow::quoted(r.kind));
  if (r.op == "list") {
    if (!r.name.empty())
      p.add("name", "a list names no definition, got " + flow::quoted(r.name));
    if (r.version != 0)
      p.add("version", "a list takes no version, got " + std::to_string(r.version));
  } else if (r.op == "get" || r.op == "delete") {
    p.text("name", r.name, max_name, true);
    if (task && r.version != 0)
      p.add("version", "task definitions have no versions, got " + std::to_string(r.version));
    else if (r.op == "get")
      p.range("version", r.version, 0, flow::max_count, "0 = the latest");
    else if (!task)
      // Deleting "the latest" would make another version the latest: name the one meant.
      p.range("version", r.version, 1, flow::max_count);
  } else {
    p.add("op", "expected list, get or delete, got " + flow::quoted(r.op));
  }
  return p.done();
}

caf::error check(const msg::namespace_request& r) {
  problems p;
  if (r.op != "list" && r.op != "create" && r.op != "remove")
    p.add("op", "expected list, create or remove, got " + flow::quoted(r.op));
  if (r.op == "list") {
    if (!r.name.empty())
      p.add("name", "a list names no namespace, got " + flow::quoted(r.name));
  } else if (!valid_namespace_name(r.name)) {
    p.add("name", "expected a namespace name (a-z, 0-9, '_', '-'; starting with a letter; "
                  "at most 63), got " + flow::quoted(r.name));
  }
  return p.done();
}

caf::error check(const msg::sink_request& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  if (r.op == "list") {
    if (!r.id.empty())
      p.add("id", "a list names no sink, got " + flow::quoted(r.id.substr(0, 64)));
  } else if (r.op == "get" || r.op == "update" || r.op == "remove") {
    p.uuid("id", r.id);
  } else if (r.op != "create") {
    p.add("op", "expected list, get, create, update or remove, got " + flow::quoted(r.op.substr(0, 64)));
  }
  // The sink's own fields are the engine's to check (engine/webhook_sinks.cpp): the CLI,
  // which writes without the api, passes the same checks.
  return p.done();
}

caf::error check(const msg::task_history_query& q) {
  problems p;
  p.uuid("namespace_id", q.namespace_id, false);
  p.text("name", q.task_def_name, max_name, true);
  p.range("limit", q.limit, 1, 1000);
  return p.done();
}

caf::error check(const msg::poll_data_query& q) {
  problems p;
  p.uuid("namespace_id", q.namespace_id, false);
  p.text("taskType", q.task_type, max_name, false);
  return p.done();
}

caf::error check(const msg::schedule_request& r) {
  problems p;
  p.uuid("namespace_id", r.namespace_id, false);
  if (r.op == "get" || r.op == "delete" || r.op == "pause" || r.op == "resume") {
    p.text("name", r.name, max_name, true);
    p.text("reason", r.reason, 1000);
  } else if (r.op == "save") {
    if (r.body.empty())
      p.add("body", "expected a SaveScheduleRequest (a JSON object)");
  } else if (r.op == "list") {
    p.text("workflowName", r.workflow_name, max_name);
  } else if (r.op == "next") {
    p.text("cronExpression", r.cron_expression, 200, true);
    p.text("zoneId", r.zone_id, 64);
    p.range("scheduleStartTime", r.start_ms, 0, INT64_MAX / 2);
    p.range("scheduleEndTime", r.end_ms, 0, INT64_MAX / 2);
    p.range("limit", r.limit, 1, 100);
  } else {
    p.add("op", "expected list, get, save, delete, pause, resume or next, got "
                  + flow::quoted(r.op));
  }
  return p.done();
}

caf::error check(const msg::audit_query& r) {
  problems p;
  p.range("since_ms", r.since_ms, 0, INT64_MAX / 2);
  p.text("action", r.action, max_name);
  p.uuid("cursor", r.cursor, false);
  p.range("limit", r.limit, 1, 1000);
  return p.done();
}

caf::error check_definitions_text(std::string_view text) {
  problems p;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    p.add("$", "expected a task or workflow definition (JSON object) or an array of them, "
               "got nothing");
  return p.done();
}

} // namespace nf::net
