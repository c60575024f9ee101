#pragma once

// Task domains (Conductor's taskToDomain): a workflow started with a mapping from task
// name (or "*" for every task) to a domain queues each mapped worker task as
// `<domain>:<queue>`, which only a poll naming that domain reaches; a worker polling with
// no domain never sees it. A task name maps before "*".
//
// Conductor also accepts a comma-separated list of domains, tried in order by which one had
// a worker poll recently; nodeflow does not track recent polls per domain, so a list is
// refused when the workflow starts rather than routed differently. "NO_DOMAIN" maps a task
// back to its plain queue, as in Conductor. The mapping itself is read and checked in
// engine/decide/task_domains.hpp.

#include <string>
#include <string_view>

#include "flow/ascii.hpp"

namespace nf {

/// The domain that means "no domain" (Conductor's NO_DOMAIN, any case).
inline bool is_no_domain(std::string_view d) {
  return d.size() == 9 && flow::ascii_lower(d) == "no_domain";
}

/// Whether `d` may name a domain: 1 to 128 of A-Z a-z 0-9 '_' '-' (never ':', which
/// separates it from the queue).
inline bool valid_domain(std::string_view d) {
  if (d.empty() || d.size() > 128)
    return false;
  for (char c : d)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == '-'))
      return false;
  return true;
}

/// The queue a task of `queue` is put in (and polled from) in `domain`.
inline std::string domain_queue(std::string_view domain, std::string_view queue) {
  if (domain.empty() || is_no_domain(domain))
    return std::string{queue};
  std::string out{domain};
  out += ':';
  out += queue;
  return out;
}

} // namespace nf
