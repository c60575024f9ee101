#include "flow/retry.hpp"

#include <algorithm>

#include "flow/snapshot.hpp"

namespace nf::flow {

std::uint64_t stable_hash(std::string_view data, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::int64_t retry_delay_ms(const task_def& def, std::string_view workflow_id,
                            const task_identity& failed) {
  // Every factor is at most INT32_MAX (parse enforces it); cap each step at a
  // ceiling far below int64 overflow before multiplying again.
  constexpr std::int64_t ceiling = std::int64_t{1} << 52;
  const std::int64_t base = def.retry_delay_seconds * 1000;
  const std::int64_t attempt = std::max<std::int64_t>(failed.attempt, 0);
  std::int64_t delay = base;
  switch (def.logic) {
    case retry_logic::fixed: break;
    case retry_logic::linear_backoff:
      {
        const std::int64_t scale = std::max<std::int64_t>(def.backoff_scale_factor, 1);
        delay = base > ceiling / scale ? ceiling : base * scale;
      }
      delay = delay > ceiling / (attempt + 1) ? ceiling : delay * (attempt + 1);
      break;
    case retry_logic::exponential_backoff:
      delay = attempt >= 52 || base > (ceiling >> attempt) ? ceiling : base << attempt;
      break;
  }
  if (def.max_retry_delay_seconds > 0)
    delay = std::min(delay, def.max_retry_delay_seconds * 1000);
  if (def.backoff_jitter_ms > 0) {
    auto h = stable_hash(workflow_id);
    h = stable_hash(failed.ref, h ^ 0x1f);
    h = stable_hash(std::to_string(failed.iteration) + '/' + std::to_string(failed.attempt),
                    h ^ 0x1f);
    delay += static_cast<std::int64_t>(h % static_cast<std::uint64_t>(def.backoff_jitter_ms));
  }
  return delay;
}

std::optional<deadline> next_deadline(const task_def& def, const task_execution& e,
                                      time_ms first_scheduled) {
  std::optional<deadline> best;
  auto consider = [&](deadline_kind k, time_ms from, std::int64_t seconds) {
    if (seconds <= 0)
      return;
    time_ms at = from + seconds * 1000;
    if (!best || at < best->at)
      best = deadline{k, at};
  };
  if (e.status == task_status::scheduled) {
    // pollTimeoutSeconds waits for a first poll: a task a worker took and gave back (a
    // callback, a lease handed back) was polled.
    if (e.poll_count == 0)
      consider(deadline_kind::poll, e.scheduled_time + e.start_delay_ms,
               def.poll_timeout_seconds);
  } else if (e.status == task_status::in_progress) {
    consider(deadline_kind::start_to_close, e.start_time, def.timeout_seconds);
  } else {
    return std::nullopt;
  }
  consider(deadline_kind::total, first_scheduled, def.total_timeout_seconds);
  return best;
}

std::string_view field_of(deadline_kind k) {
  switch (k) {
    case deadline_kind::poll: return "pollTimeoutSeconds";
    case deadline_kind::start_to_close: return "timeoutSeconds";
    case deadline_kind::total: return "totalTimeoutSeconds";
  }
  return "";
}

} // namespace nf::flow
