#include "engine/lease/lease_memory.hpp"

namespace nf::engine {

void lease_memory::remember(std::vector<store::lease_facts> leases) {
  std::lock_guard<std::mutex> lock{mutex_};
  for (auto& f : leases) {
    if (by_task_.size() >= capacity_)
      by_task_.clear();
    auto key = f.task.str();
    by_task_.insert_or_assign(std::move(key), std::move(f));
  }
}

std::optional<store::lease_facts> lease_memory::recall(const store::task_result& r,
                                                       int64_t now_ms) {
  std::optional<store::lease_facts> f;
  {
    std::lock_guard<std::mutex> lock{mutex_};
    auto it = by_task_.find(r.task.str());
    if (it == by_task_.end())
      return std::nullopt;
    f = std::move(it->second);
    by_task_.erase(it);
  }
  // Another namespace's report is left to the read, which answers it `not_found`.
  if (f->token != r.token || f->workflow != r.workflow || (r.ns && f->ns != *r.ns)
      || f->lease_expires_at_ms <= now_ms + expiry_margin_ms)
    return std::nullopt;
  return f;
}

} // namespace nf::engine
