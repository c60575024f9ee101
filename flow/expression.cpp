#include "flow/expression.hpp"

#include <boost/json/serialize.hpp>

#include "flow/problem.hpp"

namespace nf::flow {

namespace {

// Classifies a parsed `${…}` path: sets the root, and returns the index of
// the first segment below it (or 0 with `error`).
std::size_t classify(const json_path_view& path, reference::root_t& root, std::string& error) {
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
    } else if (field == "workflowId" || field == "workflowType" || field == "version") {
      root = field == "workflowId"     ? reference::workflow_id
             : field == "workflowType" ? reference::workflow_type
                                       : reference::workflow_version;
      if (path.size() > 2) {
        error = "workflow." + std::string(field) + " has no fields";
        return 0;
      }
    } else {
      error = "unknown workflow field " + quoted(field)
              + " (expected input, variables, workflowId, workflowType or version)";
      return 0;
    }
  } else if (field == "input" || field == "output") {
    root = field == "input" ? reference::task_input : reference::task_output;
  } else {
    error = "expected \"input\" or \"output\" after task reference " + quoted(head) + ", got "
            + quoted(field);
    return 0;
  }
  return 2;
}

bool parse_reference(std::string_view body, reference& out, std::string& error) {
  json_path_view path;
  if (!parse_path(body, false, path, error))
    return false;
  if (classify(path, out.root, error) == 0)
    return false;
  if (out.root == reference::task_input || out.root == reference::task_output)
    out.task_ref = path[0].name;
  if (out.root == reference::secret)
    out.task_ref = path[1].name;
  out.path.reserve(path.size() - 2);
  for (auto seg = path.begin() + 2; seg != path.end(); ++seg)
    out.path.push_back({seg->kind, std::string(seg->name), seg->number});
  return true;
}

void append_text(std::string& out, const boost::json::value& v) {
  if (const auto* s = v.if_string())
    out.append(s->data(), s->size());
  else
    out += boost::json::serialize(v);
}

}  // namespace

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
    if (!parse_path(text.substr(i + 2, close - i - 2), false, scratch, inner_error)
        || classify(scratch, root, inner_error) == 0) {
      error = "invalid expression " + quoted(text.substr(i, close - i + 1)) + ": " + inner_error;
      return false;
    }
    bool task = root == reference::task_input || root == reference::task_output;
    refs.push_back({root, task ? scratch[0].name : std::string_view()});
    i = close + 1;
  }
  return true;
}

boost::json::value evaluate(const reference& ref, const scope& s) {
  const boost::json::object* root = nullptr;
  switch (ref.root) {
    case reference::workflow_id: return boost::json::string(s.workflow_id);
    case reference::workflow_type: return boost::json::string(s.workflow_type);
    case reference::workflow_version: return s.workflow_version;
    case reference::secret: return boost::json::string("${secrets." + ref.task_ref + "}");
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

boost::json::value resolve(const boost::json::value& tmpl, const scope& s) {
  if (const auto* str = tmpl.if_string()) {
    if (str->find("${") == boost::json::string::npos)
      return tmpl;
    parsed_template t;
    std::string error;
    if (!parse_template(*str, t, error))
      return tmpl;
    if (t.whole_value())
      return evaluate(t.parts[0].ref, s);
    std::string out;
    for (const auto& part : t.parts) {
      if (part.is_reference)
        append_text(out, evaluate(part.ref, s));
      else
        out += part.literal;
    }
    return boost::json::string(out);
  }
  if (const auto* arr = tmpl.if_array()) {
    boost::json::array out;
    out.reserve(arr->size());
    for (const auto& el : *arr)
      out.push_back(resolve(el, s));
    return out;
  }
  if (const auto* obj = tmpl.if_object())
    return resolve(*obj, s);
  return tmpl;
}

boost::json::object resolve(const boost::json::object& tmpl, const scope& s) {
  boost::json::object out;
  out.reserve(tmpl.size());
  for (const auto& kv : tmpl)
    out.emplace(kv.key(), resolve(kv.value(), s));
  return out;
}

} // namespace nf::flow
