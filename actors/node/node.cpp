#include "actors/node/node.hpp"

#include <algorithm>
#include <chrono>
#include <map>

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
#include "engine/lease/waiting_polls.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "actors/maintenance/maintenance.hpp"
#include "actors/scheduler/scheduler.hpp"
#include "actors/membership/membership.hpp"
#include "actors/lessor/lessor.hpp"
#include "actors/node/guest_lessors.hpp"
#include "actors/node/node_state.hpp"
#include "actors/node/peer_links.hpp"
#include "actors/node/relay.hpp"
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

using namespace node_impl;

constexpr auto respawn_delay = std::chrono::seconds{1};
constexpr auto status_timeout = std::chrono::seconds{2};

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

/// A decide hint for `shard`: to its decider here, else to the node that owns it.
void hint_decider(node_actor* self, int16_t shard) {
  if (!hint(self, shard, &partition_handles::decider, decide_atom_v))
    hint_elsewhere(self, shard, decide_atom_v, shard);
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

/// Whether this node owns no partition while others do (cluster.deciding_nodes, or a node
/// that has joined and holds none yet): it serves its clients through those nodes.
bool forwards_to_deciding_nodes(const node_state& st) {
  return st.parts.empty() && !st.peer_addresses.empty();
}

/// For such a node: the next of the deciding nodes, in turn, passing over those that failed
/// to answer of late while another is left; "" for a node that is not one.
std::string deciding_peer(node_actor* self) {
  auto& st = self->state;
  if (!forwards_to_deciding_nodes(st))
    return {};
  auto now = std::chrono::steady_clock::now();
  const auto n = st.peer_addresses.size();
  for (size_t i = 0; i < n; ++i) {
    const auto& address = st.peer_addresses[st.next_peer++ % n];
    if (!st.health->suspect(address, now))
      return address;
  }
  return st.peer_addresses[st.next_peer++ % n];
}

/// Routes a poll to the lessor of its queue's shard: the partition's when this node owns it,
/// else this node's local lessor of the shard (cluster.lease_locally) or the owner's. A node
/// that owns none sends it to a deciding node, whose decisions then lend it new tasks.
caf::response_promise to_lessor(node_actor* self, bool forwarded, const msg::poll_request& m) {
  auto shard = queue_shard(m.queue, self->state.partitions);
  if (!forwarded)
    if (auto address = deciding_peer(self); !address.empty()) {
      auto rp = self->make_response_promise();
      forward_to(self, address, shard, rp, m);
      return rp;
    }
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

/// Starts a workflow in one of this node's partitions, in turn: any decider may, as it
/// makes the id in its own shard.
void start_here(node_actor* self, caf::response_promise& rp, const msg::start_request& m) {
  auto& st = self->state;
  if (st.parts.empty()) {
    rp.deliver(nf::make_error(nf::errc::unavailable, "this node owns no partition yet: retry"));
    return;
  }
  auto it = st.parts.begin();
  std::advance(it, static_cast<long>(st.next_start++ % st.parts.size()));
  rp.delegate(it->second.decider, start_atom_v, m);
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
  // A node beyond cluster.deciding_nodes serves its clients through the deciding ones.
  out["forwardsToDecidingNodes"] = forwards_to_deciding_nodes(st);
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
  m.deciding_nodes = static_cast<int>(st.opt.settings.get(config::keys::cluster_deciding_nodes));
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
      auto rp = self->make_response_promise();
      if (auto address = deciding_peer(self); !address.empty())
        forward_to(self, address,
                   static_cast<int16_t>(self->state.next_start++ % self->state.partitions), rp, m);
      else
        start_here(self, rp, m);
      return rp;
    },
    // Forwarded by a node that owns no partition: started here, or `unavailable`.
    [=](forward_atom, const msg::start_request& m) {
      auto rp = self->make_response_promise();
      start_here(self, rp, m);
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
    [=](peer_atom) { self->state.opt.peers->reopen(self, self->state.owners); },
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
    [=](decide_atom, int16_t shard) { hint_decider(self, shard); },
    // The api committed a change that waits in "DecideQueues" for `workflow` (a signal, a
    // task updated by its reference): its decider, here or on its owner, looks now.
    [=](decide_atom, const std::string& workflow) {
      if (flow::is_uuid(workflow))
        hint_decider(self, shard_of(workflow, self->state.partitions));
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
