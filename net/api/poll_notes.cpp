#include "net/api/poll_notes.hpp"

#include <algorithm>

namespace nf::net {

bool poll_notes::note(const std::string& namespace_id, const std::string& task_type,
                      const std::string& domain, const std::string& worker_id,
                      clock::time_point at) {
  bool was_empty = latest_.empty();
  key k{namespace_id, task_type, domain, worker_id};
  auto it = latest_.find(k);
  if (it != latest_.end()) {
    it->second = std::max(it->second, at);
  } else if (latest_.size() < cap_) {
    latest_.emplace(std::move(k), at);
  } else {
    ++dropped_;
  }
  return was_empty && !latest_.empty();
}

std::vector<msg::poll_seen> poll_notes::take(clock::time_point now) {
  std::vector<msg::poll_seen> out;
  out.reserve(latest_.size());
  for (auto& [k, at] : latest_) {
    auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - at).count();
    out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k),
                   std::max<int64_t>(age, 0)});
  }
  latest_.clear();
  dropped_ = 0;
  return out;
}

} // namespace nf::net
