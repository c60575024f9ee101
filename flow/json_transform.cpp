#include "flow/json_transform.hpp"

#include "flow/json_path.hpp"
#include "flow/problem.hpp"

namespace nf::flow {

namespace {

bool compile(boost::json::string_view s, json_path& path, std::string& error) {
  return parse_path(std::string_view(s.data(), s.size()).substr(1), true, path, error);
}

bool has_wildcard(const json_path& path) {
  for (const auto& seg : path)
    if (seg.kind == path_segment::wildcard)
      return true;
  return false;
}

}  // namespace

bool is_transform_path(boost::json::string_view s) {
  return s == "$" || s.starts_with("$.") || s.starts_with("$[");
}

bool check_mapping(const boost::json::value& mapping, const std::string& path,
                   const std::function<void(const std::string&, const std::string&)>& report) {
  bool ok = true;
  if (const auto* s = mapping.if_string()) {
    json_path p;
    std::string error;
    if (is_transform_path(*s) && !compile(*s, p, error)) {
      report(path, "invalid path " + quoted(*s) + ": " + error);
      ok = false;
    }
  } else if (const auto* arr = mapping.if_array()) {
    for (std::size_t i = 0; i < arr->size(); ++i)
      ok = check_mapping((*arr)[i], path_index(path, i), report) && ok;
  } else if (const auto* obj = mapping.if_object()) {
    for (const auto& kv : *obj)
      ok = check_mapping(kv.value(), path_key(path, kv.key()), report) && ok;
  }
  return ok;
}

boost::json::value apply_mapping(const boost::json::value& mapping,
                                 const boost::json::value& source) {
  if (const auto* s = mapping.if_string()) {
    if (!is_transform_path(*s))
      return mapping;
    json_path p;
    std::string error;
    if (!compile(*s, p, error))
      return nullptr;
    if (!has_wildcard(p)) {
      const auto* v = find(source, p);
      return v == nullptr ? boost::json::value(nullptr) : *v;
    }
    std::vector<const boost::json::value*> matches;
    find_all(source, p, 0, matches);
    boost::json::array out;
    out.reserve(matches.size());
    for (const auto* m : matches)
      out.push_back(*m);
    return out;
  }
  if (const auto* arr = mapping.if_array()) {
    boost::json::array out;
    out.reserve(arr->size());
    for (const auto& el : *arr)
      out.push_back(apply_mapping(el, source));
    return out;
  }
  if (const auto* obj = mapping.if_object()) {
    boost::json::object out;
    out.reserve(obj->size());
    for (const auto& kv : *obj)
      out.emplace(kv.key(), apply_mapping(kv.value(), source));
    return out;
  }
  return mapping;
}

} // namespace nf::flow
