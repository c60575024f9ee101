#include "actors/timer/node_timer.hpp"
#include "actors/idle_poll.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/partition_db.hpp"
#include "actors/fenced_writes.hpp"
#include "actors/served_shards.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "proto/type_ids.hpp"
#include "store/db_clock.hpp"
#include "store/lease_sweep.hpp"
#include "proto/errors.hpp"
#include "store/timers.hpp"

namespace nf::actors {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

// When a due timer could not be claimed (another claimer holds it, I9), try again
// after this long instead of spinning.
constexpr milliseconds locked_retry{10};

// How far back a check claims and looks, unless it is a full sweep: the hours named by
// the claim's plan (store/pg/hour_window.hpp). A generic plan over the whole horizon names
// ~49 hourly partitions twice, and each check locks and sets up every one of them; over the
// last hour it names two. A timer overdue by more than this
// waits for the next full sweep (timer.full_sweep_interval_ms): only a shard nobody served
// for that long, or a backlog, has one.
constexpr int recent_hours = 1;

struct timer_state {
  node_timer_context ctx;
  served_shards served;  ///< the shards of the partition timers that joined
  std::optional<partition_db> db;
  int batch_size = 256;
  /// The poll that needs no hint: timer.poll_interval_ms, backing off to poll.idle_max_ms
  /// while it finds nothing, and never past the next lease's expiry.
  idle_poll poll;
  std::optional<milliseconds> next_lease; ///< until the earliest lease runs out
  milliseconds full_sweep_interval{60000};
  /// How far back a full sweep claims (retention.timers_hours): as far as timer hours are
  /// kept, since a dropped hour's pending timers are moved to fire now.
  int horizon_hours = 48;
  clock_type::time_point next_full_sweep{}; ///< the first check sweeps the whole horizon
  bool sweep_again = false; ///< a full sweep filled its batch, or a shard joined
  std::optional<clock_type::time_point> alarm_at; ///< the pending wake-up, if any
  int64_t alarm_gen = 0;                          ///< older alarms are stale

  static inline const char* name = "nf.node_timer";
};

using timer_actor = caf::stateful_actor<timer_state>;

/// Wakes the actor after `delay` unless an alarm at or before then is pending.
void arm(timer_actor* self, milliseconds delay) {
  auto& st = self->state;
  delay = std::max(delay, milliseconds{0});
  auto at = self->clock().now() + delay;
  if (st.alarm_at && *st.alarm_at <= at)
    return;
  st.alarm_at = at;
  ++st.alarm_gen;
  if (delay.count() == 0)
    self->send(self, tick_atom_v, st.alarm_gen);
  else
    self->delayed_send(self, delay, tick_atom_v, st.alarm_gen);
}

/// Tells the node what the fired timers changed.
void send_hints(timer_actor* self, const std::vector<store::fired_timer>& fired) {
  auto& st = self->state;
  std::set<int16_t> decide;
  std::set<int16_t> events;
  std::set<std::string> queues;
  for (const auto& f : fired) {
    if (!f.acted)
      continue;
    events.insert(f.shard);
    if (f.kind == store::timer_kind::delay && !f.queue.empty())
      queues.insert(f.queue);
    else
      decide.insert(f.shard);
  }
  if (!st.ctx.node)
    return;
  for (auto s : decide)
    self->send(st.ctx.node, decide_atom_v, s);
  for (const auto& q : queues)
    self->send(st.ctx.node, work_atom_v, q);
  for (auto s : events)
    self->send(st.ctx.node, outbox_atom_v, s);
}

void log_fired(timer_actor* self, const std::vector<store::fired_timer>& fired,
               size_t partitions) {
  std::map<store::timer_kind, std::pair<int, int>> by_kind; // acted, no-op
  for (const auto& f : fired)
    (f.acted ? by_kind[f.kind].first : by_kind[f.kind].second) += 1;
  for (const auto& [kind, n] : by_kind)
    self->state.db->log().debug("timer_fired kind={} n={} noop={} partitions={}",
                                store::to_sql(kind), n.first, n.second, partitions);
}

/// Fires what is due, then sleeps until the next pending timer.
void check(timer_actor* self) {
  auto& st = self->state;
  auto* conn = st.db->get("timer_failed");
  if (conn == nullptr)
    return; // the periodic tick tries again
  store::fire_options opt;
  opt.shards = st.served.ids();
  if (opt.shards.empty())
    return; // an empty list would mean every shard
  opt.limit = st.batch_size;
  auto now = clock_type::now();
  bool full = st.sweep_again || now >= st.next_full_sweep;
  opt.horizon_hours = full ? st.horizon_hours : recent_hours;
  opt.fence = st.served.fence(st.served.shards());
  auto fired = store::fire_due_timers(*conn, opt);
  if (!fired && store::is_fenced(fired.error())) {
    // Shards another node owns now: the next check fires the others'.
    drop_fenced(st.served, st.db->log(), "timer", fired.error());
    arm(self, milliseconds{0});
    return;
  }
  if (!fired) {
    st.db->failed("timer_failed", fired.error());
    return;
  }
  bool filled = static_cast<int>(fired->size()) == st.batch_size;
  if (full) {
    st.next_full_sweep = now + st.full_sweep_interval;
    st.sweep_again = filled; // drains an old backlog at full speed
  }
  if (!fired->empty()) {
    st.poll.active();
    log_fired(self, *fired, opt.shards.size());
    send_hints(self, *fired);
  }
  if (filled) {
    arm(self, milliseconds{0}); // more are due: next batch after the mailbox had its turn
    return;
  }
  // The recent hours only: a timer overdue for longer is the full sweep's, and would
  // otherwise read as due now at every check the recent claim cannot find it in.
  auto next = store::earliest_pending_timer(*conn, opt.shards, recent_hours);
  if (!next) {
    st.db->failed("timer_failed", next.error());
    return;
  }
  if (!*next)
    return;
  // +1 ms: the server rounds down, and waking a hair early costs a wasted claim.
  arm(self, **next == 0 ? locked_retry : milliseconds{**next + 1});
}

/// Times out expired leases (any queue's: overlap with another node is harmless, I9) and
/// wakes the deciders of their workflows. A lease expiry is a deadline like the timers';
/// one sweep per node keeps its statement on one connection (see the header).
void sweep(timer_actor* self) {
  auto& st = self->state;
  if (st.served.empty())
    return; // a node that owns no partition leaves leases to the nodes that do
  auto* conn = st.db->get("sweep_failed");
  if (conn == nullptr)
    return;
  auto swept = store::sweep_expired_leases(*conn, st.batch_size);
  if (!swept) {
    st.db->failed("sweep_failed", swept.error());
    return;
  }
  if (swept->empty()) {
    auto next = store::next_lease_expiry(*conn);
    if (!next) {
      st.db->failed("sweep_failed", next.error());
      st.next_lease.reset();
      return;
    }
    st.next_lease = *next ? std::optional<milliseconds>{milliseconds{**next}} : std::nullopt;
    return;
  }
  st.next_lease = milliseconds{0}; // a full batch may have left more: sweep again soon
  st.poll.active();
  std::set<int16_t> shards;
  auto& expired = engine::metrics::node_metrics().leases_expired;  // rare: no cache
  for (const auto& s : *swept) {
    shards.insert(s.shard);
    expired.with({s.queue}).inc();
  }
  st.db->log().info("lease_expired n={}", swept->size());
  if (!st.ctx.node)
    return;
  for (auto s : shards) {
    self->send(st.ctx.node, decide_atom_v, s);
    self->send(st.ctx.node, outbox_atom_v, s);
  }
}

caf::behavior timer(timer_actor* self, node_timer_context ctx) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.db.emplace(st.ctx.dsn, "timer");
  st.batch_size = static_cast<int>(st.ctx.settings.get(config::keys::timer_batch_size));
  st.poll = idle_poll{milliseconds{st.ctx.settings.get(config::keys::timer_poll_interval_ms)},
                      milliseconds{st.ctx.settings.get(config::keys::poll_idle_max_ms)}};
  st.full_sweep_interval =
    milliseconds{st.ctx.settings.get(config::keys::timer_full_sweep_interval_ms)};
  st.horizon_hours = static_cast<int>(st.ctx.settings.get(config::keys::retention_timers_hours));
  // A partition that moved away takes its shard with it; the others go on.
  self->set_down_handler([self](caf::down_msg& dm) { self->state.served.leave(dm.source); });
  self->send(self, tick_atom_v);
  return {
    [=](join_atom, int16_t shard) {
      // The first check fires whatever fell due while nobody served this shard, however
      // long ago.
      if (self->state.served.join_sender(self, shard)) {
        self->state.sweep_again = true;
        arm(self, milliseconds{0});
      }
    },
    [=](join_atom, int16_t shard, int64_t epoch, const std::string& node) {
      // As above, its firings fenced at the epoch the node acquired the partition at.
      if (self->state.served.join_sender(self, shard, epoch, node)) {
        self->state.sweep_again = true;
        arm(self, milliseconds{0});
      }
    },
    [=](armed_atom, int64_t fire_at_ms) {
      self->state.poll.active();
      // The hint carries Postgres's time; the wait is measured on the actor clock.
      auto now_ms = db_clock_now_ms();
      arm(self, milliseconds{fire_at_ms - now_ms});
    },
    [=](tick_atom, int64_t gen) {
      auto& st = self->state;
      if (gen != st.alarm_gen)
        return; // superseded by an earlier alarm
      st.alarm_at.reset();
      check(self);
    },
    [=](tick_atom) {
      check(self); // the poll that needs no hint (I9)
      sweep(self);
      auto& st = self->state;
      auto wait = st.poll.next();
      if (st.next_lease)
        wait = std::clamp(*st.next_lease + milliseconds{1}, st.poll.base() / 10, wait);
      self->delayed_send(self, wait, tick_atom_v);
    },
  };
}

} // namespace

caf::actor spawn_node_timer(caf::actor_system& sys, const node_timer_context& ctx) {
  return sys.spawn<caf::detached>(timer, ctx);
}

} // namespace nf::actors
