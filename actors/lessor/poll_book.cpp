#include "actors/lessor/poll_book.hpp"

#include <algorithm>

namespace nf::actors {

open_poll& poll_book::add_unqueued(msg::poll_request req, caf::response_promise promise,
                                   time_point deadline) {
  auto id = next_id_++;
  auto& p = polls_[id];
  p.id = id;
  p.req = std::move(req);
  p.promise = std::move(promise);
  p.deadline = deadline;
  return p;
}

int64_t poll_book::add(msg::poll_request req, caf::response_promise promise, time_point deadline) {
  auto& p = add_unqueued(std::move(req), std::move(promise), deadline);
  pending_.push_back(p.id);
  return p.id;
}

std::vector<open_poll*> poll_book::take_pending(int budget) {
  std::vector<open_poll*> out;
  while (!pending_.empty()) {
    auto it = polls_.find(pending_.front());
    if (it == polls_.end()) { // answered meanwhile
      pending_.pop_front();
      continue;
    }
    if (!out.empty() && it->second.req.max_tasks > budget)
      break;
    budget -= it->second.req.max_tasks;
    out.push_back(&it->second);
    pending_.pop_front();
  }
  return out;
}

bool poll_book::park(open_poll& p) {
  p.parked = true;
  parked_[p.req.queue].push_back(p.id);
  if (p.expiry_armed)
    return false;
  p.expiry_armed = true;
  return true;
}

size_t poll_book::wake(const std::string& queue, size_t limit, const may_take& take) {
  auto it = parked_.find(queue);
  if (it == parked_.end())
    return 0;
  auto& ids = it->second;
  std::vector<int64_t> kept;
  size_t n = 0;
  size_t used = 0;
  for (; used < ids.size() && n < limit; ++used) {
    auto* p = find(ids[used]);
    if (p == nullptr || !p->parked)
      continue; // answered meanwhile
    if (!take(*p)) {
      kept.push_back(ids[used]); // lent: it stays parked until it comes back
      continue;
    }
    p->parked = false;
    pending_.push_back(ids[used]);
    ++n;
  }
  ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(used));
  ids.insert(ids.begin(), kept.begin(), kept.end());
  if (ids.empty())
    parked_.erase(it);
  return n;
}

size_t poll_book::wake_all(const may_take& take) {
  size_t n = 0;
  std::vector<std::string> queues;
  for (const auto& [queue, ids] : parked_)
    queues.push_back(queue);
  for (const auto& q : queues)
    n += wake(q, SIZE_MAX, take);
  return n;
}

void poll_book::unlist_parked(const open_poll& p) {
  auto q = parked_.find(p.req.queue);
  if (q == parked_.end())
    return;
  auto& ids = q->second;
  ids.erase(std::remove(ids.begin(), ids.end(), p.id), ids.end());
  if (ids.empty())
    parked_.erase(q);
}

bool poll_book::wake_one(int64_t id) {
  auto* p = find(id);
  if (p == nullptr || !p->parked)
    return false;
  unlist_parked(*p);
  p->parked = false;
  pending_.push_back(id);
  return true;
}

void poll_book::erase(int64_t id) {
  auto it = polls_.find(id);
  if (it == polls_.end())
    return;
  if (it->second.parked)
    unlist_parked(it->second);
  // a pending id left behind is skipped by take_pending
  polls_.erase(it);
}

open_poll* poll_book::find(int64_t id) {
  auto it = polls_.find(id);
  return it == polls_.end() ? nullptr : &it->second;
}

std::vector<open_poll*> poll_book::expired(time_point now) {
  std::vector<open_poll*> out;
  for (auto& [queue, ids] : parked_)
    for (auto id : ids)
      if (auto* p = find(id); p != nullptr && p->deadline <= now)
        out.push_back(p);
  return out;
}

size_t poll_book::parked_count(const std::string& queue) const {
  auto it = parked_.find(queue);
  return it == parked_.end() ? 0 : it->second.size();
}

std::vector<open_poll*> poll_book::all() {
  std::vector<open_poll*> out;
  for (auto& [id, p] : polls_)
    out.push_back(&p);
  return out;
}

} // namespace nf::actors
