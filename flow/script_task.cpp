#include "flow/script_task.hpp"

#include "flow/expression.hpp"
#include "flow/json_read.hpp"

namespace nf::flow {

namespace {

/// A required non-empty string in inputParameters; returns it when it is a literal.
const boost::json::string* required_text(const workflow_task& t, std::string_view key,
                                         std::string_view expected, const std::string& in,
                                         problems& out) {
  const auto* v = t.input_parameters.if_contains(key);
  if (v == nullptr || v->is_null()) {
    out.push_back({path_key(in, key), "missing required field (expected " + std::string(expected)
                                        + ")"});
    return nullptr;
  }
  const auto* s = v->if_string();
  if (s == nullptr || s->empty()) {
    out.push_back({path_key(in, key), "expected " + std::string(expected) + ", got "
                                        + describe(*v)});
    return nullptr;
  }
  return is_expression(*v) ? nullptr : s;
}

} // namespace

bool is_inline_evaluator(std::string_view s) {
  return s == "value-param" || s == "javascript" || s == "graaljs";
}

void check_script_task(const workflow_task& t, const std::string& path, problems& out) {
  auto in = path_key(path, "inputParameters");
  switch (t.type) {
    case task_type::inline_: {
      if (const auto* e = required_text(t, "evaluatorType", "one of value-param, javascript, graaljs",
                                        in, out);
          e != nullptr && !is_inline_evaluator(std::string_view(e->data(), e->size())))
        out.push_back({path_key(in, "evaluatorType"),
                       "expected one of " + std::string(inline_evaluators) + ", got "
                         + quoted(std::string_view(e->data(), e->size()))});
      required_text(t, "expression", "a script or, for value-param, an input parameter name", in,
                    out);
      break;
    }
    case task_type::lambda:
      required_text(t, "scriptExpression", "a JavaScript function body", in, out);
      break;
    case task_type::json_jq_transform:
      required_text(t, "queryExpression", "a jq program", in, out);
      break;
    default: break;
  }
}

} // namespace nf::flow
