#include "actors/lessor/lessor.hpp"
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

#include "config/folder_logger.hpp"
#include "proto/namespaces.hpp"
#include "actors/lessor/lease_store.hpp"
#include "actors/lessor/leased_task_message.hpp"
#include "actors/lessor/poll_book.hpp"
#include "engine/lease/lease_memory.hpp"
#include "engine/lease/waiting_polls.hpp"
#include "actors/fenced_writes.hpp"
#include "actors/partition_db.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "proto/type_ids.hpp"
#include "proto/errors.hpp"
#include "store/partition_fence.hpp"
#include "store/queues.hpp"
#include "store/sharding.hpp"

namespace nf::actors {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Task definitions change rarely; a changed limit takes effect within this long.
constexpr auto policy_ttl = std::chrono::seconds(5);

struct cached_policy {
  store::queue_policy policy;
  clock_type::time_point loaded;
};

/// The lessor's own connection. Failures are logged here (rate-limited) and drop a
/// broken connection: the next call reconnects.
class pg_lease_store : public lease_store {
public:
  pg_lease_store(std::string dsn, int16_t shard, store::partition_fence fence)
    // Its claim reads a queue's head in the dequeue index's order (store/index_scans.hpp).
    : db_(std::move(dsn), "lessor", shard, &store::prefer_index_order),
      fence_(std::move(fence)) {
  }

  caf::expected<store::queue_policy> queue_policy(const namespace_id& ns,
                                                  const std::string& queue) override {
    auto* conn = db_.get("lease_failed");
    if (conn == nullptr)
      return no_connection();
    auto got = store::load_queue_policy_for_queue(*conn, ns, queue);
    if (!got && nf::code_of(got.error()) != nf::errc::not_found)
      db_.failed("lease_failed", got.error());
    return got;
  }

  caf::expected<std::vector<std::vector<store::leased_task>>>
  lease(const std::vector<store::lease_request>& reqs,
        std::vector<store::lease_facts>* facts) override {
    auto* conn = db_.get("lease_failed");
    if (conn == nullptr)
      return no_connection();
    auto leased = store::lease_batches(*conn, reqs, facts, fence_.empty() ? nullptr : &fence_);
    if (!leased && !store::is_fenced(leased.error()))
      db_.failed("lease_failed", leased.error());
    return leased;
  }

private:
  static caf::error no_connection() {
    return nf::make_error(nf::errc::conn_broken, "no database connection");
  }

  partition_db db_;
  store::partition_fence fence_;  ///< the partition at the epoch the node acquired it at
};

struct lessor_state {
  partition_context ctx;
  std::unique_ptr<lease_store> db;
  std::shared_ptr<spdlog::logger> log;
  poll_book polls;
  std::map<std::pair<std::string, std::string>, cached_policy> policies; ///< (ns, queue)
  /// Queues whose last claim came up short and had no limit to blame: a new poll
  /// for one parks without a transaction until a work hint for the queue or the
  /// next tick (a lost hint costs a poll interval, I9).
  std::set<std::string> dry;
  bool flush_queued = false;
  /// The fence refused a lease: the partition is another node's now, and this lessor
  /// leases nothing more (the node stops it once membership tells it).
  bool fenced = false;
  caf::actor_id self_id = 0;
  int max_batch = 256;
  int lease_seconds = 300;
  idle_poll poll; ///< retrying parked polls (lessor.poll_interval_ms, poll.idle_max_ms)
  milliseconds max_poll_timeout{60000};
  /// Leases answered to polls, by task definition (engine/metrics/node_metrics.hpp).
  engine::metrics::label_cache<engine::metrics::counter> leased{
    engine::metrics::node_metrics().tasks_leased};

  static inline const char* name = "nf.lessor";

  ~lessor_state() {
    // A requester must not wait for its own timeout when the partition moves away.
    // A poll lent to a committer right now is answered here too; what that committer
    // leases to it waits for the lease to expire (the message handing it back is lost).
    if (ctx.waiting)
      ctx.waiting->withdraw_all(self_id);
    for (auto* p : polls.all())
      if (p->promise.pending())
        p->promise.deliver(nf::make_error(nf::errc::conn_broken,
                                             "lessor stopped: partition moved, poll again"));
  }
};

using lessor_actor = caf::stateful_actor<lessor_state>;

/// The lease policy of a poll's queue, from the cache or the database. A queue
/// no definition serves is leased with lessor.lease_seconds and no limits.
caf::expected<store::queue_policy> policy_for(lessor_actor* self, const msg::poll_request& req) {
  auto& st = self->state;
  auto ns = req.namespace_id.empty() ? default_namespace.str() : req.namespace_id;
  auto key = std::make_pair(ns, req.queue);
  auto now = self->clock().now();
  if (auto it = st.policies.find(key); it != st.policies.end() && now - it->second.loaded < policy_ttl)
    return it->second.policy;
  // The api named the queue as stored (proto/namespaces.hpp); definitions know it plain.
  auto got = st.db->queue_policy(namespace_id{ns}, std::string{plain_queue(req.queue)});
  store::queue_policy policy;
  if (got) {
    policy = std::move(*got);
    if (policy.lease_seconds < 1)  // responseTimeoutSeconds left unset: as heartbeats extend
      policy.lease_seconds = st.lease_seconds;
  } else if (nf::code_of(got.error()) == nf::errc::not_found) {
    policy.lease_seconds = st.lease_seconds;
  } else {
    return std::move(got.error());
  }
  st.policies[key] = cached_policy{policy, now};
  return policy;
}

/// What a lease transaction asks for on behalf of poll `p`.
caf::expected<store::lease_request> lease_request_for(lessor_actor* self,
                                                      const msg::poll_request& p) {
  auto policy = policy_for(self, p);
  if (!policy)
    return std::move(policy.error());
  store::lease_request r;
  r.queue = p.queue;
  // A system task runner's poll asks for its free slots, which the api never checked.
  r.max_tasks = std::min({p.max_tasks, self->state.max_batch, store::max_lease_tasks});
  r.worker_id = p.worker_id;
  r.lease_seconds = policy->lease_seconds;
  r.start_to_close_seconds = policy->start_to_close_seconds;
  r.concurrency_limit = policy->concurrency_limit;
  r.rate = policy->rate;
  r.timers_within_s = policy->timers_within_s;
  return r;
}

/// Offers a parked poll to the node's committers, unless its queue has a limit (the
/// lessor's own transaction applies those) or offering is off.
void offer(lessor_actor* self, open_poll& p, const store::lease_request& r) {
  auto& waiting = self->state.ctx.waiting;
  if (!waiting || p.offered || r.concurrency_limit || r.rate)
    return;
  waiting->offer(engine::waiting_poll{caf::actor_cast<caf::actor>(self), p.id, r});
  p.offered = true;
}

/// Takes a parked poll back from the committers before the lessor acts on it; false
/// while one of them has it lent (it comes back by `lent_atom`).
bool reclaim(lessor_actor* self, open_poll& p) {
  if (!p.offered)
    return true;
  if (!self->state.ctx.waiting->withdraw(self->state.self_id, p.id))
    return false;
  p.offered = false;
  return true;
}

poll_book::may_take reclaimer(lessor_actor* self) {
  return [self](open_poll& p) { return reclaim(self, p); };
}

void schedule_flush(lessor_actor* self) {
  auto& st = self->state;
  if (st.flush_queued || !st.polls.has_pending())
    return;
  st.flush_queued = true;
  // Behind everything already in the mailbox: all polls that arrived before it share
  // one transaction (group commit without a fixed wait).
  self->send(self, flush_atom_v);
}

/// Answers a poll and forgets it. Every lease reaches its worker here, the lessor's own and
/// those a committer made in its decision (lent_atom), so they are counted here.
void answer(lessor_actor* self, open_poll& p, std::vector<msg::leased_task> tasks) {
  if (!tasks.empty())
    self->state.poll.active();
  for (const auto& t : tasks)
    self->state.leased.with(t.task_def_name).inc();
  p.promise.deliver(std::move(tasks));
  self->state.polls.erase(p.id);
}

/// Parks a poll that found nothing (offered to the committers when `r` is known), or
/// answers it empty when its time is up.
void park_or_answer(lessor_actor* self, open_poll& p, clock_type::time_point now,
                    const store::lease_request* r = nullptr) {
  if (p.deadline <= now) {
    answer(self, p, {});
    return;
  }
  if (self->state.polls.park(p))
    self->delayed_send(self, p.deadline - now, tick_atom_v, p.id);
  if (r != nullptr)
    offer(self, p, *r);
}

void notify_outbox(lessor_actor* self, const std::set<int16_t>& shards) {
  auto& node = self->state.ctx.node;
  if (!node)
    return;
  for (auto s : shards)
    self->send(node, outbox_atom_v, s);
}

/// One lease transaction for the pending polls (as many as lessor.max_batch allows).
void flush(lessor_actor* self) {
  auto& st = self->state;
  st.flush_queued = false;
  auto batch = st.polls.take_pending(st.max_batch);
  if (batch.empty())
    return;
  auto moved = [&] {
    // The worker polls again and finds the partition's new owner (or its node forwards).
    for (auto* p : batch) {
      p->promise.deliver(nf::make_error(nf::errc::conn_broken,
                                        "partition " + std::to_string(st.ctx.shard)
                                          + " moved to another node: poll again"));
      st.polls.erase(p->id);
    }
  };
  if (st.fenced)
    return moved();
  auto now = self->clock().now();
  auto fail_all = [&](const caf::error& err) {
    // Nothing is retried at once (the database is likely away): long polls wait for
    // the next retry; a poll that wanted an answer now learns why not.
    for (auto* p : batch) {
      if (p->deadline <= now) {
        p->promise.deliver(err);
        st.polls.erase(p->id);
      } else if (st.polls.park(*p)) {
        self->delayed_send(self, p->deadline - now, tick_atom_v, p->id);
      }
    }
  };
  std::vector<store::lease_request> reqs;
  reqs.reserve(batch.size());
  for (auto* p : batch) {
    auto r = lease_request_for(self, p->req);
    if (!r) {
      fail_all(r.error());
      return;
    }
    reqs.push_back(std::move(*r));
  }
  std::vector<store::lease_facts> facts;
  auto leased = st.db->lease(reqs, st.ctx.leases ? &facts : nullptr);
  if (!leased && store::is_fenced(leased.error())) {
    note_stale_write(*st.log, "lessor", st.ctx.shard, st.ctx.epoch, leased.error());
    st.fenced = true;
    return moved();
  }
  if (!leased) {
    fail_all(leased.error());
    return;
  }
  // Committed: remembered before any worker has the tasks, so every completion finds them.
  if (!facts.empty())
    st.ctx.leases->remember(std::move(facts));
  now = self->clock().now();
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& r = reqs[i];
    if (static_cast<int>((*leased)[i].size()) == r.max_tasks)
      st.polls.wake(r.queue, 1, reclaimer(self)); // a full batch: the queue may hold more
    else if (!r.concurrency_limit && !r.rate)
      st.dry.insert(r.queue);
  }
  std::map<std::string, size_t> per_queue;
  std::set<int16_t> outbox_shards;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto& got = (*leased)[i];
    auto& p = *batch[i];
    if (got.empty()) {
      park_or_answer(self, p, now, &reqs[i]);
      continue;
    }
    per_queue[p.req.queue] += got.size();
    std::vector<msg::leased_task> out;
    out.reserve(got.size());
    for (const auto& t : got) {
      out.push_back(to_message(t));
      outbox_shards.insert(shard_of(t.workflow.str(), st.ctx.partition_count));
    }
    answer(self, p, std::move(out));
  }
  for (const auto& [queue, n] : per_queue)
    st.log->debug("lease_claimed queue={} n={} partition={} parked={}", queue, n, st.ctx.shard,
                  st.polls.parked_count(queue));
  notify_outbox(self, outbox_shards); // TASK_STARTED events went to the outbox
  schedule_flush(self); // polls left over by the batch budget
}

caf::behavior lessor(lessor_actor* self, partition_context ctx, lease_store_factory db) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  store::partition_fence fence;
  if (st.ctx.epoch > 0) {
    fence.node = node_id{st.ctx.node_id};
    fence.epochs[st.ctx.shard] = st.ctx.epoch;
  }
  st.db = db ? db() : std::make_unique<pg_lease_store>(st.ctx.dsn, st.ctx.shard, fence);
  st.log = folder_logger("lessor");
  st.self_id = self->id();
  st.max_batch = static_cast<int>(st.ctx.settings.get(config::keys::lessor_max_batch));
  st.lease_seconds = static_cast<int>(st.ctx.settings.get(config::keys::lessor_lease_seconds));
  st.poll = idle_poll{milliseconds{st.ctx.settings.get(config::keys::lessor_poll_interval_ms)},
                      milliseconds{st.ctx.settings.get(config::keys::poll_idle_max_ms)}};
  st.max_poll_timeout = milliseconds{st.ctx.settings.get(config::keys::lessor_max_poll_timeout_ms)};
  self->send(self, tick_atom_v);
  return {
    [=](poll_atom, msg::poll_request& req) -> caf::result<std::vector<msg::leased_task>> {
      // Checked by the api (net/api/checks); polls from inside the node come from code.
      auto& st = self->state;
      auto wait = std::min(milliseconds{req.timeout_ms}, st.max_poll_timeout);
      auto rp = self->make_response_promise();
      auto now = self->clock().now();
      if (st.dry.count(req.queue) != 0) {
        // Nothing to lease until the queue gets work: wait for its hint, or for a
        // committer to lease it a task it decides (the policy is cached here).
        std::optional<store::lease_request> r;
        if (st.ctx.waiting)
          if (auto got = lease_request_for(self, req))
            r = std::move(*got);
        park_or_answer(self, st.polls.add_unqueued(std::move(req), rp, now + wait), now,
                       r ? &*r : nullptr);
        return rp;
      }
      st.polls.add(std::move(req), rp, now + wait);
      schedule_flush(self);
      return rp;
    },
    [=](work_atom, const std::string& queue) {
      // One poll at a time: a hint does not say how much work arrived, and waking
      // every parked poll made one claim statement per poll, most finding nothing.
      // A poll that fills its batch wakes the next one (flush).
      self->state.poll.active();
      self->state.dry.erase(queue);
      if (self->state.polls.wake(queue, 1, reclaimer(self)) > 0)
        schedule_flush(self);
    },
    [=](lent_atom, int64_t poll, std::vector<msg::leased_task>& tasks) {
      // A committer hands back a poll it was lent, with what it leased to it.
      auto& st = self->state;
      auto* p = st.polls.find(poll);
      if (p == nullptr)
        return;
      p->offered = false;
      if (!tasks.empty()) {
        answer(self, *p, std::move(tasks));
        return;
      }
      // Nothing (its transaction rolled back, or the tasks were gone): a plain retry.
      if (st.polls.wake_one(poll))
        schedule_flush(self);
    },
    [=](flush_atom) { flush(self); },
    [=](tick_atom, int64_t poll) {
      // A parked poll's timeout: answer it empty, unless a retry has it right now (the
      // flush answers it then) or the clock woke us a little early.
      auto& st = self->state;
      auto* p = st.polls.find(poll);
      if (p == nullptr)
        return;
      auto now = self->clock().now();
      if (!p->parked) {
        p->expiry_armed = false;
      } else if (p->deadline <= now) {
        if (reclaim(self, *p))
          answer(self, *p, {});
        else
          p->expiry_armed = false; // lent: answered when it comes back
      } else {
        self->delayed_send(self, p->deadline - now, tick_atom_v, poll);
      }
    },
    [=](tick_atom) {
      // The slow path that needs no hint (I9): retry parked polls. (Expired leases are
      // the node timer's.)
      auto& st = self->state;
      auto now = self->clock().now();
      for (auto* p : st.polls.expired(now))
        if (reclaim(self, *p))
          answer(self, *p, {});
      st.dry.clear();
      if (st.polls.wake_all(reclaimer(self)) > 0)
        schedule_flush(self);
      self->delayed_send(self, st.poll.next(), tick_atom_v);
    },
  };
}

} // namespace

caf::actor spawn_lessor(caf::actor_system& sys, const partition_context& ctx) {
  return spawn_lessor(sys, ctx, lease_store_factory{}, true);
}

caf::actor spawn_lessor(caf::actor_system& sys, const partition_context& ctx,
                        lease_store_factory db, bool detached) {
  if (!detached)
    return sys.spawn(lessor, ctx, std::move(db));
  return sys.spawn<caf::detached>(lessor, ctx, std::move(db));
}

} // namespace nf::actors
