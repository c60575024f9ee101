#include "engine/schedules/fire.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "config/folder_logger.hpp"
#include "engine/schedules/ticks.hpp"
#include "proto/errors.hpp"
#include "store/pg/transaction.hpp"
#include "store/schedules.hpp"
#include "store/workflows.hpp"

namespace nf::engine::schedules {

std::string tick_key(const std::string& schedule, int64_t tick_ms) {
  return "schedule:" + schedule + "@" + std::to_string(tick_ms);
}

caf::expected<fire_outcome> fire_due(store::connection& conn, int partition_count) {
  auto log = folder_logger("scheduler");
  return store::perform(conn, [&](store::transaction& tx) -> caf::expected<fire_outcome> {
    fire_outcome out;
    int64_t now_ms = 0;
    auto due = store::claim_due_schedules(tx, schedules_per_firing, now_ms);
    if (!due)
      return std::move(due.error());
    out.more = static_cast<int>(due->size()) == schedules_per_firing;
    std::vector<store::start_request> starts;
    struct owner {
      size_t schedule;
      int64_t tick;
    };
    std::vector<owner> owners;
    std::vector<firing> firings;
    for (size_t i = 0; i < due->size(); ++i) {
      const auto& s = (*due)[i];
      auto t = timing_of(s.cron_expression, s.zone_id);
      if (!t) {
        // A zone that left the tz database: the schedule stops until it is saved again.
        log->warn("schedule_unusable name={} error=\"{}\"", s.name, nf::message_of(t.error()));
        firings.push_back({});
        continue;
      }
      auto f = due_ticks(*t, *s.next_run_ms, now_ms, s.run_catchup, s.end_ms);
      out.skipped += f.skipped;
      out.more = out.more || (f.next && *f.next <= now_ms);
      auto request = store::read_start_request(s.start_request_json, s.ns);
      for (auto tick : f.ticks) {
        if (!request) {
          ++out.failed;
          continue;
        }
        auto r = *request;
        r.idempotency_key = tick_key(s.name, tick);
        starts.push_back(std::move(r));
        owners.push_back({i, tick});
      }
      if (!request)
        log->warn("schedule_start_refused name={} error=\"{}\"", s.name,
                  nf::message_of(request.error()));
      firings.push_back(std::move(f));
    }
    std::vector<std::optional<std::string>> last_wf(due->size());
    if (!starts.empty()) {
      auto started = store::start_workflows(tx, starts, partition_count);
      if (!started)
        return std::move(started.error());
      for (size_t k = 0; k < started->size(); ++k) {
        const auto& r = (*started)[k];
        const auto& s = (*due)[owners[k].schedule];
        if (!r) {
          ++out.failed;
          log->warn("schedule_start_failed name={} tick_ms={} error=\"{}\"", s.name,
                    owners[k].tick, nf::message_of(r.error()));
          continue;
        }
        last_wf[owners[k].schedule] = r->id.str();
        if (!r->created) {
          ++out.already;
          continue;
        }
        ++out.started;
        auto shard = r->shard.value();
        if (std::find(out.shards.begin(), out.shards.end(), shard) == out.shards.end())
          out.shards.push_back(shard);
      }
    }
    for (size_t i = 0; i < due->size(); ++i) {
      const auto& s = (*due)[i];
      const auto& f = firings[i];
      std::optional<int64_t> last;
      if (!f.ticks.empty())
        last = f.ticks.back();
      if (auto a = store::advance_schedule(tx, s.ns, s.name, f.next, last, last_wf[i]); !a)
        return std::move(a.error());
    }
    return out;
  });
}

} // namespace nf::engine::schedules
