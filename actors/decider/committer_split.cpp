#include "actors/decider/committer_split.hpp"

namespace nf::actors {

committer_split::committer_split(size_t committers, int64_t split_at, clock::duration hold)
  : committers_(committers == 0 ? 1 : committers),
    split_at_(split_at),
    hold_(hold),
    split_(split_at <= 0 && committers > 1) {
}

size_t committer_split::committer_of(int16_t shard) const {
  auto n = in_use();
  if (n == 1 || !split())
    return 0;
  return static_cast<size_t>(shard) % n;
}

void committer_split::note_flush(size_t requests, clock::time_point now) {
  if (committers_ == 1 || split_at_ <= 0)
    return;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  auto n = static_cast<int64_t>(requests);
  if (n >= split_at_) {
    last_busy_ns_.store(ns, std::memory_order_relaxed);
    split_.store(true, std::memory_order_relaxed);
    return;
  }
  if (!split())
    return;
  // Split, a flush of a quarter of split_at still counts as load: the work is spread
  // over N committers, and merging back at the first small flush would flap.
  if (n * 4 >= split_at_) {
    last_busy_ns_.store(ns, std::memory_order_relaxed);
    return;
  }
  auto hold_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(hold_).count();
  if (ns - last_busy_ns_.load(std::memory_order_relaxed) > hold_ns)
    split_.store(false, std::memory_order_relaxed);
}

} // namespace nf::actors
