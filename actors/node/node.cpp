#include "actors/node/node.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/logger.h>

#include "actors/decider/committer.hpp"
#include "actors/decider/committer_split.hpp"
#include "config/folder_logger.hpp"
#include "engine/lease/lease_memory.hpp"
#include "engine/lease/waiting_polls.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "actors/maintenance/maintenance.hpp"
#include "actors/scheduler/scheduler.hpp"
#include "actors/membership/membership.hpp"
#include "actors/lessor/lessor.hpp"
#include "actors/node/peer_health.hpp"
#include "actors/node/peer_links.hpp"
#include "actors/partition/partition.hpp"
#include "actors/relay/outbox_relay.hpp"
#include "actors/timer/node_timer.hpp"
#include "actors/system_tasks/runner.hpp"
#include "actors/system_tasks/script_runner.hpp"
#include "actors/system_tasks/vector_runner.hpp"
#include "proto/type_ids.hpp"
#include "flow/uuid.hpp"
#include "store/ids.hpp"
#include "proto/errors.hpp"
#include "store/queues.hpp"
#include "store/sharding.hpp"

namespace nf::actors {

namespace {

constexpr auto respawn_delay = std::chrono::seconds{1};
constexpr auto status_timeout = std::chrono::seconds{2};

struct node_state {
  node_options opt;
  int partitions = 16;
  bool nudges = true;
  std::string address;
  caf::actor membership;
  caf::actor maintenance;
  caf::actor scheduler;
  caf::actor runner;  ///< started once membership first reports (start_runner)
  caf::actor script_runner; ///< likewise, when the node has a sandbox pool
  caf::actor vector_runner; ///< likewise (LLM_STORE_EMBEDDINGS, LLM_SEARCH_EMBEDDINGS)
  /// Decide for the partitions of this node: at low load committers[0] for all of them,
  /// under load partition p goes to committers[p mod N] (committer_split).
  std::vector<caf::actor> committers;
  std::shared_ptr<committer_split> split;
  /// The lessors' parked polls, lent to the committers (null: lessor.lease_in_decision off).
  std::shared_ptr<engine::waiting_polls> waiting;
  /// The leases this node's lessors and committers made, for their completions.
  std::shared_ptr<engine::lease_memory> leases = std::make_shared<engine::lease_memory>();
  caf::actor outbox_relay;  ///< delivers the outbox of every partition of this node
  caf::actor node_timer;    ///< fires the timers of every partition of this node
  std::vector<int16_t> owned;  ///< what membership last said
  /// The epoch membership holds each owned partition at, and this node's id: what the
  /// partition's writes are fenced by (store/partition_fence.hpp).
  std::map<int16_t, int64_t> epochs;
  std::string node_id;
  std::vector<std::string> owners;  ///< every partition's owner address ("" = none), ditto
  std::map<int16_t, partition_handles> parts;
  /// Requests relayed to the owner of their partition and not yet answered, by id: what to
  /// do when the owner does not answer in time (write_through), and its address.
  struct relayed {
    std::string address;
    std::function<void()> here;
  };
  std::map<uint64_t, relayed> relays;
  uint64_t next_relay = 1;
  /// Reports for the owners of their workflows' partitions, by owner address, gathered
  /// until the node reaches the flush it queued behind the first (forward_reports).
  struct queued_report {
    int16_t shard;
    caf::response_promise rp;
    msg::task_result m;
    std::chrono::steady_clock::time_point since;
  };
  std::map<std::string, std::vector<queued_report>> outgoing_reports;
  std::optional<peer_health> health;
  std::chrono::milliseconds peer_answer{2000};
  /// Lessors of partitions owned by a peer this node cannot reach, by shard: the polls for
  /// their queues lease from the database here meanwhile (write_through).
  std::map<int16_t, caf::actor> stand_ins;
  /// cluster.lease_locally: polls for the queues of partitions another node owns are leased
  /// here, by these lessors (by shard), which offer them to this node's committers.
  bool lease_locally = true;
  std::map<int16_t, caf::actor> local_lessors;
  /// The other nodes that own partitions (from `owners`): where work hints go when polls
  /// are leased locally, since any of them may hold a parked poll for the queue.
  std::vector<std::string> peer_addresses;
  size_t next_start = 0;
  bool stopping = false;
  std::shared_ptr<spdlog::logger> log;

  static inline const char* name = "nf.node";
};

using node_actor = caf::stateful_actor<node_state>;

const partition_handles* owner(node_actor* self, int16_t shard) {
  auto it = self->state.parts.find(shard);
  return it == self->state.parts.end() ? nullptr : &it->second;
}

caf::error not_owned(int16_t shard) {
  return nf::make_error(nf::errc::unavailable,
                           "partition " + std::to_string(shard) + " is not owned by this node");
}

/// The address of the node that owns `shard` by membership's last word, or "" when
/// that is nobody, unknown or this node itself.
std::string owner_elsewhere(node_actor* self, int16_t shard) {
  const auto& st = self->state;
  auto i = static_cast<size_t>(shard);
  if (i >= st.owners.size() || st.owners[i] == st.address)
    return {};
  return st.owners[i];
}

partition_context context_of(node_actor* self, int16_t shard) {
  auto& st = self->state;
  partition_context ctx;
  ctx.shard = shard;
  ctx.partition_count = st.partitions;
  ctx.dsn = st.opt.dsn;
  ctx.node = caf::actor_cast<caf::actor>(self);
  ctx.committers = st.committers;
  ctx.split = st.split;
  ctx.outbox_relay = st.outbox_relay;
  ctx.node_timer = st.node_timer;
  ctx.waiting = st.waiting;
  ctx.leases = st.leases;
  ctx.settings = st.opt.settings;
  return ctx;
}

/// A lessor of `shard`'s queues on this node, which does not own the partition: the same
/// lease statement (FOR UPDATE SKIP LOCKED) the owner's runs, so the two may overlap (I9),
/// with no epoch to fence it. `lend`: its parked polls are offered to this node's
/// committers, which lease them the tasks they decide.
caf::actor spawn_guest_lessor(node_actor* self, int16_t shard, bool lend) {
  auto ctx = context_of(self, shard);
  if (!lend)
    ctx.waiting = nullptr;
  auto lessor = spawn_lessor(self->system(), ctx);
  self->monitor(lessor);
  return lessor;
}

/// The lessor that leases `shard`'s queues here while their owner cannot be reached.
caf::actor stand_in_lessor(node_actor* self, int16_t shard) {
  auto& st = self->state;
  if (auto it = st.stand_ins.find(shard); it != st.stand_ins.end())
    return it->second;
  auto lessor = spawn_guest_lessor(self, shard, false);
  st.stand_ins.emplace(shard, lessor);
  st.log->warn("stand_in_lessor_started partition={} owner={}", shard, owner_elsewhere(self, shard));
  return lessor;
}

/// The lessor that leases `shard`'s queues to this node's polls (cluster.lease_locally) while
/// another node owns the partition. Its polls wait here, where this node's committers lease
/// them the tasks they decide; forwarded to the owner, they would wait where only the owner's
/// decisions could.
caf::actor local_lessor(node_actor* self, int16_t shard) {
  auto& st = self->state;
  if (auto it = st.local_lessors.find(shard); it != st.local_lessors.end())
    return it->second;
  auto lessor = spawn_guest_lessor(self, shard, true);
  st.local_lessors.emplace(shard, lessor);
  st.log->info("local_lessor_started partition={}", shard);
  return lessor;
}

/// Stops the lessors of `guests` (stand-ins or local lessors, logged as `what`_stopped) whose
/// shard `stop` names; their open polls are answered "poll again".
template <class Pred>
void stop_guests(node_actor* self, std::map<int16_t, caf::actor>& guests, const char* what,
                 Pred stop) {
  for (auto it = guests.begin(); it != guests.end();) {
    if (!stop(it->first)) {
      ++it;
      continue;
    }
    self->state.log->info("{}_stopped partition={}", what, it->first);
    self->send_exit(it->second, caf::exit_reason::user_shutdown);
    it = guests.erase(it);
  }
}

/// Stops the stand-in lessors of `shards` (owned here now, by a new owner, or by a peer
/// that answers again).
template <class Pred>
void stop_stand_ins(node_actor* self, Pred stop) {
  stop_guests(self, self->state.stand_ins, "stand_in_lessor", stop);
}

/// Does, on this node, through the database, what the owner of `shard` would have done
/// with `m` (DESIGN I9: ownership is an optimisation). A completion or command is committed
/// by this node's committer, which serves no such shard: it leaves the "DecideQueues" row for
/// whoever owns the partition to decide (I2-I4 absorb the overlap), and answers as the
/// owner's committer would. A poll is leased by a stand-in lessor of the shard.
/// `since`: when the request first went to the owner.
void write_through(node_actor* self, int16_t, caf::response_promise& rp,
                   const msg::task_result& m, std::chrono::steady_clock::time_point) {
  rp.delegate(self->state.committers.front(), complete_atom_v, m);
}

void write_through(node_actor* self, int16_t, caf::response_promise& rp,
                   const msg::workflow_command& m, std::chrono::steady_clock::time_point) {
  rp.delegate(self->state.committers.front(), command_atom_v, m);
}

void write_through(node_actor* self, int16_t shard, caf::response_promise& rp,
                   const msg::poll_request& m, std::chrono::steady_clock::time_point since) {
  // A poll that already waited for the owner waits here only what is left of its timeout.
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - since)
                  .count();
  auto left = m;
  left.timeout_ms = std::max<int64_t>(0, m.timeout_ms - waited);
  // The partition may have come here meanwhile (membership moved it while the owner was away).
  if (const auto* h = owner(self, shard))
    rp.delegate(h->lessor, poll_atom_v, std::move(left));
  else
    rp.delegate(stand_in_lessor(self, shard), poll_atom_v, std::move(left));
}

template <class Msg>
struct reply_of {
  using type = std::string;
};
template <>
struct reply_of<msg::poll_request> {
  using type = std::vector<msg::leased_task>;
};

/// How long the owner may take over `m` before this node does it itself: its own wait (a
/// long poll's timeout) and cluster.peer_answer_ms.
caf::timespan answer_bound(node_actor* self, const msg::poll_request& m) {
  return self->state.peer_answer + std::chrono::milliseconds{m.timeout_ms};
}
template <class Msg>
caf::timespan answer_bound(node_actor* self, const Msg&) {
  return self->state.peer_answer;
}

/// How a relayed request ended: answered by the peer; refused by it as `unavailable` (it
/// does not own the partition now, or its database is away: the work is done here); or
/// not answered at all (the peer is suspect, and the work is done here).
enum class relay_end { answered, refused, silent };

/// Ends relayed request `id` (the answer, if any, is the caller's to deliver).
void end_relay(node_actor* self, uint64_t id, relay_end how, const std::string& why) {
  bool answered = how != relay_end::silent;
  auto& st = self->state;
  auto it = st.relays.find(id);
  if (it == st.relays.end())
    return;
  auto w = std::move(it->second);
  st.relays.erase(it);
  auto now = std::chrono::steady_clock::now();
  bool was_suspect = st.health->suspect(w.address, now);
  st.health->ended(w.address, answered, now);
  if (answered) {
    if (was_suspect) {
      // The peer answers again: its partitions go back to it.
      st.log->info("peer_answers_again address={}", w.address);
      stop_stand_ins(self, [&](int16_t shard) { return owner_elsewhere(self, shard) == w.address; });
    }
    if (how == relay_end::refused) {
      st.log->info("relay_refused address={} why=\"{}\" (done through the database here)",
                   w.address, why);
      w.here();
    }
    return;
  }
  if (!was_suspect)
    st.log->warn("peer_suspect address={} why=\"{}\" (its partitions' requests go through the "
                 "database for cluster.peer_suspect_ms)",
                 w.address, why);
  w.here();
}

/// Whether a relayed request's error is the peer's own answer for the client (lease lost, not
/// found, …) rather than a link that failed or a peer that no longer owns the partition,
/// whose work is then done here.
bool peers_answer(const caf::error& e) {
  return nf::is_nodeflow_error(e) && nf::code_of(e) != nf::errc::unavailable;
}

/// Relays the reports queued for `address` as one request, `(forward_atom, results)`, which
/// the node there applies as if each had come alone; each report's answer goes to its own
/// requester. A report the peer answers `unavailable` (its partition moved, its database is
/// away), and all of them when the peer does not answer within cluster.peer_answer_ms, are
/// done here instead (write_through), as a lone forwarded report would be.
void forward_reports(node_actor* self, const std::string& address) {
  auto& st = self->state;
  auto it = st.outgoing_reports.find(address);
  if (it == st.outgoing_reports.end())
    return;
  auto batch = std::make_shared<std::vector<node_state::queued_report>>(std::move(it->second));
  st.outgoing_reports.erase(it);
  if (batch->empty())
    return;
  auto all_here = [self, batch] {
    for (auto& r : *batch)
      write_through(self, r.shard, r.rp, r.m, r.since);
  };
  if (!st.health->may_relay(address, std::chrono::steady_clock::now())) {
    all_here();
    return;
  }
  std::vector<msg::task_result> sent;
  sent.reserve(batch->size());
  for (const auto& r : *batch) {
    sent.push_back(r.m);
    sent.back().credential = st.opt.peer_credential;
  }
  engine::metrics::node_metrics().forwarded_report_batch.with().observe(
    static_cast<double>(sent.size()));
  auto id = st.next_relay++;
  st.relays.emplace(id, node_state::relayed{address, all_here});
  st.health->sent(address);
  auto bound = caf::timespan{st.peer_answer};
  self->delayed_send(self, bound, tick_atom_v, id);
  st.opt.peers->with(self, address, [self, id, batch, sent = std::move(sent),
                                     bound](const caf::actor* peer) mutable {
    if (self->state.relays.count(id) == 0)
      return; // done here already
    if (!peer) {
      end_relay(self, id, relay_end::silent, "no link");
      return;
    }
    self->request(*peer, bound, forward_atom_v, std::move(sent))
      .then(
        [self, id, batch](std::vector<msg::report_outcome>& outcomes) {
          if (self->state.relays.count(id) == 0)
            return;
          end_relay(self, id, relay_end::answered, {});
          for (size_t i = 0; i < batch->size(); ++i) {
            auto& r = (*batch)[i];
            auto* o = i < outcomes.size() ? &outcomes[i] : nullptr;
            if (o != nullptr && !o->error)
              r.rp.deliver(std::move(o->answer));
            else if (o != nullptr && peers_answer(o->error))
              r.rp.deliver(std::move(o->error));
            else
              write_through(self, r.shard, r.rp, r.m, r.since);
          }
        },
        [self, id, batch](caf::error& e) {
          if (self->state.relays.count(id) == 0)
            return;
          if (peers_answer(e)) {
            end_relay(self, id, relay_end::answered, {});
            for (auto& r : *batch)
              r.rp.deliver(e);
            return;
          }
          end_relay(self, id,
                    nf::is_nodeflow_error(e) ? relay_end::refused : relay_end::silent,
                    nf::message_of(e));
        });
  });
}

/// Queues a report for the owner at `address`. Reports that arrive while the node works
/// through its mailbox go to a peer together: a worker's batch of reports, or many workers'
/// at once, cross in one round trip instead of one each (the peer's api gives each to its
/// node alone). The first one queues a flush behind everything already in the mailbox.
void queue_report(node_actor* self, const std::string& address, int16_t shard,
                  caf::response_promise rp, const msg::task_result& m,
                  std::chrono::steady_clock::time_point now) {
  auto& q = self->state.outgoing_reports[address];
  if (q.empty())
    self->send(self, flush_atom_v, address);
  q.push_back({shard, std::move(rp), m, now});
  if (q.size() >= static_cast<size_t>(store::max_lease_tasks)) // what one message may carry
    forward_reports(self, address);
}

/// Forwards a request to the node that owns `shard`, as `(forward_atom, m)` (which
/// that node never forwards again, so two nodes that disagree about an owner cannot
/// pass a request back and forth); its answer goes straight to the requester. When that
/// node cannot be reached, does not answer within answer_bound, or is suspect or full
/// (peer_health.hpp), the work is done here instead (write_through).
template <class Msg>
void forward(node_actor* self, int16_t shard, caf::response_promise rp, const Msg& m) {
  using reply = typename reply_of<Msg>::type;
  auto& st = self->state;
  auto address = owner_elsewhere(self, shard);
  if (address.empty()) {
    rp.deliver(not_owned(shard));
    return;
  }
  auto sent = m;
  sent.credential = st.opt.peer_credential;
  if (st.peer_answer.count() == 0) {
    // Write-through off: the owner's answer, or `unavailable` for as long as it is away.
    st.opt.peers->with(self, address, [rp, sent, shard, address](const caf::actor* peer) mutable {
      if (peer)
        rp.delegate(*peer, forward_atom_v, sent);
      else
        rp.deliver(nf::make_error(nf::errc::unavailable,
                                  "partition " + std::to_string(shard) + " is owned by the node at "
                                    + address + ", which this node cannot reach: retry"));
    });
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (!st.health->may_relay(address, now)) {
    write_through(self, shard, rp, m, now);
    return;
  }
  if constexpr (std::is_same_v<Msg, msg::task_result>) {
    queue_report(self, address, shard, std::move(rp), m, now);
    return;
  }
  auto id = st.next_relay++;
  st.relays.emplace(id, node_state::relayed{address, [self, shard, rp, m, now]() mutable {
                      write_through(self, shard, rp, m, now);
                    }});
  st.health->sent(address);
  auto bound = answer_bound(self, m);
  self->delayed_send(self, bound, tick_atom_v, id);
  st.opt.peers->with(self, address, [self, id, rp, sent, bound](const caf::actor* peer) mutable {
    if (self->state.relays.count(id) == 0)
      return; // done here already
    if (!peer) {
      end_relay(self, id, relay_end::silent, "no link");
      return;
    }
    self->request(*peer, bound, forward_atom_v, sent)
      .then(
        [self, id, rp](reply& r) mutable {
          if (self->state.relays.count(id) == 0)
            return;
          end_relay(self, id, relay_end::answered, {});
          rp.deliver(std::move(r));
        },
        [self, id, rp](caf::error& e) mutable {
          if (self->state.relays.count(id) == 0)
            return;
          if (peers_answer(e)) {
            end_relay(self, id, relay_end::answered, {});
            rp.deliver(std::move(e));
            return;
          }
          end_relay(self, id,
                    nf::is_nodeflow_error(e) ? relay_end::refused : relay_end::silent,
                    nf::message_of(e));
        });
  });
}

/// Delegates a request to the owner of `shard` (its answer goes straight to the
/// requester): the partition's actor here, or the node that owns it when `forwarded`
/// is false; else answers `unavailable`.
template <class Atom, class Msg>
caf::response_promise route(node_actor* self, int16_t shard,
                            caf::actor partition_handles::*role, bool forwarded, Atom atom,
                            const Msg& m) {
  auto rp = self->make_response_promise();
  if (const auto* h = owner(self, shard))
    rp.delegate(h->*role, atom, m);
  else if (forwarded)
    rp.deliver(not_owned(shard));
  else
    forward(self, shard, rp, m);
  return rp;
}

/// Forwards a hint to the owning actor of `shard`; dropped when nudges are off or the
/// partition is not owned here (the owner's poll finds the work, I9). False when dropped.
template <class... Ts>
bool hint(node_actor* self, int16_t shard, caf::actor partition_handles::*role, Ts&&... xs) {
  if (!self->state.nudges)
    return false;
  const auto* h = owner(self, shard);
  if (h)
    self->send(h->*role, std::forward<Ts>(xs)...);
  return h != nullptr;
}

/// Sends `(forward_atom, xs..., node credential)` to the node that owns `shard` when a link
/// to it is open; else the link starts opening and this hint is lost (I9).
template <class... Ts>
void hint_elsewhere(node_actor* self, int16_t shard, Ts&&... xs) {
  if (!self->state.nudges)
    return;
  // Not to a suspect peer: a link that hangs would hold every hint sent over it.
  if (auto address = owner_elsewhere(self, shard);
      !address.empty() && !self->state.health->suspect(address, std::chrono::steady_clock::now()))
    if (const auto* peer = self->state.opt.peers->open_or_start(self, address))
      self->send(*peer, forward_atom_v, std::forward<Ts>(xs)..., self->state.opt.peer_credential);
}

/// Routes a request about one workflow to the decider of its shard.
template <class Atom, class Msg>
caf::response_promise to_decider(node_actor* self, const std::string& workflow, bool forwarded,
                                 Atom atom, const Msg& m) {
  if (!flow::is_uuid(workflow)) {
    auto rp = self->make_response_promise();
    rp.deliver(nf::make_error(nf::errc::invalid,
                                 "workflow_id: expected a UUID, got \"" + workflow + "\""));
    return rp;
  }
  return route(self, shard_of(workflow, self->state.partitions), &partition_handles::decider,
               forwarded, atom, m);
}

/// Routes a poll to the lessor of its queue's shard: the partition's when this node owns it,
/// else this node's local lessor of the shard (cluster.lease_locally) or the owner's.
caf::response_promise to_lessor(node_actor* self, bool forwarded, const msg::poll_request& m) {
  auto shard = queue_shard(m.queue, self->state.partitions);
  if (self->state.lease_locally && owner(self, shard) == nullptr) {
    auto rp = self->make_response_promise();
    rp.delegate(local_lessor(self, shard), poll_atom_v, m);
    return rp;
  }
  return route(self, shard, &partition_handles::lessor, forwarded, poll_atom_v, m);
}

/// Hands a work hint for `queue` to this node's lessors of its shard: the partition's, a
/// stand-in and a local lessor, whichever run here.
void hint_lessors_here(node_actor* self, const std::string& queue) {
  auto& st = self->state;
  if (!st.nudges)
    return;
  auto shard = queue_shard(queue, st.partitions);
  hint(self, shard, &partition_handles::lessor, work_atom_v, queue);
  for (auto* guests : {&st.stand_ins, &st.local_lessors})
    if (auto it = guests->find(shard); it != guests->end())
      self->send(it->second, work_atom_v, queue);
}

/// Sends `(forward_atom, work_atom, queue, credential)` to every other node whose link is open
/// (cluster.lease_locally: any of them may hold a parked poll for the queue); a link not open
/// yet starts opening and misses this hint (I9).
void hint_every_peer(node_actor* self, const std::string& queue) {
  auto& st = self->state;
  if (!st.nudges)
    return;
  auto now = std::chrono::steady_clock::now();
  for (const auto& address : st.peer_addresses)
    if (!st.health->suspect(address, now))
      if (const auto* peer = st.opt.peers->open_or_start(self, address))
        self->send(*peer, forward_atom_v, work_atom_v, queue, st.opt.peer_credential);
}

/// Brings the running partitions in line with `st.owned`.
void sync_partitions(node_actor* self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  for (auto it = st.parts.begin(); it != st.parts.end();) {
    auto e = st.epochs.find(it->first);
    bool moved = e != st.epochs.end() && e->second != it->second.epoch;
    if (std::find(st.owned.begin(), st.owned.end(), it->first) == st.owned.end() || moved) {
      st.log->info("partition_stopped partition={} epoch={}", it->first, it->second.epoch);
      self->send_exit(it->second.supervisor, caf::exit_reason::user_shutdown);
      it = st.parts.erase(it);
    } else {
      ++it;
    }
  }
  // The partition's own lessor takes over its queues' polls here.
  auto owned_here = [&](int16_t shard) {
    return std::find(st.owned.begin(), st.owned.end(), shard) != st.owned.end();
  };
  stop_stand_ins(self, owned_here);
  stop_guests(self, st.local_lessors, "local_lessor", owned_here);
  for (auto shard : st.owned) {
    if (st.parts.count(shard) != 0)
      continue;
    auto ctx = context_of(self, shard);
    if (auto e = st.epochs.find(shard); e != st.epochs.end()) {
      ctx.epoch = e->second; // fences the partition's writes (a stand-in has none: I9)
      ctx.node_id = st.node_id;
    }
    auto h = spawn_partition(self->system(), ctx);
    h.epoch = ctx.epoch;
    self->monitor(h.supervisor);
    st.parts.emplace(shard, std::move(h));
    st.log->info("partition_started partition={} epoch={}", shard, ctx.epoch);
  }
  engine::metrics::node_metrics().partitions_owned.with().set(
    static_cast<int64_t>(st.parts.size()));
}

void stop_everything(node_actor* self, const caf::error& reason) {
  auto& st = self->state;
  if (st.stopping)
    return;
  st.stopping = true;
  engine::metrics::node_metrics().partitions_owned.with().set(0);
  st.log->info("node_stopping partitions={} reason={}", st.parts.size(), to_string(reason));
  // The runner first: its long poll waits in a lessor about to stop, and that
  // lessor's answer would only be a complaint about a partition that moved. Then the
  // partitions, then membership releases the leases (its exit handler).
  if (st.runner)
    self->send_exit(st.runner, reason);
  if (st.script_runner)
    self->send_exit(st.script_runner, reason);
  if (st.vector_runner)
    self->send_exit(st.vector_runner, reason);
  for (auto& [shard, h] : st.parts)
    self->send_exit(h.supervisor, reason);
  st.parts.clear();
  for (auto* guests : {&st.stand_ins, &st.local_lessors}) {
    for (auto& [shard, l] : *guests)
      self->send_exit(l, reason);
    guests->clear();
  }
  for (const auto& a : st.committers)
    self->send_exit(a, reason);
  for (const auto& a : {st.outbox_relay, st.node_timer, st.maintenance, st.scheduler,
                        st.membership})
    if (a)
      self->send_exit(a, reason);
  self->quit(reason);
}

/// The system-task runner polls its queue through this node, so it starts once
/// membership has said which partitions are whose: a poll before that could only be
/// answered "not owned".
void start_runner(node_actor* self) {
  auto& st = self->state;
  if (st.runner || st.stopping)
    return;
  system_task_options r;
  r.node = caf::actor_cast<caf::actor>(self);
  r.settings = st.opt.settings;
  r.http = st.opt.http;
  const auto& key_file = st.opt.settings.get(config::keys::secrets_master_key_file);
  if (!key_file.empty())
    r.secrets = std::make_shared<engine::secrets::source>(
      st.opt.dsn, engine::secrets::keyring::load(
                    key_file, st.opt.settings.get(config::keys::secrets_previous_key_files)));
  st.runner = spawn_system_task_runner(self->system(), r);
  self->link_to(st.runner);
  if (st.opt.scripts) {
    script_task_options s;
    s.node = r.node;
    s.settings = st.opt.settings;
    s.scripts = st.opt.scripts;
    st.script_runner = spawn_script_task_runner(self->system(), s);
    self->link_to(st.script_runner);
  }
  vector_task_options v;
  v.node = r.node;
  v.dsn = st.opt.dsn;
  v.settings = st.opt.settings;
  st.vector_runner = spawn_vector_task_runner(self->system(), v);
  self->link_to(st.vector_runner);
}

std::string status_json(node_actor* self, const std::string& membership_json) {
  auto& st = self->state;
  boost::json::object out;
  boost::json::error_code ec;
  auto m = boost::json::parse(membership_json, ec);
  if (!ec && m.is_object())
    out = std::move(m.get_object());
  else
    out["membershipError"] = membership_json;
  boost::json::array running;
  for (const auto& [shard, h] : st.parts)
    running.push_back(shard);
  out["address"] = st.address;
  out["partitionCount"] = st.partitions;
  out["running"] = std::move(running);
  // Partitions owned elsewhere whose queues this node leases to its own polls.
  boost::json::array local;
  for (const auto& [shard, l] : st.local_lessors)
    local.push_back(shard);
  out["localLessors"] = std::move(local);
  out["nudges"] = st.nudges;
  // How many of the node's committers decide now (committer_split).
  out["decidingCommitters"] = st.split->deciding();
  // Parked polls per queue the committers may lease new tasks to (lessor.lease_in_decision).
  boost::json::object waiting;
  if (st.waiting)
    for (const auto& [queue, n] : st.waiting->offered())
      waiting[queue] = n;
  out["waitingPolls"] = std::move(waiting);
  return boost::json::serialize(out);
}

caf::behavior node_behavior(node_actor* self, node_options opt) {
  auto& st = self->state;
  st.log = folder_logger("node");
  if (!opt.peers)
    opt.peers = std::make_shared<no_peer_links>();
  if (!opt.http)
    opt.http = std::make_shared<http::unconfigured_port>();
  st.partitions = static_cast<int>(opt.settings.get(config::keys::engine_partitions));
  st.nudges = opt.settings.get(config::keys::engine_nudges);
  st.address = !opt.advertise.empty() ? opt.advertise
               : !opt.settings.get(config::keys::node_advertise).empty()
                 ? opt.settings.get(config::keys::node_advertise)
                 : opt.settings.get(config::keys::node_host) + ":"
                     + std::to_string(opt.settings.get(config::keys::node_port));
  st.opt = std::move(opt);
  st.health.emplace(
    std::chrono::milliseconds{st.opt.settings.get(config::keys::cluster_peer_suspect_ms)},
    static_cast<size_t>(st.opt.settings.get(config::keys::cluster_max_relayed_per_peer)));
  st.peer_answer =
    std::chrono::milliseconds{st.opt.settings.get(config::keys::cluster_peer_answer_ms)};
  st.lease_locally = st.opt.settings.get(config::keys::cluster_lease_locally);
  auto me = caf::actor_cast<caf::actor>(self);

  membership_options m;
  m.dsn = st.opt.dsn;
  m.address = st.address;
  m.partition_count = st.partitions;
  m.heartbeat_ms = st.opt.settings.get(config::keys::membership_heartbeat_ms);
  m.lease_ms = st.opt.settings.get(config::keys::membership_lease_ms);
  m.node = me;
  st.membership = spawn_membership(self->system(), std::move(m));
  st.maintenance = spawn_maintenance(self->system(), st.opt.dsn, st.opt.settings);
  if (st.opt.settings.get(config::keys::lessor_lease_in_decision))
    st.waiting = std::make_shared<engine::waiting_polls>();
  // What the outbox relay last read of its sinks, for the committers' hints.
  auto sinks = std::make_shared<sink_presence>();
  committer_context d;
  d.sinks = sinks;
  d.waiting = st.waiting;
  d.leases = st.leases;
  d.partition_count = st.partitions;
  d.dsn = st.opt.dsn;
  d.node = me;
  d.settings = st.opt.settings;
  auto committers = static_cast<size_t>(st.opt.settings.get(config::keys::decider_committers));
  st.split = std::make_shared<committer_split>(
    committers, st.opt.settings.get(config::keys::decider_split_at_requests));
  d.split = st.split;
  for (size_t i = 0; i < committers; ++i) {
    d.index = i;
    st.committers.push_back(spawn_decide_committer(self->system(), d));
  }
  outbox_relay_context o;
  o.presence = sinks;
  o.dsn = st.opt.dsn;
  o.http = st.opt.http;
  o.settings = st.opt.settings;
  st.outbox_relay = spawn_outbox_relay(self->system(), o);
  node_timer_context t;
  t.dsn = st.opt.dsn;
  t.node = me;
  t.settings = st.opt.settings;
  st.node_timer = spawn_node_timer(self->system(), t);
  scheduler_context sc;
  sc.dsn = st.opt.dsn;
  sc.node = me;
  st.scheduler = spawn_scheduler(self->system(), sc);
  // Linked both ways: our exit stops them (membership then releases its leases), and
  // one of them failing (e.g. membership refusing a partition count that disagrees
  // with the database) stops the node with its reason.
  for (const auto& a : {st.membership, st.maintenance, st.outbox_relay, st.node_timer,
                        st.scheduler})
    self->link_to(a);
  for (const auto& a : st.committers)
    self->link_to(a);
  self->set_exit_handler([self](caf::exit_msg& msg) { stop_everything(self, msg.reason); });
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.opt.peers->forget(self, dm.source))
      return;
    for (auto* guests : {&st.stand_ins, &st.local_lessors})
      for (auto it = guests->begin(); it != guests->end(); ++it)
        if (it->second.address() == dm.source) {
          guests->erase(it); // the next poll for its queues starts another
          return;
        }
    for (auto it = st.parts.begin(); it != st.parts.end(); ++it) {
      if (it->second.supervisor.address() != dm.source)
        continue;
      st.log->warn("partition_crashed partition={} reason={} (restarting in {}s)", it->first,
                   to_string(dm.reason), respawn_delay.count());
      st.parts.erase(it);
      engine::metrics::node_metrics().partitions_owned.with().set(
        static_cast<int64_t>(st.parts.size()));
      self->delayed_send(self, respawn_delay, tick_atom_v);
      return;
    }
  });
  st.log->info("node_started address={} partitions={} nudges={}", st.address, st.partitions,
               st.nudges);
  return {
    [=](partitions_atom, int16_t shard, int64_t epoch, const std::string& node) {
      // Comes before the owned set it belongs to (membership.hpp). A running partition
      // whose lease was lost and taken back meanwhile restarts at the new epoch.
      self->state.epochs[shard] = epoch;
      self->state.node_id = node;
      if (auto it = self->state.parts.find(shard);
          it != self->state.parts.end() && it->second.epoch != epoch)
        sync_partitions(self);
    },
    [=](partitions_atom, std::vector<int16_t> owned) {
      std::sort(owned.begin(), owned.end());
      for (auto it = self->state.epochs.begin(); it != self->state.epochs.end();)
        it = std::binary_search(owned.begin(), owned.end(), it->first)
               ? std::next(it)
               : self->state.epochs.erase(it);
      self->state.owned = std::move(owned);
      sync_partitions(self);
      start_runner(self);
    },
    [=](tick_atom) { sync_partitions(self); },
    // A relayed request's answer_bound passed: unless answered, it is done here.
    [=](tick_atom, uint64_t relay) { end_relay(self, relay, relay_end::silent, "no answer in time"); },
    [=](flush_atom, const std::string& address) { forward_reports(self, address); },
    [=](start_atom, const msg::start_request& m) {
      // Any decider may start a workflow: it makes the id in its own shard.
      auto& st = self->state;
      auto rp = self->make_response_promise();
      if (st.parts.empty()) {
        rp.deliver(nf::make_error(nf::errc::unavailable,
                                     "this node owns no partition yet: retry"));
        return rp;
      }
      auto it = st.parts.begin();
      std::advance(it, static_cast<long>(st.next_start++ % st.parts.size()));
      rp.delegate(it->second.decider, start_atom_v, m);
      return rp;
    },
    [=](complete_atom, const msg::task_result& m) {
      return to_decider(self, m.workflow_id, false, complete_atom_v, m);
    },
    [=](command_atom, const msg::workflow_command& m) {
      return to_decider(self, m.workflow_id, false, command_atom_v, m);
    },
    [=](poll_atom, const msg::poll_request& m) { return to_lessor(self, false, m); },
    [=](owners_atom, std::vector<std::string> owners) {
      // A stand-in lessor stands in for the owner it was started for only.
      stop_stand_ins(self, [&](int16_t shard) {
        auto i = static_cast<size_t>(shard);
        return i >= owners.size() || i >= self->state.owners.size()
               || owners[i] != self->state.owners[i];
      });
      self->state.owners = std::move(owners);
      auto& peers = self->state.peer_addresses;
      peers.clear();
      for (const auto& a : self->state.owners)
        if (!a.empty() && a != self->state.address
            && std::find(peers.begin(), peers.end(), a) == peers.end())
          peers.push_back(a);
      self->state.split->cluster_nodes(1 + peers.size());
      self->state.opt.peers->owners_known(self, self->state.owners);
      start_runner(self);
    },
    // A link this node opens failed or went down a moment ago: open it again while its
    // peer owns partitions (peer_links.hpp).
    [=](peer_atom) { self->state.opt.peers->owners_known(self, self->state.owners); },
    // Another node opened the link to this one and introduced its api (peer_links.hpp).
    [=](peer_atom, const std::string& address, const caf::actor& peer) {
      self->state.opt.peers->adopt(self, address, peer);
    },
    // Forwarded by another node: served here or answered `unavailable`, never passed on.
    [=](forward_atom, const msg::task_result& m) {
      return to_decider(self, m.workflow_id, true, complete_atom_v, m);
    },
    [=](forward_atom, const msg::workflow_command& m) {
      return to_decider(self, m.workflow_id, true, command_atom_v, m);
    },
    [=](forward_atom, const msg::poll_request& m) { return to_lessor(self, true, m); },
    [=](forward_atom, work_atom, const std::string& queue) { hint_lessors_here(self, queue); },
    [=](forward_atom, decide_atom, int16_t shard) {
      hint(self, shard, &partition_handles::decider, decide_atom_v);
    },
    [=](work_atom, const std::string& queue) {
      // Work no poll here was lent in the decision: a poll parked on any node may take it.
      auto shard = queue_shard(queue, self->state.partitions);
      hint_lessors_here(self, queue);
      if (self->state.lease_locally)
        hint_every_peer(self, queue);
      else if (owner(self, shard) == nullptr)
        hint_elsewhere(self, shard, work_atom_v, queue);
    },
    [=](decide_atom, int16_t shard) {
      if (!hint(self, shard, &partition_handles::decider, decide_atom_v))
        hint_elsewhere(self, shard, decide_atom_v, shard);
    },
    [=](armed_atom, int16_t shard, int64_t fire_at_ms) {
      hint(self, shard, &partition_handles::timer, armed_atom_v, fire_at_ms);
    },
    // A schedule changed on this node (the api, after its commit): fire now if it is due.
    [=](schedules_atom) {
      if (self->state.scheduler)
        self->send(self->state.scheduler, schedules_atom_v);
    },
    [=](outbox_atom, int16_t shard) {
      hint(self, shard, &partition_handles::relay, outbox_atom_v);
    },
    [=](status_atom) {
      auto rp = self->make_response_promise();
      self->request(self->state.membership, status_timeout, status_atom_v)
        .then([=](const std::string& j) mutable { rp.deliver(status_json(self, j)); },
              [=](caf::error& err) mutable {
                rp.deliver(status_json(self, "membership did not answer: " + to_string(err)));
              });
      return rp;
    },
  };
}

} // namespace

caf::actor spawn_node(caf::actor_system& sys, node_options opt) {
  return sys.spawn(node_behavior, std::move(opt));
}

} // namespace nf::actors
