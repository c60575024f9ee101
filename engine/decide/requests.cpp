#include "engine/decide/requests.hpp"

#include <boost/json/parse.hpp>

#include "engine/decide/task_domains.hpp"
#include "flow/json_read.hpp"
#include "flow/problem.hpp"
#include "flow/uuid.hpp"
#include "store/input_errors.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"

namespace nf::engine {

namespace {

caf::error invalid(const std::string& what) {
  return nf::make_error(nf::errc::invalid, what);
}

caf::expected<boost::json::object> object_of(const std::string& text, const char* field) {
  boost::json::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec)
    return invalid(std::string{field} + ": expected a JSON object, got malformed JSON ("
                   + ec.message() + ")");
  if (!v.is_object())
    return invalid(std::string{field} + ": expected a JSON object, got " + flow::describe(v));
  return std::move(v.get_object());
}

std::optional<caf::error> check_uuid(const std::string& v, const char* field) {
  if (flow::is_uuid(v))
    return std::nullopt;
  return invalid(std::string{field} + ": expected a UUID, got " + flow::quoted(v));
}

} // namespace

caf::expected<store::start_request> to_start(const msg::start_request& m) {
  store::start_request r;
  if (!m.namespace_id.empty()) {
    if (auto e = check_uuid(m.namespace_id, "namespace_id"))
      return *e;
    r.ns = namespace_id{m.namespace_id};
  }
  r.name = m.workflow_name;
  if (m.version < 0)
    return invalid("version: expected 0 (the latest) or a positive version, got "
                   + std::to_string(m.version));
  if (m.version > 0)
    r.version = m.version;
  auto input = object_of(m.input_json.empty() ? "{}" : m.input_json, "input");
  if (!input)
    return std::move(input.error());
  r.input = std::move(*input);
  if (!m.correlation_id.empty())
    r.correlation_id = m.correlation_id;
  if (!m.idempotency_key.empty())
    r.idempotency_key = m.idempotency_key;
  else if (!m.request_id.empty())
    r.idempotency_key = std::string{request_id_key_prefix} + m.request_id;
  r.priority = m.priority;
  if (!m.task_to_domain_json.empty()) {
    auto domains = object_of(m.task_to_domain_json, "taskToDomain");
    if (!domains)
      return std::move(domains.error());
    if (auto why = check_task_to_domain(*domains); !why.empty())
      return invalid(why);
    r.task_to_domain = std::move(*domains);
  }
  if (auto ps = store::check_start_request(r); !ps.empty())
    return store::invalid_input(ps);
  return r;
}

caf::expected<store::task_result> to_completion(const msg::task_result& m) {
  if (auto e = check_uuid(m.task_id, "task_id"))
    return *e;
  if (auto e = check_uuid(m.workflow_id, "workflow_id"))
    return *e;
  if (auto e = check_uuid(m.lease_token, "lease_token"))
    return *e;
  store::task_result r;
  if (!m.namespace_id.empty()) {
    if (auto e = check_uuid(m.namespace_id, "namespace_id"))
      return *e;
    r.ns = namespace_id{m.namespace_id};
  }
  r.workflow = workflow_id{m.workflow_id};
  r.task = task_id{m.task_id};
  r.token = lease_token{m.lease_token};
  if (m.status == "COMPLETED")
    r.outcome = store::task_outcome::completed;
  else if (m.status == "FAILED")
    r.outcome = store::task_outcome::failed;
  else if (m.status == "FAILED_WITH_TERMINAL_ERROR")
    r.outcome = store::task_outcome::failed_terminal;
  else
    return invalid("status: expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, got "
                   + flow::quoted(m.status));
  if (!m.output_json.empty()) {
    auto out = store::json_from_text(m.output_json, "output");
    if (!out)
      return std::move(out.error());
    r.output = std::move(*out);
  }
  if (!m.reason.empty()) {
    if (m.reason.find('\0') != std::string::npos)
      return invalid("reason: expected text without NUL characters");
    r.reason = m.reason;
  }
  return r;
}

caf::expected<command_request> to_command(const msg::workflow_command& m) {
  if (!msg::is_workflow_command_op(m.op))
    return invalid(std::string{"op: expected "} + msg::workflow_command_ops_text + ", got "
                   + flow::quoted(m.op));
  if (auto e = check_uuid(m.workflow_id, "workflow_id"))
    return *e;
  if (m.reason.find('\0') != std::string::npos)
    return invalid("reason: expected text without NUL characters");
  command_request c;
  if (!m.namespace_id.empty()) {
    if (auto e = check_uuid(m.namespace_id, "namespace_id"))
      return *e;
    c.ns = namespace_id{m.namespace_id};
  }
  c.op = m.op;
  c.id = workflow_id{m.workflow_id};
  c.reason = m.reason;
  c.task_ref = m.task_ref;
  c.iteration = m.iteration;
  c.actor = m.actor;
  c.origin = m.origin;
  c.request_id = m.request_id;
  if (m.op == "rerun" && m.task_ref.empty())
    return invalid("task_ref: a rerun names the task to rerun from");
  if (m.op == "skip" && m.task_ref.empty())
    return invalid("task_ref: a skip names the task to skip");
  if (m.op == "variables" && m.input_json.empty())
    return invalid("input: the variables to set, as a JSON object");
  if (m.iteration < 0)
    return invalid("iteration: expected an integer >= 0, got " + std::to_string(m.iteration));
  if (!m.input_json.empty()) {
    auto input = object_of(m.input_json, "input");
    if (!input)
      return std::move(input.error());
    c.input = std::move(*input);
  }
  if (!m.output_json.empty()) {
    auto output = object_of(m.output_json, "output");
    if (!output)
      return std::move(output.error());
    c.output = std::move(*output);
  }
  if (m.op == "state") {
    if (m.task_ref.empty() && m.input_json.empty())
      return invalid("task_ref: a state update sets variables (input), ends a task, or both");
    if (!m.task_ref.empty()) {
      auto status = flow::parse_task_status(m.task_status);
      if (!status)
        return invalid("task_status: expected COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, "
                       "got \"" + m.task_status + "\"");
      c.task_status = *status;
      c.task_id = m.task_id;
    }
  }
  return c;
}

} // namespace nf::engine
