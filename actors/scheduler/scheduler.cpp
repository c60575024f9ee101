#include "actors/scheduler/scheduler.hpp"

#include <algorithm>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/spdlog.h>

#include "config/folder_logger.hpp"
#include "engine/schedules/fire.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"
#include "store/pg/session.hpp"
#include "store/schedules.hpp"
#include "store/workflows.hpp"

namespace nf::actors {

namespace {

// Firings in a row before the actor reads its mailbox again (a long catch-up).
constexpr int max_firings_per_pass = 10;
// Past a due tick's time, so that the claim (at the server's clock) finds it due.
constexpr std::chrono::milliseconds wake_margin{3};

struct scheduler_state {
  scheduler_context ctx;
  std::optional<store::session> db;
  std::optional<int> partition_count;
  uint64_t generation = 0; ///< only the latest armed wake-up runs a pass
  std::shared_ptr<spdlog::logger> log;
  static inline const char* name = "nf.scheduler";
};

using scheduler_actor = caf::stateful_actor<scheduler_state>;

void arm(scheduler_actor* self, std::chrono::milliseconds delay) {
  auto gen = ++self->state.generation;
  self->delayed_send(self, delay, tick_atom_v, gen);
}

// Fires what is due and says how long to sleep.
std::chrono::milliseconds run_pass(scheduler_actor* self) {
  auto& st = self->state;
  auto retry = st.ctx.max_wait;
  auto conn = st.db->get();
  if (!conn) {
    st.log->warn("scheduler_db_unavailable error=\"{}\"", nf::message_of(conn.error()));
    return retry;
  }
  auto& c = **conn;
  if (!st.partition_count) {
    auto p = store::load_partition_count(c);
    if (!p) {
      st.db->on_error(p.error());
      st.log->warn("scheduler_failed error=\"{}\"", nf::message_of(p.error()));
      return retry;
    }
    st.partition_count = *p;
  }
  bool more = true;
  for (int round = 0; more && round < max_firings_per_pass; ++round) {
    auto fired = engine::schedules::fire_due(c, *st.partition_count);
    if (!fired) {
      st.db->on_error(fired.error());
      st.log->warn("schedules_fire_failed error=\"{}\"", nf::message_of(fired.error()));
      return retry;
    }
    more = fired->more;
    if (st.ctx.node)
      for (auto shard : fired->shards)
        self->send(st.ctx.node, decide_atom_v, shard);
    if (fired->started + fired->already + fired->failed + fired->skipped > 0)
      st.log->info("schedules_fired started={} already={} failed={} skipped={}",
                   fired->started, fired->already, fired->failed, fired->skipped);
  }
  if (more)
    return std::chrono::milliseconds{0};
  auto h = store::schedule_horizon_of(c);
  if (!h) {
    st.db->on_error(h.error());
    st.log->warn("scheduler_failed error=\"{}\"", nf::message_of(h.error()));
    return retry;
  }
  if (!h->earliest_ms)
    return st.ctx.idle_wait;
  auto until = std::chrono::milliseconds{std::max<int64_t>(0, *h->earliest_ms - h->now_ms)};
  return std::min(until + wake_margin, st.ctx.max_wait);
}

caf::behavior scheduler_behavior(scheduler_actor* self, scheduler_context ctx) {
  auto& st = self->state;
  st.log = folder_logger("scheduler");
  st.db.emplace(ctx.dsn);
  st.ctx = std::move(ctx);
  arm(self, std::chrono::milliseconds{0});
  return {
    [=](tick_atom, uint64_t gen) {
      if (gen != self->state.generation)
        return;
      arm(self, run_pass(self));
    },
    [=](schedules_atom) { arm(self, std::chrono::milliseconds{0}); },
  };
}

} // namespace

caf::actor spawn_scheduler(caf::actor_system& sys, const scheduler_context& ctx) {
  return sys.spawn<caf::detached>(scheduler_behavior, ctx);
}

} // namespace nf::actors
