#include "actors/decider/committer.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/logger.h>

#include "actors/idle_poll.hpp"
#include "engine/decide/batch.hpp"
#include "actors/decider/committer_split.hpp"
#include "engine/decide/requests.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "config/folder_logger.hpp"
#include "actors/lessor/leased_task_message.hpp"
#include "actors/relay/sink_presence.hpp"
#include "actors/served_shards.hpp"
#include "proto/type_ids.hpp"
#include "proto/errors.hpp"

namespace nf::actors {

namespace {

using namespace engine;

/// A request waiting for the next flush, and who to answer.
template <class T>
struct pending {
  T req;
  caf::response_promise rp;
};
using pending_start = pending<store::start_request>;
using pending_completion = pending<store::task_result>;
using pending_command = pending<engine::command_request>;

struct committer_state {
  committer_context ctx;
  std::unique_ptr<engine::decide_batches> core;
  std::shared_ptr<spdlog::logger> log;
  std::vector<pending_start> starts;
  std::vector<pending_completion> completions;
  std::vector<pending_command> commands;
  served_shards served;  ///< the shards of the partition deciders that joined

  /// The joined shards this committer decides for now.
  std::set<int16_t> deciding() const {
    auto all = served.shards();
    if (!ctx.split)
      return all;
    std::set<int16_t> mine;
    for (auto s : all)
      if (ctx.split->decides(ctx.index, s))
        mine.insert(s);
    return mine;
  }
  bool flush_queued = false;
  /// The last batch carried decider.group_commit_from_requests requests or more: load is
  /// up, so a short wait (decider.group_commit_us) lets the next one carry more. Below
  /// that the wait would add to each request's latency what it saves in commits: a few
  /// requests per batch are what a steady low rate (a start and a completion) gives.
  bool busy = false;
  std::chrono::microseconds group_commit{0};
  size_t group_commit_from = 2;
  idle_poll poll;
  /// The longest the node timer may sleep between its polls (timer_hint_wanted): an idle
  /// timer backs off to poll.idle_max_ms.
  int64_t timer_longest_gap_ms = 1000;
  warn_limiter errors;
  // The node's flush metrics (engine/metrics/node_metrics.hpp), looked up once.
  engine::metrics::histogram& flush_seconds =
    engine::metrics::node_metrics().decide_flush_seconds.with();
  engine::metrics::histogram& batch_requests =
    engine::metrics::node_metrics().decide_batch_requests.with();
  engine::metrics::histogram& batch_workflows =
    engine::metrics::node_metrics().decide_batch_workflows.with();

  static inline const char* name = "nf.decide_committer";

  ~committer_state() {
    // A requester must not wait for its own timeout when the partition moves away.
    auto gone = nf::make_error(nf::errc::unavailable,
                                  "decider stopped (partition moved or node stopping): retry");
    auto fail = [&](auto& xs) {
      for (auto& p : xs)
        if (p.rp.pending())
          p.rp.deliver(gone);
    };
    fail(starts);
    fail(completions);
    fail(commands);
  }
};

using committer_actor = caf::stateful_actor<committer_state>;

// Bounds on one transaction's requests (completions: store::max_completions_per_batch).
constexpr size_t max_starts_per_flush = 1000;
constexpr size_t max_commands_per_flush = 100;

/// Moves the oldest `n` of `from` (at most) to `to`.
template <class T>
void take_first(std::vector<T>& from, std::vector<T>& to, size_t n) {
  auto k = static_cast<std::ptrdiff_t>(std::min(n, from.size()));
  to.assign(std::make_move_iterator(from.begin()), std::make_move_iterator(from.begin() + k));
  from.erase(from.begin(), from.begin() + k);
}

void schedule_flush(committer_actor* self) {
  auto& st = self->state;
  if (st.flush_queued)
    return;
  st.flush_queued = true;
  // Behind everything already in the mailbox: what arrived before it shares one
  // transaction (group commit by draining, docs/engine.md §3).
  if (st.busy && st.group_commit.count() > 0)
    self->delayed_send(self, st.ctx.split ? st.ctx.split->group_wait(st.group_commit) : st.group_commit,
                       flush_atom_v);
  else
    self->send(self, flush_atom_v);
}

/// Whether the node's timer needs to hear of a timer due at `fire_at_ms` (wall clock): only
/// when it is due before the timer's own polls (at most poll.idle_max_ms apart) would find it in
/// time, with as much again for the clocks of node and server to disagree. Most timers a
/// decision arms are task and workflow timeouts minutes away: their hint woke three actors
/// for nothing.
bool timer_hint_wanted(const committer_state& st, int64_t fire_at_ms) {
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  st.ctx.wall_clock().time_since_epoch())
                  .count();
  return fire_at_ms - now_ms <= 2 * st.timer_longest_gap_ms;
}

void send_hints(committer_actor* self, const engine::batch_hints& h) {
  auto& st = self->state;
  auto& node = st.ctx.node;
  if (!node)
    return;
  for (const auto& q : h.queues)
    self->send(node, work_atom_v, q);
  if (h.earliest_timer_ms && timer_hint_wanted(st, *h.earliest_timer_ms))
    for (auto shard : h.timer_shards)
      self->send(node, armed_atom_v, shard, *h.earliest_timer_ms);
  if (!st.ctx.sinks || st.ctx.sinks->any())
    for (auto shard : h.outbox_shards)
      self->send(node, outbox_atom_v, shard);
  for (auto s : h.shards)
    self->send(node, decide_atom_v, s);
}


void flush(committer_actor* self) {
  auto& st = self->state;
  st.flush_queued = false;
  engine::batch_input in;
  std::vector<pending_start> starts;
  std::vector<pending_completion> completions;
  std::vector<pending_command> commands;
  // Every partition of the node shares this transaction, so a burst (a wide fork's
  // tasks reported together) is cut into bounded batches; the rest waits for the
  // next flush, which follows at once (after decider.group_commit_us when busy).
  take_first(st.starts, starts, max_starts_per_flush);
  take_first(st.commands, commands, max_commands_per_flush);
  {
    // The store takes a task once per batch: a second report of the same task
    // waits for the next flush (where the first one's outcome decides it).
    std::set<std::string> tasks;
    std::vector<pending_completion> later;
    for (auto& c : st.completions) {
      if (completions.size() < store::max_completions_per_batch
          && tasks.insert(c.req.task.str()).second)
        completions.push_back(std::move(c));
      else
        later.push_back(std::move(c));
    }
    st.completions = std::move(later);
  }
  for (const auto& s : starts)
    in.starts.push_back(s.req);
  for (const auto& c : completions)
    in.completions.push_back(c.req);
  for (const auto& c : commands)
    in.commands.push_back(c.req);

  auto deciding = st.deciding();
  st.core->fence(st.served.fence(deciding));
  st.core->serve(std::move(deciding));
  auto out = st.core->run(in);
  // Shards the fence refused moved to another node: claimed here no more, whatever the
  // node's partition actors do until membership tells the node.
  for (auto shard : out.fenced)
    st.served.fenced(shard, st.served.epoch_of(shard));

  auto answer = [](auto& waiting, auto& results, auto reply) {
    for (size_t i = 0; i < waiting.size(); ++i) {
      auto& r = results[i];
      if (r)
        waiting[i].rp.deliver(reply(*r));
      else
        waiting[i].rp.deliver(r.error());
    }
  };
  answer(starts, out.starts,
         [](const store::start_result& r) { return msg::start_reply{r.id.str(), r.created}; });
  answer(completions, out.completions, [](std::string& json) { return std::move(json); });
  answer(commands, out.commands, [](std::string& json) { return std::move(json); });
  for (auto& l : out.lent) {
    std::vector<msg::leased_task> tasks;
    tasks.reserve(l.tasks.size());
    for (const auto& t : l.tasks)
      tasks.push_back(to_message(t));
    self->send(l.poll.lessor, lent_atom_v, l.poll.poll, std::move(tasks));
  }
  send_hints(self, out.hints);

  auto requests = starts.size() + completions.size() + commands.size();
  st.busy = requests >= st.group_commit_from;
  if (st.ctx.split)
    st.ctx.split->note_flush(requests, self->clock().now());
  const auto& s = out.stats;
  // Idle polls (nothing claimed, nothing asked) would bury the flushes that did work.
  if (s.workflows > 0 || requests > 0) {
    st.poll.active();
    st.flush_seconds.observe(s.ms / 1000.0);
    st.batch_requests.observe(static_cast<double>(requests));
    st.batch_workflows.observe(static_cast<double>(s.workflows));
  }
  if (s.workflows > 0 || requests > 0)
    st.log->debug("decide_batch partitions={} starts={} completions={} commands={} workflows={} "
                  "tasks_scheduled={} leased={} recalled={} stale={} attempts={} ms={:.2f} "
                  "db_ms={:.2f}",
                  st.core->shards().size(), s.starts, s.completions, s.commands, s.workflows,
                  s.tasks_scheduled, s.leased, s.recalled, s.stale, s.attempts, s.ms, s.db_ms);
  auto failed = [](const auto& xs) {
    for (const auto& x : xs)
      if (!x && nf::code_of(x.error()) == nf::errc::unavailable)
        return &x.error();
    return static_cast<const caf::error*>(nullptr);
  };
  const caf::error* err = failed(out.starts);
  if (err == nullptr)
    err = failed(out.completions);
  if (err == nullptr)
    err = failed(out.commands);
  if (err != nullptr && st.errors.allow())
    st.log->warn("decide_failed error=\"{}\" suppressed={}", nf::message_of(*err),
                 st.errors.suppressed());
  if (out.more || !st.completions.empty() || !st.starts.empty() || !st.commands.empty())
    schedule_flush(self);
}

/// Queues a checked request for the next flush; a rejected one is answered at once.
template <class T>
caf::response_promise enqueue(committer_actor* self, std::vector<pending<T>>& into,
                              caf::expected<T> req) {
  auto rp = self->make_response_promise();
  if (!req) {
    rp.deliver(req.error());
    return rp;
  }
  into.push_back({std::move(*req), rp});
  schedule_flush(self);
  return rp;
}

caf::behavior committer_behavior(committer_actor* self, committer_context ctx) {
  auto& st = self->state;
  st.log = folder_logger("decider");
  st.group_commit =
    std::chrono::microseconds{ctx.settings.get(config::keys::decider_group_commit_us)};
  st.group_commit_from =
    static_cast<size_t>(ctx.settings.get(config::keys::decider_group_commit_from_requests));
  st.poll = idle_poll{
    std::chrono::milliseconds{ctx.settings.get(config::keys::decider_poll_interval_ms)},
    std::chrono::milliseconds{ctx.settings.get(config::keys::poll_idle_max_ms)}};
  st.timer_longest_gap_ms = std::max(ctx.settings.get(config::keys::timer_poll_interval_ms),
                                     ctx.settings.get(config::keys::poll_idle_max_ms));
  st.core = ctx.batches(ctx);
  st.ctx = std::move(ctx);
  // A partition that moved away takes its shard with it; the others go on.
  self->set_down_handler([self](caf::down_msg& dm) { self->state.served.leave(dm.source); });
  self->delayed_send(self, st.poll.base(), tick_atom_v);
  return {
    [=](join_atom, int16_t shard) {
      // The first flush claims whatever waited while nobody served this shard.
      if (self->state.served.join_sender(self, shard))
        schedule_flush(self);
    },
    [=](join_atom, int16_t shard, int64_t epoch, const std::string& node) {
      // As above, fenced at the epoch the node acquired the partition at.
      if (self->state.served.join_sender(self, shard, epoch, node))
        schedule_flush(self);
    },
    [=](start_atom, int16_t shard, const msg::start_request& m) {
      auto req = engine::to_start(m);
      if (req)
        req->id = engine::new_workflow_id_in(shard, self->state.ctx.partition_count);
      return enqueue(self, self->state.starts, std::move(req));
    },
    [=](complete_atom, const msg::task_result& m) {
      return enqueue(self, self->state.completions, engine::to_completion(m));
    },
    [=](command_atom, const msg::workflow_command& m) {
      return enqueue(self, self->state.commands, engine::to_command(m));
    },
    [=](decide_atom) {
      self->state.poll.active();
      schedule_flush(self);
    },
    [=](tick_atom) {
      // The poll that keeps the engine going when every hint is lost (I9).
      schedule_flush(self);
      self->delayed_send(self, self->state.poll.next(), tick_atom_v);
    },
    [=](flush_atom) { flush(self); },
  };
}

} // namespace

std::unique_ptr<engine::decide_batches> connect_decide_batches(const committer_context& ctx) {
  return std::make_unique<engine::decider_core>(
    ctx.partition_count, ctx.dsn,
    static_cast<int>(ctx.settings.get(config::keys::decider_batch_size)), ctx.waiting, ctx.leases);
}

caf::actor spawn_decide_committer(caf::actor_system& sys, const committer_context& ctx) {
  if (!ctx.detached)
    return sys.spawn(committer_behavior, ctx);
  return sys.spawn<caf::detached>(committer_behavior, ctx);
}

} // namespace nf::actors
