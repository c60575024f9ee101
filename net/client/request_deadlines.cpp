#include "net/client/request_deadlines.hpp"

#include <utility>
#include <vector>

#include <caf/sec.hpp>

namespace nf::net {

uint64_t request_deadlines::add(clock::time_point deadline, fail_fn fail) {
  auto id = next_id_++;
  pending_.emplace(id, entry{deadline, std::move(fail)});
  return id;
}

bool request_deadlines::settle(uint64_t id) {
  return pending_.erase(id) != 0;
}

size_t request_deadlines::expire(clock::time_point now) {
  std::vector<fail_fn> due;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline <= now) {
      due.push_back(std::move(it->second.fail));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  // Out of the table before the callbacks run: whatever they do, those requests are over.
  for (auto& fail : due)
    fail(caf::make_error(caf::sec::request_timeout));
  return due.size();
}

std::optional<request_deadlines::clock::time_point> request_deadlines::next_deadline() const {
  std::optional<clock::time_point> out;
  for (const auto& [id, e] : pending_)
    if (!out || e.deadline < *out)
      out = e.deadline;
  return out;
}

} // namespace nf::net
