#include "net/request_deadlines.hpp"

#include <utility>

#include <caf/sec.hpp>

namespace nf::net {

uint64_t request_deadlines::add(clock::time_point deadline, fail_fn fail) {
  auto id = next_id_++;
  pending_.emplace(id, entry{deadline, std::move(fail)});
  by_deadline_.emplace(deadline, id);
  return id;
}

bool request_deadlines::settle(uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end())
    return false;
  auto range = by_deadline_.equal_range(it->second.deadline);
  for (auto d = range.first; d != range.second; ++d)
    if (d->second == id) {
      by_deadline_.erase(d);
      break;
    }
  pending_.erase(it);
  return true;
}

size_t request_deadlines::expire(clock::time_point now) {
  size_t n = 0;
  while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
    auto id = by_deadline_.begin()->second;
    by_deadline_.erase(by_deadline_.begin());
    auto it = pending_.find(id);
    if (it == pending_.end())
      continue;
    // Out of the table before the callback runs: whatever it does, the request is over.
    auto fail = std::move(it->second.fail);
    pending_.erase(it);
    fail(caf::make_error(caf::sec::request_timeout));
    ++n;
  }
  return n;
}

std::optional<request_deadlines::clock::time_point> request_deadlines::next_deadline() const {
  if (by_deadline_.empty())
    return std::nullopt;
  return by_deadline_.begin()->first;
}

} // namespace nf::net
