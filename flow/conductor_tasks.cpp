#include "flow/conductor_tasks.hpp"

#include "flow/expression.hpp"
#include "flow/json_read.hpp"
#include "flow/problem.hpp"
#include "flow/safe_expr.hpp"

namespace nf::flow {

namespace {

task_result failed(std::string reason) {
  return {task_status::failed, {}, std::move(reason)};
}

constexpr const char* start_fields =
  "name, version, input, correlationId, priority, idempotencyKey";

// Reads a startWorkflow request into `out`, reporting each problem with its path. With
// `literal`, the request is a definition's: a ${…} value is checked when it resolves.
template <class Report>
void read_start(const boost::json::value& v, const std::string& path, bool literal,
                workflow_start_plan& out, Report report) {
  const auto* obj = v.if_object();
  if (obj == nullptr) {
    report(path, "expected an object {" + std::string(start_fields) + "}, got " + describe(v));
    return;
  }
  auto skip = [&](const boost::json::value& x) { return literal && is_expression(x); };
  const auto* name = obj->if_contains("name");
  if (name == nullptr || name->is_null())
    report(path_key(path, "name"), "missing required field (expected the name of the "
                                   "workflow to start)");
  for (const auto& kv : *obj) {
    const auto& x = kv.value();
    auto at = path_key(path, kv.key());
    if (skip(x))
      continue;
    std::string_view key = kv.key();
    if (key == "name") {
      if (x.is_string() && !x.get_string().empty())
        out.name = std::string(x.get_string());
      else if (!x.is_null())
        report(at, "expected a workflow name, got " + describe(x));
    } else if (key == "version") {
      if (x.is_null())
        continue;
      std::int64_t n = 0;
      problems ignored;
      if (read_count(x, "", n, ignored) && n >= 1)
        out.version = n;
      else
        report(at, "expected a version (an integer from 1), got " + describe(x));
    } else if (key == "input") {
      if (x.is_object())
        out.input = x.get_object();
      else if (!x.is_null())
        report(at, "expected an object, got " + describe(x));
    } else if (key == "correlationId" || key == "idempotencyKey") {
      auto& field = key == "correlationId" ? out.correlation_id : out.idempotency_key;
      if (x.is_string())
        field = std::string(x.get_string());
      else if (!x.is_null())
        report(at, "expected a string, got " + describe(x));
    } else if (key == "priority") {
      if (x.is_null())
        continue;
      std::int64_t n = 0;
      problems ignored;
      if (read_count(x, "", n, ignored) && n <= 99)
        out.priority = n;
      else
        report(at, "expected an integer from 0 to 99, got " + describe(x));
    } else if (key == "taskToDomain" || key == "workflowDef"
               || key == "externalInputPayloadStoragePath") {
      // Conductor's clients send these empty; a value would be ignored, so it is refused.
      bool empty = x.is_null() || (x.is_object() && x.get_object().empty())
                   || (x.is_string() && x.get_string().empty());
      if (!empty)
        report(at, "not supported by nodeflow (register the workflow and start it by name)");
    } else {
      report(at, "unknown field (expected one of " + std::string(start_fields) + ")");
    }
  }
}

}  // namespace

task_result run_decision(const workflow_task& t, const boost::json::object& input) {
  boost::json::value v;
  if (!t.case_expression.empty()) {
    safe_expr e;
    std::string error;
    boost::json::value root = input;
    if (!e.compile(t.case_expression, error) || !e.evaluate(root, v, error))
      return failed("caseExpression: " + error);
  } else if (const auto* p = input.if_contains(t.case_value_param)) {
    v = *p;
  }
  task_result r;
  r.output["caseOutput"] = boost::json::array{boost::json::string(case_label(v))};
  return r;
}

std::string sink_refusal(std::string_view sink) {
  if (sink == "conductor" || (sink.rfind("conductor:", 0) == 0 && sink.size() > 10))
    return {};
  auto colon = sink.find(':');
  auto prefix = sink.substr(0, colon);
  if (colon != std::string_view::npos
      && (prefix == "sqs" || prefix == "kafka" || prefix == "amqp" || prefix == "amqp_queue"
          || prefix == "amqp_exchange" || prefix == "ampq" || prefix == "nats"
          || prefix == "nats-stream" || prefix == "nats_stream" || prefix == "jsm"
          || prefix == "azure" || prefix == "gcppubsub" || prefix == "gcp_pubsub"
          || prefix == "ibm_mq"))
    return quoted(sink) + ": nodeflow has no " + std::string(prefix)
           + " client (only \"conductor\" and \"conductor:<queue>\", delivered to nodeflow's "
             "outbox and webhook sinks)";
  return "expected \"conductor\" or \"conductor:<queue>\", got " + quoted(sink);
}

task_result run_event(std::string_view sink, const boost::json::object& input,
                      const event_context& ctx) {
  if (auto why = sink_refusal(sink); !why.empty())
    return failed("sink: " + why);
  std::string queue = sink == "conductor" ? std::string(ctx.task_ref)
                                          : std::string(sink.substr(10));
  task_result r;
  r.output = input;
  r.output["workflowInstanceId"] = ctx.workflow_id;
  r.output["workflowType"] = ctx.workflow_type;
  r.output["workflowVersion"] = ctx.workflow_version;
  if (ctx.correlation_id.empty())
    r.output["correlationId"] = nullptr;
  else
    r.output["correlationId"] = ctx.correlation_id;
  r.output["event_produced"] = "conductor:" + std::string(ctx.workflow_type) + ':' + queue;
  return r;
}

workflow_start_plan plan_start_workflow(const boost::json::object& input) {
  workflow_start_plan out;
  const auto* v = input.if_contains("startWorkflow");
  std::string path = "inputParameters.startWorkflow";
  if (v == nullptr || v->is_null()) {
    out.error = path + ": missing required field (expected {" + start_fields + "})";
    return out;
  }
  read_start(*v, path, false, out, [&](const std::string& p, const std::string& m) {
    if (out.error.empty())
      out.error = p + ": " + m;
  });
  return out;
}

void check_start_workflow(const boost::json::value& request, const std::string& path,
                          problems& out) {
  if (is_expression(request))
    return;
  workflow_start_plan ignored;
  read_start(request, path, true, ignored, [&](const std::string& p, const std::string& m) {
    out.push_back({p, m});
  });
}

std::string dynamic_task_name(const workflow_task& t, const boost::json::object& input,
                              std::string& error) {
  const auto* v = input.if_contains(t.dynamic_task_name_param);
  if (v != nullptr && v->is_string() && !v->get_string().empty())
    return std::string(v->get_string());
  error = path_key("inputParameters", t.dynamic_task_name_param)
          + ": expected the name of the task to run, got "
          + (v == nullptr ? std::string("null") : describe(*v));
  return {};
}

} // namespace nf::flow

namespace nf::flow {

sub_workflow_start detached_start(const task_identity& id, workflow_start_plan plan,
                                  std::string_view starter_correlation_id) {
  sub_workflow_start s;
  s.parent = id;
  s.name = std::move(plan.name);
  s.version = plan.version;
  s.input = std::move(plan.input);
  s.detached = true;
  s.correlation_id = plan.correlation_id.empty() ? std::string(starter_correlation_id)
                                                 : std::move(plan.correlation_id);
  s.priority = plan.priority;
  s.idempotency_key = std::move(plan.idempotency_key);
  return s;
}

} // namespace nf::flow
