#include "actors/membership/membership.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/logger.h>

#include "actors/membership/lease_guard.hpp"
#include "config/folder_logger.hpp"
#include "proto/type_ids.hpp"
#include "store/membership.hpp"
#include "proto/errors.hpp"
#include "store/pg/session.hpp"
#include "store/workflows.hpp"

namespace nf::actors {

namespace {

using steady = std::chrono::steady_clock;

struct held_lease {
  int64_t epoch = 0;
  /// Until when the lease is certainly ours: measured from when its last successful
  /// renewal was SENT, less a safety margin, so the local view never outlives the
  /// server's.
  steady::time_point deadline;
};

/// What a held lease is worth locally: lease_ms from the renewal's send, less a tenth
/// (at least 1 ms) for the time the guard's word takes to reach the partitions and for
/// the drift between this clock and the server's.
steady::duration usable(int64_t lease_ms) {
  return std::chrono::milliseconds{lease_ms - std::max<int64_t>(1, lease_ms / 10)};
}

struct membership_state {
  membership_options opt;
  std::optional<store::session> db;
  std::optional<node_id> id;
  bool checked = false;
  int live = 1;
  bool deciding = true; ///< among the cluster.deciding_nodes longest registered live nodes
  std::map<int16_t, held_lease> held;
  caf::actor guard;  ///< tells the node the owned set, and stops it when leases lapse
  std::map<int16_t, int64_t> epochs_told;  ///< the epochs the node last heard
  std::vector<std::string> owners_told;  ///< the owner map the node last heard
  std::shared_ptr<spdlog::logger> log;
  warn_limiter db_warn;

  static inline const char* name = "nf.membership";
};

using membership_actor = caf::stateful_actor<membership_state>;

/// Drops the leases whose local deadline passed: a lapsed lease is never renewed, only
/// acquired again (a new epoch) once the server sees it expired.
void forget_lapsed(membership_state& st) {
  auto now = steady::now();
  for (auto it = st.held.begin(); it != st.held.end();)
    it = it->second.deadline <= now ? st.held.erase(it) : std::next(it);
}

/// Every round, renewed or not: the guard (actors/membership/lease_guard.hpp) tells the
/// node, and stops the partitions itself if the next word is late.
void tell_node(membership_actor* self) {
  auto& st = self->state;
  std::vector<int16_t> owned;
  std::map<int16_t, int64_t> epochs;
  auto until = steady::time_point::max();
  for (const auto& [p, l] : st.held) {
    owned.push_back(p);
    epochs[p] = l.epoch;
    until = std::min(until, l.deadline);
  }
  if (owned.empty())
    until = steady::now();
  // The epochs go to the node itself, before the owned set the guard passes on: the node
  // has them when the set comes (local sends are enqueued at once, in order). A partition
  // lost and taken back between two ticks has a new epoch: its actors, fenced at the old
  // one, are started afresh.
  if (st.opt.node && st.id && epochs != st.epochs_told)
    for (const auto& [p, e] : epochs)
      self->send(st.opt.node, partitions_atom_v, p, e, st.id->str());
  st.epochs_told = epochs;
  self->send(st.guard, partitions_atom_v, std::move(owned),
             static_cast<int64_t>(
               std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch())
                 .count()));
}

/// Tells the node who owns each partition when that changed.
void tell_owners(membership_actor* self, std::vector<std::string> owners) {
  auto& st = self->state;
  if (owners == st.owners_told)
    return;
  st.owners_told = owners;
  if (st.opt.node)
    self->send(st.opt.node, owners_atom_v, std::move(owners));
}

/// As above, read afresh (after this round acquired or released leases). A failed read
/// changes nothing: the node forwards by the map it has (a wrong guess is answered
/// `unavailable`, and the client retries).
void tell_owners(membership_actor* self, store::connection& c) {
  auto& st = self->state;
  auto owners = store::partition_owners(c, st.opt.partition_count);
  if (!owners) {
    if (st.db_warn.allow())
      st.log->warn("owners_read_failed error=\"{}\" suppressed={}", nf::message_of(owners.error()),
                   st.db_warn.suppressed());
    return;
  }
  tell_owners(self, std::move(*owners));
}

/// The database is unreachable: serve on until each lease would have expired.
void on_failure(membership_actor* self, const char* what, const caf::error& err) {
  auto& st = self->state;
  st.db->on_error(err);
  if (st.db_warn.allow())
    st.log->warn("{} node={} error=\"{}\" suppressed={}", what,
                 st.id ? st.id->str() : std::string{"-"}, nf::message_of(err),
                 st.db_warn.suppressed());
  forget_lapsed(st);
  tell_node(self);
}

/// Where this node starts looking for free partitions, so joining nodes do not all
/// race for partition 0 first.
size_t offset_of(const node_id& id, size_t n) {
  size_t h = 0;
  for (char c : id.str())
    h = h * 131 + static_cast<unsigned char>(c);
  return n == 0 ? 0 : h % n;
}

void tick(membership_actor* self) {
  auto& st = self->state;
  auto round_start = steady::now();
  auto ms_since = [](steady::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t).count();
  };
  auto live_before = st.live;
  forget_lapsed(st);
  auto conn = st.db->get();
  if (!conn)
    return on_failure(self, "membership_db_unavailable", conn.error());
  auto& c = **conn;
  if (!st.checked) {
    auto p = store::load_partition_count(c);
    if (!p)
      return on_failure(self, "membership_check_failed", p.error());
    if (*p != st.opt.partition_count) {
      auto msg = "engine.partitions is " + std::to_string(st.opt.partition_count)
                 + " but the database's ClusterSettings.partitionCount is " + std::to_string(*p)
                 + ": refusing to own partitions (set engine.partitions = " + std::to_string(*p)
                 + ")";
      st.log->error("partition_count_mismatch {}", msg);
      self->quit(nf::make_error(nf::errc::invalid, msg));
      return;
    }
    st.checked = true;
  }
  if (!st.id) {
    auto id = store::register_node(c, st.opt.address);
    if (!id)
      return on_failure(self, "membership_register_failed", id.error());
    st.id = *id;
    st.log->info("node_registered node={} address={}", st.id->str(), st.opt.address);
  }
  // Heartbeat, renewal, the free partitions and the owners in one round trip: on a busy
  // server every round trip waits, and a round should cost one wait, not four.
  auto sent = steady::now();
  std::vector<store::partition_lease> mine;
  for (const auto& [p, l] : st.held)
    mine.push_back({p, l.epoch});
  auto facts = store::membership_round(c, *st.id, mine, st.opt.lease_ms, st.opt.partition_count);
  if (!facts) {
    if (nf::code_of(facts.error()) == nf::errc::not_found)
      st.id.reset(); // our row is gone (or marked stopped): register afresh next tick
    return on_failure(self, "membership_round_failed", facts.error());
  }
  st.live = std::max(1, facts->live);
  auto deciding_before = st.deciding;
  st.deciding = st.opt.deciding_nodes <= 0 || facts->older < st.opt.deciding_nodes;
  auto heartbeat_took = ms_since(round_start);
  st.held.clear();
  for (const auto& l : facts->renewed)
    st.held[l.partition] = {l.epoch, sent + usable(st.opt.lease_ms)};

  // The partitions are shared by the deciding nodes alone; a node beyond them holds none
  // and gives back what it held (a node registered before it came back).
  auto owning = static_cast<size_t>(st.opt.deciding_nodes <= 0
                                      ? st.live
                                      : std::min(st.live, st.opt.deciding_nodes));
  auto p = static_cast<size_t>(st.opt.partition_count);
  auto share = st.deciding ? (p + owning - 1) / owning : 0;
  if (st.held.size() < share) {
    const auto& free = facts->free;
    std::vector<int16_t> want;
    auto start = offset_of(*st.id, free.size());
    for (size_t i = 0; i < free.size() && st.held.size() + want.size() < share; ++i) {
      auto part = free[(start + i) % free.size()];
      if (st.held.count(part) == 0)
        want.push_back(part);
    }
    auto got = store::acquire_leases(c, *st.id, want, st.opt.lease_ms);
    if (!got)
      return on_failure(self, "lease_acquire_failed", got.error());
    for (const auto& l : *got)
      st.held[l.partition] = {l.epoch, sent + usable(st.opt.lease_ms)};
  } else if (st.held.size() > share && st.live > 1) {
    // More than the fair share while others are live: give the surplus back so a
    // joining node receives its share at once instead of after expiry.
    std::vector<int16_t> surplus;
    for (auto it = st.held.rbegin(); it != st.held.rend() && st.held.size() - surplus.size() > share;
         ++it)
      surplus.push_back(it->first);
    if (auto r = store::release_leases(c, *st.id, surplus); !r)
      return on_failure(self, "lease_release_failed", r.error());
    for (auto part : surplus)
      st.held.erase(part);
  }
  auto before_told = st.epochs_told.size();
  bool moved = st.held.size() != facts->renewed.size();
  tell_node(self);
  // The round's read saw the owners before this round's acquisitions and releases.
  if (moved)
    tell_owners(self, c);
  else
    tell_owners(self, std::move(facts->owners));
  // A line when the cluster or the owned set changed, or a round overran its period: how
  // long takeovers and renewals wait for the server, at few lines.
  if (st.live != live_before || st.held.size() != before_told || st.deciding != deciding_before
      || ms_since(round_start) > st.opt.heartbeat_ms)
    st.log->info("membership_round live={} deciding={} held={} round_trip_ms={} round_ms={}",
                 st.live, st.deciding, st.held.size(), heartbeat_took, ms_since(round_start));
}

std::string status_json(const membership_state& st) {
  boost::json::array parts;
  for (const auto& [p, l] : st.held)
    parts.push_back(boost::json::object{{"partition", p}, {"epoch", l.epoch}});
  return boost::json::serialize(boost::json::object{
    {"nodeId", st.id ? st.id->str() : std::string{}},
    {"address", st.opt.address},
    {"liveNodes", st.live},
    {"deciding", st.deciding},
    {"partitions", std::move(parts)}});
}

caf::behavior membership_behavior(membership_actor* self, membership_options opt) {
  auto& st = self->state;
  st.log = folder_logger("membership");
  st.db.emplace(opt.dsn);
  st.opt = std::move(opt);
  st.guard = spawn_lease_guard(self, st.opt.node);
  self->set_exit_handler([self](caf::exit_msg& m) {
    auto& st = self->state;
    if (st.id) {
      auto conn = st.db->get();
      auto done = conn ? store::stop_node(**conn, *st.id) : caf::expected<void>{conn.error()};
      if (done)
        st.log->info("node_stopped node={} released={}", st.id->str(), st.held.size());
      else
        st.log->warn("node_stop_failed node={} error=\"{}\" (leases expire on their own)",
                     st.id->str(), nf::message_of(done.error()));
    }
    self->quit(m.reason);
  });
  self->send(self, tick_atom_v);
  return {
    [=](tick_atom) {
      // Rounds start every heartbeat_ms, however long one took: waiting heartbeat_ms after
      // a slow round would stretch the period, and renewals and takeovers with it.
      auto started = steady::now();
      tick(self);
      auto next = started + std::chrono::milliseconds{self->state.opt.heartbeat_ms};
      auto wait = std::max(steady::duration::zero(), next - steady::now());
      self->delayed_send(self, std::chrono::duration_cast<std::chrono::milliseconds>(wait),
                         tick_atom_v);
    },
    [=](status_atom) { return status_json(self->state); },
  };
}

} // namespace

caf::actor spawn_membership(caf::actor_system& sys, membership_options opt) {
  return sys.spawn<caf::detached>(membership_behavior, std::move(opt));
}

} // namespace nf::actors
