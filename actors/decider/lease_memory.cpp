#include "actors/decider/lease_memory.hpp"

namespace nf::actors::decider {

void lease_memory::remember(store::lease_facts f) {
  if (by_task_.size() >= capacity_)
    by_task_.clear();
  auto key = f.task.str();
  by_task_.insert_or_assign(std::move(key), std::move(f));
}

std::optional<store::lease_facts> lease_memory::recall(const store::task_result& r) {
  auto it = by_task_.find(r.task.str());
  if (it == by_task_.end())
    return std::nullopt;
  auto f = std::move(it->second);
  by_task_.erase(it);
  if (f.token != r.token || f.workflow != r.workflow)
    return std::nullopt;
  return f;
}

} // namespace nf::actors::decider
