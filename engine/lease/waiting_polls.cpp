#include "engine/lease/waiting_polls.hpp"

#include <algorithm>

namespace nf::engine {

void waiting_polls::offer(waiting_poll p) {
  std::lock_guard<std::mutex> guard{mutex_};
  by_queue_[p.request.queue].push_back(std::move(p));
}

bool waiting_polls::withdraw(caf::actor_id lessor, int64_t poll) {
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto q = by_queue_.begin(); q != by_queue_.end(); ++q) {
    auto& ps = q->second;
    auto it = std::find_if(ps.begin(), ps.end(), [&](const waiting_poll& p) {
      return p.poll == poll && p.lessor.id() == lessor;
    });
    if (it == ps.end())
      continue;
    ps.erase(it);
    if (ps.empty())
      by_queue_.erase(q);
    return true;
  }
  return false;
}

void waiting_polls::withdraw_all(caf::actor_id lessor) {
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto q = by_queue_.begin(); q != by_queue_.end();) {
    auto& ps = q->second;
    ps.erase(std::remove_if(ps.begin(), ps.end(),
                            [&](const waiting_poll& p) { return p.lessor.id() == lessor; }),
             ps.end());
    q = ps.empty() ? by_queue_.erase(q) : std::next(q);
  }
}

std::vector<waiting_poll> waiting_polls::lend(const std::string& queue, size_t tasks) {
  std::vector<waiting_poll> out;
  std::lock_guard<std::mutex> guard{mutex_};
  auto q = by_queue_.find(queue);
  if (q == by_queue_.end())
    return out;
  auto& ps = q->second;
  size_t covered = 0;
  while (covered < tasks && !ps.empty()) {
    covered += static_cast<size_t>(std::max(1, ps.front().request.max_tasks));
    out.push_back(std::move(ps.front()));
    ps.pop_front();
  }
  if (ps.empty())
    by_queue_.erase(q);
  return out;
}

std::map<std::string, size_t> waiting_polls::offered() const {
  std::map<std::string, size_t> out;
  std::lock_guard<std::mutex> guard{mutex_};
  for (const auto& [queue, ps] : by_queue_)
    out[queue] = ps.size();
  return out;
}

} // namespace nf::engine
