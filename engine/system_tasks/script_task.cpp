#include "engine/system_tasks/script_task.hpp"

#include <boost/json/parse.hpp>

#include "engine/system_tasks/task_result.hpp"
#include "flow/json_read.hpp"
#include "flow/script_task.hpp"

namespace nf::engine {

namespace json = boost::json;

namespace {

msg::task_result failed(const msg::leased_task& task, std::string status,
                        const std::string& message) {
  return system_task_result(task, std::move(status), json::object{{"error", message}},
                   task.task_type + ": " + message);
}

/// A required non-empty string parameter, or the problem with it.
std::variant<std::string, std::string> text_param(const json::object& in, std::string_view key) {
  const auto* v = in.if_contains(key);
  if (v == nullptr || v->is_null())
    return std::variant<std::string, std::string>(std::in_place_index<1>,
                                                  std::string(key) + ": missing required field");
  if (!v->is_string() || v->get_string().empty())
    return std::variant<std::string, std::string>(
      std::in_place_index<1>, std::string(key) + ": expected a non-empty string, got "
                                + flow::describe(*v));
  return std::variant<std::string, std::string>(std::in_place_index<0>,
                                                std::string(v->get_string()));
}

json::value parse_value(const std::string& text, bool& ok) {
  json::parse_options opt;
  opt.max_depth = 10000; // a script's output is as deep as it likes, within its memory
  json::error_code ec;
  auto v = json::parse(text, ec, {}, opt);
  ok = !ec;
  return v;
}

} // namespace

std::variant<script::request, msg::task_result> read_script_task(const msg::leased_task& task) {
  const std::string terminal = "FAILED_WITH_TERMINAL_ERROR";
  bool ok = false;
  auto input = parse_value(task.input_json, ok);
  if (!ok || !input.is_object())
    return failed(task, terminal, "input: expected a JSON object");
  const auto& in = input.get_object();
  script::request r;
  r.input_json = task.input_json;
  auto take = [&](std::string_view key, std::string& out) -> std::optional<msg::task_result> {
    auto v = text_param(in, key);
    if (v.index() == 1)
      return failed(task, terminal, std::get<1>(v));
    out = std::move(std::get<0>(v));
    return std::nullopt;
  };
  if (task.task_type == "INLINE") {
    std::string evaluator, expression;
    if (auto bad = take("evaluatorType", evaluator))
      return *bad;
    if (!flow::is_inline_evaluator(evaluator))
      return failed(task, terminal, "evaluatorType: expected one of "
                                      + std::string(flow::inline_evaluators) + ", got "
                                      + flow::quoted(evaluator));
    if (auto bad = take("expression", expression))
      return *bad;
    if (evaluator == "value-param") {
      const auto* v = in.if_contains(expression);
      return system_task_result(task, "COMPLETED", json::object{{"result", v ? *v : json::value()}}, "");
    }
    r.lang = script::language::javascript;
    r.program = std::move(expression);
    return r;
  }
  if (task.task_type == "LAMBDA") {
    std::string body;
    if (auto bad = take("scriptExpression", body))
      return *bad;
    // Conductor runs the script as a function body; the line breaks keep a trailing
    // `// comment` from swallowing the closing brace.
    r.lang = script::language::javascript;
    r.program = "function scriptFun(){\n" + body + "\n}\nscriptFun();";
    return r;
  }
  if (task.task_type == "JSON_JQ_TRANSFORM") {
    if (auto bad = take("queryExpression", r.program))
      return *bad;
    r.lang = script::language::jq;
    return r;
  }
  return failed(task, terminal, "not a script task type");
}

msg::task_result script_task_result(const msg::leased_task& task, const script::answer& a) {
  using script::outcome;
  switch (a.kind) {
    case outcome::ok: break;
    case outcome::compile:
      if (task.task_type == "JSON_JQ_TRANSFORM")
        return failed(task, "FAILED", "jq program does not compile: " + a.message);
      // Conductor's graaljs takes modern JavaScript; duktape does not, and says only
      // "parse error": name what it lacks.
      return failed(task, "FAILED", "script does not compile: " + a.message
                                      + " (scripts run as ECMAScript 5.1: no let, arrow "
                                        "functions, classes or template literals)");
    case outcome::crash: return failed(task, "FAILED", "sandbox failed: " + a.message);
    default: return failed(task, "FAILED", a.message);
  }
  json::array values;
  for (const auto& text : a.values) {
    bool ok = false;
    auto v = parse_value(text, ok);
    if (!ok)
      return failed(task, "FAILED", "the script's result is not JSON");
    values.push_back(std::move(v));
  }
  if (task.task_type == "JSON_JQ_TRANSFORM") {
    json::value first = values.empty() ? json::value() : values.front();
    return system_task_result(task, "COMPLETED",
                     json::object{{"result", std::move(first)}, {"resultList", std::move(values)}},
                     "");
  }
  return system_task_result(task, "COMPLETED",
                   json::object{{"result", values.empty() ? json::value() : values.front()}}, "");
}

} // namespace nf::engine
