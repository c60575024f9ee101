#include "engine/schedules/ticks.hpp"

#include <algorithm>

#include "engine/schedules/tz_database.hpp"
#include "proto/errors.hpp"

namespace nf::engine::schedules {

namespace {

int64_t floor_s(int64_t ms) { return ms / 1000 - (ms % 1000 < 0); }

std::optional<int64_t> tick_after(const timing& t, int64_t after_s) {
  auto n = flow::next_run(t.cron, *t.zone, after_s);
  if (!n)
    return std::nullopt;
  return *n * 1000;
}

} // namespace

caf::expected<timing> timing_of(const std::string& cron_expression, const std::string& zone_id) {
  auto parsed = flow::parse_cron(cron_expression);
  if (!parsed.expr)
    return nf::make_error(nf::errc::invalid, "cronExpression: " + parsed.error);
  auto zone = load_zone(zone_id.empty() ? std::string{"UTC"} : zone_id);
  if (!zone)
    return std::move(zone.error());
  return timing{*parsed.expr, std::move(*zone)};
}

std::optional<int64_t> first_tick(const timing& t, int64_t now_ms, std::optional<int64_t> start_ms,
                                  std::optional<int64_t> end_ms) {
  int64_t after_s = floor_s(now_ms);
  if (start_ms)
    after_s = std::max(after_s, floor_s(*start_ms + 999) - 1);
  auto n = tick_after(t, after_s);
  if (!n || (end_ms && *n > *end_ms))
    return std::nullopt;
  return n;
}

firing due_ticks(const timing& t, int64_t next_due_ms, int64_t now_ms, bool catch_up,
                 std::optional<int64_t> end_ms) {
  firing f;
  std::optional<int64_t> cursor = next_due_ms;
  int64_t oldest = now_ms - (catch_up ? catchup_window_ms : late_grace_ms);
  // Skipped ticks are passed one by one, so they are counted too; past 10000 the rest of
  // them are jumped over at once.
  while (cursor && *cursor < oldest) {
    if (f.skipped >= 10000) {
      cursor = tick_after(t, floor_s(oldest) - 1);
      break;
    }
    ++f.skipped;
    cursor = tick_after(t, floor_s(*cursor));
  }
  while (cursor && *cursor <= now_ms && f.ticks.size() < ticks_per_firing
         && (!end_ms || *cursor <= *end_ms)) {
    f.ticks.push_back(*cursor);
    cursor = tick_after(t, floor_s(*cursor));
  }
  if (cursor && end_ms && *cursor > *end_ms)
    cursor.reset();
  f.next = cursor;
  return f;
}

} // namespace nf::engine::schedules
