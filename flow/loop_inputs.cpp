#include "flow/loop_inputs.hpp"

#include "flow/expression.hpp"
#include "flow/json_read.hpp"

namespace nf::flow {

namespace {

std::string keep_error(const boost::json::value& v) {
  return "keepLastN: expected an integer >= 1, got " + describe(v);
}

} // namespace

bool iterates_items(const workflow_task& t) {
  return !t.items.is_null() || t.input_parameters.contains("items");
}

const boost::json::array* loop_items(const boost::json::object& input, std::string& error) {
  const auto* v = input.if_contains("items");
  if (v != nullptr && v->is_array())
    return &v->get_array();
  error = "items: expected a list, got " + (v == nullptr ? std::string("nothing") : describe(*v));
  return nullptr;
}

std::int64_t keep_last_n(const boost::json::object& input, std::string& error) {
  const auto* v = input.if_contains("keepLastN");
  if (v == nullptr || v->is_null())
    return 0;
  if (v->is_int64() && v->get_int64() >= 1)
    return v->get_int64();
  if (v->is_uint64() && v->get_uint64() >= 1)
    return v->get_uint64() > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(v->get_uint64());
  error = keep_error(*v);
  return -1;
}

void check_loop_inputs(const workflow_task& t, const std::string& path, problems& out) {
  if (!t.items.is_null() && t.input_parameters.contains("items"))
    out.push_back({path_key(path, "items"),
                   "given twice: at the top level and in inputParameters (keep one)"});
  const boost::json::value* items = !t.items.is_null() ? &t.items
                                                      : t.input_parameters.if_contains("items");
  if (items != nullptr && !items->is_array() && !is_expression(*items))
    out.push_back({!t.items.is_null() ? path_key(path, "items")
                                      : path_key(path_key(path, "inputParameters"), "items"),
                   "expected a list or an expression giving one like "
                   "${workflow.input.list}, got " + describe(*items)});
  const auto* k = t.input_parameters.if_contains("keepLastN");
  if (k != nullptr && !is_expression(*k)) {
    std::string error;
    if (keep_last_n(t.input_parameters, error) < 0)
      out.push_back({path_key(path_key(path, "inputParameters"), "keepLastN"),
                     "expected an integer >= 1, got " + describe(*k)});
  }
}

} // namespace nf::flow
