#include "actors/node/relay.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <type_traits>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "actors/node/guest_lessors.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"
#include "store/queues.hpp"

namespace nf::actors::node_impl {

namespace {

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

void write_through(node_actor* self, int16_t shard, caf::response_promise& rp,
                   const msg::start_request& m, std::chrono::steady_clock::time_point) {
  // The "DecideQueues" row the start leaves brings its first decision on the shard's owner.
  rp.delegate(self->state.committers.front(), start_atom_v, shard, m);
}

template <class Msg>
struct reply_of {
  using type = std::string;
};
template <>
struct reply_of<msg::poll_request> {
  using type = std::vector<msg::leased_task>;
};
template <>
struct reply_of<msg::start_request> {
  using type = msg::start_reply;
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

} // namespace

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

namespace {

/// Whether a relayed request's error is the peer's own answer for the client (lease lost, not
/// found, …) rather than a link that failed or a peer that no longer owns the partition,
/// whose work is then done here.
bool peers_answer(const caf::error& e) {
  return nf::is_nodeflow_error(e) && nf::code_of(e) != nf::errc::unavailable;
}

} // namespace

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

namespace {

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

template <class Msg>
void forward_any(node_actor* self, const std::string& address, int16_t shard,
                 caf::response_promise rp, const Msg& m) {
  using reply = typename reply_of<Msg>::type;
  auto& st = self->state;
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
        rp.deliver(nf::make_error(
          nf::errc::unavailable,
          (std::is_same_v<Msg, msg::start_request>
             ? "starts are decided by the node at "
             : "partition " + std::to_string(shard) + " is owned by the node at ")
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

} // namespace

void forward(node_actor* self, int16_t shard, caf::response_promise rp, const msg::task_result& m) {
  forward_any(self, owner_elsewhere(self, shard), shard, std::move(rp), m);
}

void forward(node_actor* self, int16_t shard, caf::response_promise rp,
             const msg::workflow_command& m) {
  forward_any(self, owner_elsewhere(self, shard), shard, std::move(rp), m);
}

void forward(node_actor* self, int16_t shard, caf::response_promise rp, const msg::poll_request& m) {
  forward_any(self, owner_elsewhere(self, shard), shard, std::move(rp), m);
}

void forward_to(node_actor* self, const std::string& address, int16_t shard,
                caf::response_promise rp, const msg::start_request& m) {
  forward_any(self, address, shard, std::move(rp), m);
}

void forward_to(node_actor* self, const std::string& address, int16_t shard,
                caf::response_promise rp, const msg::poll_request& m) {
  forward_any(self, address, shard, std::move(rp), m);
}

} // namespace nf::actors::node_impl
