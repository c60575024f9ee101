#include "flow/own_task_id.hpp"

#include <boost/json/value.hpp>

namespace nf::flow {

namespace {

bool holds(const boost::json::value& v, std::string_view text) {
  if (const auto* s = v.if_string())
    return std::string_view(*s).find(text) != std::string_view::npos;
  if (const auto* a = v.if_array()) {
    for (const auto& el : *a)
      if (holds(el, text))
        return true;
  } else if (const auto* o = v.if_object()) {
    for (const auto& kv : *o)
      if (holds(kv.value(), text))
        return true;
  }
  return false;
}

void replace_all(boost::json::value& v, std::string_view from, std::string_view to) {
  if (auto* s = v.if_string()) {
    std::string text(*s);
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    *s = text;
  } else if (auto* a = v.if_array()) {
    for (auto& el : *a)
      replace_all(el, from, to);
  } else if (auto* o = v.if_object()) {
    for (auto& kv : *o)
      replace_all(kv.value(), from, to);
  }
}

} // namespace

std::string carry_own_task_id(boost::json::object& input, std::string_view previous,
                              const task_id_source* ids) {
  if (previous.empty() || ids == nullptr || !*ids)
    return {};
  bool found = false;
  for (const auto& kv : input)
    found = found || holds(kv.value(), previous);
  if (!found)
    return {};
  auto id = (*ids)();
  for (auto& kv : input)
    replace_all(kv.value(), previous, id);
  return id;
}

} // namespace nf::flow
