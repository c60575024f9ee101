#pragma once

// A workflow's taskToDomain (proto/domains.hpp): checking one given at start, and
// which domain it routes a task to.

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "proto/domains.hpp"

namespace nf::engine {

/// What is wrong with a taskToDomain mapping, as "taskToDomain.<key>: why"; empty when
/// every key is a task name or "*" and every value one domain.
inline std::string check_task_to_domain(const boost::json::object& m) {
  for (const auto& kv : m) {
    std::string field = "taskToDomain." + std::string(kv.key());
    if (kv.key().empty())
      return "taskToDomain: a task name must not be empty";
    const auto* d = kv.value().if_string();
    if (d == nullptr)
      return field + ": expected a domain (a string)";
    if (d->find(',') != boost::json::string::npos)
      return field + ": a list of fallback domains is not supported (expected one domain)";
    if (!valid_domain(*d))
      return field + ": expected 1-128 of A-Z a-z 0-9 _ -, got \"" + std::string(*d) + "\"";
  }
  return {};
}

/// The domain task `task_name` is routed to by `m` (its own entry, else "*"); empty = none.
inline std::string_view domain_of(const boost::json::object& m, std::string_view task_name) {
  const auto* v = m.if_contains(task_name);
  if (v == nullptr)
    v = m.if_contains("*");
  if (v == nullptr || !v->is_string() || is_no_domain(v->get_string()))
    return {};
  return v->get_string();
}

} // namespace nf::engine
