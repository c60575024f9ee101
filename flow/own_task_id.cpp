#include "flow/own_task_id.hpp"

#include <boost/json/value.hpp>

namespace nf::flow {

namespace {

// Replaces `from` in every string under `v` with `id`, made by `ids` at the first match:
// one walk, and a string is rewritten only when it holds `from`.
void carry(boost::json::value& v, std::string_view from, const task_id_source& ids,
           std::string& id) {
  if (auto* s = v.if_string()) {
    auto at = std::string_view(*s).find(from);
    if (at == std::string_view::npos)
      return;
    if (id.empty())
      id = ids();
    std::string text(*s);
    for (; at != std::string::npos; at = text.find(from, at + id.size()))
      text.replace(at, from.size(), id);
    *s = text;
  } else if (auto* a = v.if_array()) {
    for (auto& el : *a)
      carry(el, from, ids, id);
  } else if (auto* o = v.if_object()) {
    for (auto& kv : *o)
      carry(kv.value(), from, ids, id);
  }
}

} // namespace

std::string carry_own_task_id(boost::json::object& input, std::string_view previous,
                              const task_id_source* ids) {
  std::string id;
  if (previous.empty() || ids == nullptr || !*ids)
    return id;
  for (auto& kv : input)
    carry(kv.value(), previous, *ids, id);
  return id;
}

} // namespace nf::flow
