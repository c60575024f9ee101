#pragma once

// Namespaces on the wire: which names a namespace may have, and how a namespace's task
// queues are named. Queues are one table keyed by name alone ("TaskQueues"), so two
// namespaces whose definitions share a name would share a queue: a queue of any namespace
// but "default" is stored and routed as `<namespace id>:<name>` (':' is never part of a
// queue name, flow/validate.cpp), which a poll of another namespace never names.

#include <string>
#include <string_view>

namespace nf {

/// The namespace a request names when it names none.
inline constexpr std::string_view default_namespace_name = "default";

/// The stored id of "default" (migrations/0001), which needs no qualification.
inline constexpr std::string_view default_namespace_uuid = "00000000-0000-0000-0000-000000000001";

/// Whether `name` may name a namespace: 1 to 63 of a-z, 0-9, '_' and '-', starting with a
/// letter (a name is part of URLs and of key scopes).
inline bool valid_namespace_name(std::string_view name) {
  if (name.empty() || name.size() > 63 || name[0] < 'a' || name[0] > 'z')
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

/// The stored name of queue `queue` of the namespace with id `ns_id` (empty = "default").
inline std::string namespace_queue(std::string_view ns_id, std::string_view queue) {
  if (ns_id.empty() || ns_id == default_namespace_uuid)
    return std::string{queue};
  std::string out{ns_id};
  out += ':';
  out += queue;
  return out;
}

/// The queue's name as its definitions know it: without the namespace namespace_queue
/// added, and without a task domain (proto/domains.hpp) either.
inline std::string_view plain_queue(std::string_view stored) {
  auto colon = stored.rfind(':');
  return colon == std::string_view::npos ? stored : stored.substr(colon + 1);
}

} // namespace nf
