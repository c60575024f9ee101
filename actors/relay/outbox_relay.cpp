#include "actors/relay/outbox_relay.hpp"
#include "actors/idle_poll.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/partition_db.hpp"
#include "engine/relay/delivery.hpp"
#include "actors/fenced_writes.hpp"
#include "actors/served_shards.hpp"
#include "proto/type_ids.hpp"
#include "store/outbox.hpp"
#include "proto/errors.hpp"

namespace nf::actors {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Sinks change rarely; a new or disabled sink takes effect within this long. While the
// relay knows of none it reads them again every round (a poll interval apart, see
// `hints_wanted`): a first sink is delivered every event written after its commit.
constexpr auto sinks_ttl = std::chrono::seconds(5);
// Deliveries in flight at once per relay.
constexpr size_t max_in_flight = 32;

struct relay_state {
  outbox_relay_context ctx;
  served_shards served;  ///< the shards of the partition relays that joined
  std::optional<partition_db> db;
  int batch_size = 128;
  /// relay.poll_interval_ms, backing off to poll.idle_max_ms only while no sink is
  /// configured: with sinks, failed deliveries wait for their retry times, which only a poll
  /// finds.
  idle_poll poll;
  engine::delivery_limits limits;
  store::backoff_policy backoff;
  int visibility_seconds = 30;
  std::vector<store::webhook_sink> sinks;
  std::optional<clock_type::time_point> sinks_loaded;
  bool round_queued = false;
  size_t rounds = 0;
  warn_limiter delivery_warn;

  static inline const char* name = "nf.outbox_relay";
};

using relay_actor = caf::stateful_actor<relay_state>;

void queue_round(relay_actor* self) {
  auto& st = self->state;
  if (st.round_queued)
    return;
  st.round_queued = true;
  self->send(self, flush_atom_v); // coalesces every hint already in the mailbox
}

caf::expected<const std::vector<store::webhook_sink>*> sinks(relay_actor* self,
                                                             store::connection& conn) {
  auto& st = self->state;
  auto now = self->clock().now();
  if (!st.sinks_loaded || st.sinks.empty() || now - *st.sinks_loaded >= sinks_ttl) {
    auto got = store::load_webhook_sinks(conn);
    if (!got)
      return std::move(got.error());
    st.sinks = std::move(*got);
    st.sinks_loaded = now;
    if (st.ctx.presence)
      st.ctx.presence->note(!st.sinks.empty());
  }
  return &st.sinks;
}

/// With no sink, an event only needs marking published, which nobody waits for (a client
/// waiting for events reads the history, not the outbox): the poll does it in full
/// batches, and hints start no round: a round per hint would cost a claim per decider
/// commit, each walking the deliverable index of every shard for a handful of rows.
bool hints_wanted(relay_actor* self) {
  const auto& st = self->state;
  return !st.sinks_loaded || !st.sinks.empty()
         || self->clock().now() - *st.sinks_loaded >= sinks_ttl;
}

/// Claims one batch, delivers it and records the outcome; true when the batch was full.
bool round(relay_actor* self) {
  auto& st = self->state;
  auto* conn = st.db->get("relay_failed");
  if (conn == nullptr)
    return false;
  auto targets = sinks(self, *conn);
  if (!targets) {
    st.db->failed("relay_failed", targets.error());
    return false;
  }
  store::outbox_claim claim;
  claim.shards = st.served.ids();
  if (claim.shards.empty())
    return false;
  // A full batch takes the first shards' events: each round starts one shard later.
  std::rotate(claim.shards.begin(),
              claim.shards.begin() + static_cast<std::ptrdiff_t>(st.rounds++ % claim.shards.size()),
              claim.shards.end());
  claim.limit = st.batch_size;
  claim.visibility_seconds = st.visibility_seconds;
  claim.fence = st.served.fence(st.served.shards());
  auto refused = [&](const caf::error& err) {
    if (!store::is_fenced(err))
      return false;
    // Shards another node owns now: the next round claims the others'.
    drop_fenced(st.served, st.db->log(), "relay", err);
    return true;
  };
  if ((*targets)->empty()) {
    // Nothing to deliver to: every event would be claimed only to be marked published.
    auto n = store::publish_undeliverable(*conn, claim);
    if (!n && refused(n.error()))
      return !st.served.shards().empty();
    if (!n) {
      st.db->failed("relay_publish_failed", n.error());
      return false;
    }
    if (*n > 0) {
      st.poll.active();
      st.db->log().debug("outbox_published_without_sinks n={} partitions={}", *n,
                         claim.shards.size());
    }
    return *n == st.batch_size;
  }
  st.poll.active(); // sinks: failed deliveries wait for retry times only a poll finds
  auto events = store::claim_outbox(*conn, claim);
  if (!events && refused(events.error()))
    return !st.served.shards().empty();
  if (!events) {
    st.db->failed("relay_failed", events.error());
    return false;
  }
  if (events->empty())
    return false;
  // No transaction is open while delivering: the claim hid the events for
  // visibility_seconds, and a relay that dies here only delays them.
  auto plan = engine::plan_deliveries(*events, **targets, st.limits);
  auto outcomes = engine::perform_deliveries(*st.ctx.http, plan, max_in_flight);
  auto verdict = engine::judge_deliveries(*events, plan, outcomes, st.limits);
  size_t dead = 0;
  for (const auto& [max_attempts, failures] : verdict.failed) {
    auto policy = st.backoff;
    policy.max_attempts = max_attempts;
    auto recorded = store::record_failures(*conn, failures, policy);
    if (!recorded) {
      // The claim's visibility timeout brings them back; the attempt just is not counted.
      st.db->failed("relay_record_failed", recorded.error());
      continue;
    }
    for (const auto& f : *recorded)
      dead += f.dead_lettered ? 1 : 0;
    if (st.delivery_warn.allow())
      st.db->log().warn("outbox_delivery_failed n={} first_error=\"{}\" suppressed={}",
                        failures.size(), failures.front().error, st.delivery_warn.suppressed());
  }
  if (!verdict.published.empty()) {
    if (auto p = store::mark_published(*conn, verdict.published); !p)
      st.db->failed("relay_publish_failed", p.error()); // redelivered later: consumers dedupe
  }
  size_t failed = events->size() - verdict.published.size();
  if (failed > 0 || dead > 0)
    st.db->log().info("outbox_delivered n={} failed={} dead={} partitions={}",
                      verdict.published.size(), failed, dead, claim.shards.size());
  else
    st.db->log().debug("outbox_delivered n={} failed=0 dead=0 partitions={}",
                       verdict.published.size(), claim.shards.size());
  return static_cast<int>(events->size()) == st.batch_size;
}

caf::behavior relay(relay_actor* self, outbox_relay_context ctx) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.db.emplace(st.ctx.dsn, "relay");
  const auto& s = st.ctx.settings;
  st.batch_size = static_cast<int>(s.get(config::keys::relay_batch_size));
  st.poll = idle_poll{milliseconds{s.get(config::keys::relay_poll_interval_ms)},
                      milliseconds{s.get(config::keys::poll_idle_max_ms)}};
  st.limits.request_timeout_ms = s.get(config::keys::relay_request_timeout_ms);
  st.limits.max_attempts = static_cast<int>(s.get(config::keys::relay_max_attempts));
  st.limits.allow_plain_http = s.get(config::keys::relay_allow_plain_http);
  st.backoff.base_ms = s.get(config::keys::relay_base_backoff_ms);
  st.backoff.max_ms = std::max(st.backoff.base_ms, s.get(config::keys::relay_max_backoff_ms));
  // A claim must outlive its deliveries (connect + read, each bounded by the timeout).
  st.visibility_seconds = static_cast<int>(
    std::max<int64_t>(30, 2 * st.limits.request_timeout_ms / 1000 + 10));
  // A partition that moved away takes its shard with it; the others go on.
  self->set_down_handler([self](caf::down_msg& dm) { self->state.served.leave(dm.source); });
  self->send(self, tick_atom_v);
  return {
    [=](join_atom, int16_t shard) {
      // The first round delivers what waited while nobody served this shard.
      if (self->state.served.join_sender(self, shard))
        queue_round(self);
    },
    [=](join_atom, int16_t shard, int64_t epoch, const std::string& node) {
      // The first round delivers what waited while nobody served this shard.
      if (self->state.served.join_sender(self, shard, epoch, node))
        queue_round(self);
    },
    [=](outbox_atom) {
      self->state.poll.active();
      if (hints_wanted(self))
        queue_round(self);
    },
    [=](flush_atom) {
      self->state.round_queued = false;
      if (round(self))
        queue_round(self); // more waiting: next batch after the mailbox had its turn
    },
    [=](tick_atom) {
      queue_round(self); // the poll that needs no hint (I9)
      self->delayed_send(self, self->state.poll.next(), tick_atom_v);
    },
  };
}

} // namespace

caf::actor spawn_outbox_relay(caf::actor_system& sys, const outbox_relay_context& ctx) {
  return sys.spawn<caf::detached>(relay, ctx);
}

} // namespace nf::actors
