#include "flow/expression.hpp"

#include <boost/json/serialize.hpp>

#include "flow/problem.hpp"

namespace nf::flow {

namespace {

// Classifies a parsed `${…}` path: sets the root, and returns the index of
// the first segment below it (or 0 with `error`).
std::size_t classify(const json_path_view& path, reference::root_t& root, std::string& error) {
  if (path.size() == 1 && path[0].kind == path_segment::key) {
    if (path[0].name == own_task_id_name) {
      root = reference::own_task_id;
      return 1;
    }
    // Conductor also reads the server's environment variables here; nodeflow never
    // exposes its own environment to a definition.
    error = "expected workflow.<field>, <taskReferenceName>.input|output or "
            + std::string(own_task_id_name) + ", got " + quoted(path[0].name)
            + " (environment variables are not read)";
    return 0;
  }
  if (path.size() < 2 || path[0].kind != path_segment::key || path[1].kind != path_segment::key) {
    error = "expected workflow.<field> or <taskReferenceName>.input|output";
    return 0;
  }
  auto head = path[0].name;
  auto field = path[1].name;
  if (head == "secrets" && path.size() == 2) {
    if (!valid_secret_name(field)) {
      error = "secret name " + quoted(field)
              + ": expected 1-128 of A-Z a-z 0-9 _ - (not starting with -)";
      return 0;
    }
    root = reference::secret;
    return 2;
  }
  if (head == "workflow") {
    if (field == "input") {
      root = reference::workflow_input;
    } else if (field == "variables") {
      root = reference::workflow_variables;
    } else if (field == "workflowId" || field == "workflowType" || field == "version"
               || field == "correlationId") {
      root = field == "workflowId"      ? reference::workflow_id
             : field == "workflowType"  ? reference::workflow_type
             : field == "correlationId" ? reference::workflow_correlation_id
                                        : reference::workflow_version;
      if (path.size() > 2) {
        error = "workflow." + std::string(field) + " has no fields";
        return 0;
      }
    } else {
      error = "unknown workflow field " + quoted(field)
              + " (expected input, variables, workflowId, workflowType, version or "
                "correlationId)";
      return 0;
    }
  } else if (field == "input" || field == "output") {
    root = field == "input" ? reference::task_input : reference::task_output;
  } else if (parse_task_field(field)) {
    root = reference::task_field;
    if (path.size() > 2) {
      error = std::string(head) + "." + std::string(field) + " has no fields";
      return 0;
    }
  } else if (field == "taskId" || field == "workerId" || field == "callbackAfterSeconds") {
    error = std::string(head) + "." + std::string(field)
            + " is not available in expressions: the workflow's decisions do not know it "
              "(read it through the API, or have the worker put it in the task's output)";
    return 0;
  } else {
    error = "expected \"input\", \"output\" or a task field (status, "
            "reasonForIncompletion, retryCount, …) after task reference "
            + quoted(head) + ", got " + quoted(field);
    return 0;
  }
  return 2;
}

// Splits a trailing `.name()` off `body`: `path` is what precedes it. A body that
// does not end in ')' has no function.
bool split_function(std::string_view body, std::string_view& path, path_function& fn,
                    std::string& error) {
  path = body;
  fn = path_function::none;
  if (body.empty() || body.back() != ')')
    return true;
  auto open = body.rfind('(');
  if (open == std::string_view::npos) {
    error = "unbalanced ')'";
    return false;
  }
  if (open + 2 != body.size()) {
    error = "function arguments are not supported (expected name())";
    return false;
  }
  auto dot = body.rfind('.', open);
  if (dot == std::string_view::npos) {
    error = "expected <path>.<function>()";
    return false;
  }
  auto name = body.substr(dot + 1, open - dot - 1);
  fn = parse_path_function(name);
  if (fn == path_function::none) {
    error = "unknown function " + quoted(std::string(name) + "()")
            + " (expected length(), min(), max(), avg(), sum(), keys(), first() or last())";
    return false;
  }
  path = body.substr(0, dot);
  return true;
}

// Checks one ${…} body: its path, root and function. `path` is reused.
std::size_t check_reference(std::string_view body, json_path_view& path,
                            reference::root_t& root, path_function& fn, std::string& error) {
  std::string_view text;
  if (!split_function(body, text, fn, error) || !parse_path(text, false, path, error))
    return 0;
  auto below = classify(path, root, error);
  if (below == 0)
    return 0;
  if (fn != path_function::none && root == reference::secret) {
    // flow never knows a secret's value, so nothing can be computed from it.
    error = "a secret takes no function";
    return 0;
  }
  if (fn != path_function::none && root == reference::own_task_id) {
    error = std::string(own_task_id_name) + " takes no function";
    return 0;
  }
  return below;
}

bool parse_reference(std::string_view body, reference& out, std::string& error) {
  json_path_view path;
  auto below = check_reference(body, path, out.root, out.fn, error);
  if (below == 0)
    return false;
  if (out.root == reference::task_input || out.root == reference::task_output
      || out.root == reference::task_field)
    out.task_ref = path[0].name;
  if (out.root == reference::task_field)
    out.field = *parse_task_field(path[1].name);
  if (out.root == reference::secret)
    out.task_ref = path[1].name;
  out.path.reserve(path.size() - below);
  for (auto seg = path.begin() + static_cast<std::ptrdiff_t>(below); seg != path.end(); ++seg)
    out.path.push_back({seg->kind, std::string(seg->name), seg->number});
  return true;
}

// Jayway's aggregations: the numbers of an array, as doubles.
bool aggregate(path_function f, const boost::json::value& v, boost::json::value& out,
               std::string& error) {
  double acc = 0;
  std::size_t count = 0;
  if (const auto* arr = v.if_array())
    for (const auto& el : *arr) {
      if (!el.is_number())
        continue;
      double x = el.to_number<double>();
      if (count == 0)
        acc = f == path_function::avg || f == path_function::sum ? 0 : x;
      if (f == path_function::min)
        acc = x < acc ? x : acc;
      else if (f == path_function::max)
        acc = x > acc ? x : acc;
      else
        acc += x;
      ++count;
    }
  if (count == 0) {
    error = std::string(to_string(f)) + "() needs an array with at least one number, got "
            + (v.is_array() ? std::string("none") : boost::json::serialize(v));
    return false;
  }
  out = f == path_function::avg ? acc / static_cast<double>(count) : acc;
  return true;
}

void append_text(std::string& out, const boost::json::value& v) {
  if (const auto* s = v.if_string())
    out.append(s->data(), s->size());
  else
    out += boost::json::serialize(v);
}

}  // namespace

path_function parse_path_function(std::string_view name) {
  for (auto f : {path_function::length, path_function::min, path_function::max,
                 path_function::avg, path_function::sum, path_function::keys,
                 path_function::first, path_function::last})
    if (name == to_string(f))
      return f;
  return path_function::none;
}

const char* to_string(path_function f) {
  switch (f) {
    case path_function::none: return "";
    case path_function::length: return "length";
    case path_function::min: return "min";
    case path_function::max: return "max";
    case path_function::avg: return "avg";
    case path_function::sum: return "sum";
    case path_function::keys: return "keys";
    case path_function::first: return "first";
    case path_function::last: return "last";
  }
  return "";
}

bool apply_path_function(path_function f, const boost::json::value& v,
                         boost::json::value& out, std::string& error) {
  switch (f) {
    case path_function::none: out = v; return true;
    case path_function::length:
      if (const auto* arr = v.if_array())
        out = static_cast<std::int64_t>(arr->size());
      else if (const auto* obj = v.if_object())
        out = static_cast<std::int64_t>(obj->size());
      else
        out = nullptr;
      return true;
    case path_function::keys:
      if (const auto* obj = v.if_object()) {
        boost::json::array names;
        names.reserve(obj->size());
        for (const auto& kv : *obj)
          names.emplace_back(kv.key());
        out = std::move(names);
      } else {
        out = nullptr;
      }
      return true;
    case path_function::first:
    case path_function::last: {
      const auto* arr = v.if_array();
      if (arr == nullptr || arr->empty()) {
        error = std::string(to_string(f)) + "() needs a non-empty array, got "
                + boost::json::serialize(v);
        return false;
      }
      out = f == path_function::first ? arr->front() : arr->back();
      return true;
    }
    case path_function::min:
    case path_function::max:
    case path_function::avg:
    case path_function::sum: return aggregate(f, v, out, error);
  }
  out = v;
  return true;
}

bool valid_secret_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name[0] == '-')
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == '-'))
      return false;
  return true;
}

bool parse_template(std::string_view text, parsed_template& out, std::string& error) {
  out.parts.clear();
  out.parts.reserve(4);
  std::string literal;
  std::size_t i = 0;
  while (i < text.size()) {
    auto dollar = text.find('$', i);
    if (dollar == std::string_view::npos)
      dollar = text.size();
    literal.append(text.substr(i, dollar - i));
    i = dollar;
    if (i >= text.size())
      break;
    if (text.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      literal += text[i++];
      continue;
    }
    auto close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      error = "unterminated ${ at offset " + std::to_string(i) + " (expected })";
      return false;
    }
    template_part part;
    part.is_reference = true;
    std::string inner_error;
    if (!parse_reference(text.substr(i + 2, close - i - 2), part.ref, inner_error)) {
      error = "invalid expression " + quoted(text.substr(i, close - i + 1)) + ": " + inner_error;
      return false;
    }
    if (!literal.empty())
      out.parts.push_back({std::move(literal), false, {}});
    literal.clear();
    out.parts.push_back(std::move(part));
    i = close + 1;
  }
  if (!literal.empty() || out.parts.empty())
    out.parts.push_back({std::move(literal), false, {}});
  return true;
}

bool scan_template(std::string_view text, json_path_view& scratch,
                   std::vector<reference_view>& refs, std::string& error) {
  for (std::size_t i = text.find("${"); i != std::string_view::npos; i = text.find("${", i)) {
    if (i > 0 && text[i - 1] == '$') {  // "$${" is a literal "${"
      i += 2;
      continue;
    }
    auto close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      error = "unterminated ${ at offset " + std::to_string(i) + " (expected })";
      return false;
    }
    std::string inner_error;
    reference::root_t root = reference::workflow_input;
    path_function fn = path_function::none;
    if (check_reference(text.substr(i + 2, close - i - 2), scratch, root, fn, inner_error)
        == 0) {
      error = "invalid expression " + quoted(text.substr(i, close - i + 1)) + ": " + inner_error;
      return false;
    }
    bool task = root == reference::task_input || root == reference::task_output
                || root == reference::task_field;
    refs.push_back({root, task ? scratch[0].name : std::string_view()});
    i = close + 1;
  }
  return true;
}

std::optional<task_field_name> parse_task_field(std::string_view name) {
  static constexpr std::pair<std::string_view, task_field_name> fields[] = {
    {"status", task_field_name::status},
    {"reasonForIncompletion", task_field_name::reason_for_incompletion},
    {"retryCount", task_field_name::retry_count},
    {"iteration", task_field_name::iteration},
    {"taskType", task_field_name::task_type},
    {"taskDefName", task_field_name::task_def_name},
    {"referenceTaskName", task_field_name::reference_task_name},
    {"scheduledTime", task_field_name::scheduled_time},
    {"startTime", task_field_name::start_time},
    {"endTime", task_field_name::end_time},
    {"pollCount", task_field_name::poll_count},
    {"workflowInstanceId", task_field_name::workflow_instance_id},
    {"correlationId", task_field_name::correlation_id},
  };
  for (const auto& [label, f] : fields)
    if (label == name)
      return f;
  return std::nullopt;
}

namespace {

// The value the reference's path denotes, before its function.
boost::json::value value_at(const reference& ref, const scope& s) {
  const boost::json::object* root = nullptr;
  switch (ref.root) {
    case reference::workflow_id: return boost::json::string(s.workflow_id);
    case reference::workflow_type: return boost::json::string(s.workflow_type);
    case reference::workflow_version: return s.workflow_version;
    case reference::workflow_correlation_id:
      return s.correlation_id.empty() ? boost::json::value(nullptr)
                                      : boost::json::value(boost::json::string(s.correlation_id));
    case reference::secret: return boost::json::string("${secrets." + ref.task_ref + "}");
    case reference::own_task_id:
      if (s.own_task_id)
        return boost::json::string(s.own_task_id());
      return nullptr;
    case reference::task_field:
      return s.task_field ? s.task_field(ref.task_ref, ref.field) : boost::json::value(nullptr);
    case reference::workflow_input: root = s.input; break;
    case reference::workflow_variables: root = s.variables; break;
    case reference::task_input:
    case reference::task_output:
      if (s.task)
        root = s.task(ref.task_ref, ref.root == reference::task_output);
      break;
  }
  if (root == nullptr)
    return nullptr;
  if (ref.path.empty())
    return *root;
  const auto* v = find(*root, ref.path);
  return v == nullptr ? boost::json::value(nullptr) : *v;
}

}  // namespace

bool evaluate(const reference& ref, const scope& s, boost::json::value& out,
              std::string& error) {
  if (ref.fn == path_function::none) {
    out = value_at(ref, s);
    return true;
  }
  return apply_path_function(ref.fn, value_at(ref, s), out, error);
}

boost::json::value evaluate(const reference& ref, const scope& s) {
  boost::json::value out;
  std::string error;
  if (!evaluate(ref, s, out, error))
    return nullptr;
  return out;
}

bool is_expression(const boost::json::value& v) {
  const auto* s = v.if_string();
  return s != nullptr && s->find("${") != boost::json::string::npos;
}

boost::json::value resolve(const boost::json::value& tmpl, const scope& s, std::string* error) {
  if (const auto* str = tmpl.if_string()) {
    if (str->find("${") == boost::json::string::npos)
      return tmpl;
    parsed_template t;
    std::string parse_error;
    if (!parse_template(*str, t, parse_error))
      return tmpl;
    // A failed function yields null; the first failure is reported.
    auto value_of = [&](const reference& ref) {
      boost::json::value v;
      std::string why;
      if (evaluate(ref, s, v, why))
        return v;
      if (error != nullptr && error->empty())
        *error = quoted(*str) + ": " + why;
      return boost::json::value(nullptr);
    };
    if (t.whole_value())
      return value_of(t.parts[0].ref);
    std::string out;
    for (const auto& part : t.parts) {
      if (part.is_reference)
        append_text(out, value_of(part.ref));
      else
        out += part.literal;
    }
    return boost::json::string(out);
  }
  if (const auto* arr = tmpl.if_array()) {
    boost::json::array out;
    out.reserve(arr->size());
    for (const auto& el : *arr)
      out.push_back(resolve(el, s, error));
    return out;
  }
  if (const auto* obj = tmpl.if_object())
    return resolve(*obj, s, error);
  return tmpl;
}

boost::json::object resolve(const boost::json::object& tmpl, const scope& s, std::string* error) {
  boost::json::object out;
  out.reserve(tmpl.size());
  for (const auto& kv : tmpl)
    out.emplace(kv.key(), resolve(kv.value(), s, error));
  return out;
}

} // namespace nf::flow
