#include "actors/maintenance/maintenance.hpp"
#include "actors/maintenance/retention.hpp"

#include <chrono>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/logger.h>

#include "config/folder_logger.hpp"
#include "proto/type_ids.hpp"
#include "store/outbox.hpp"
#include "store/output_cache.hpp"
#include "store/poll_data.hpp"
#include "store/request_ids.hpp"
#include "store/schema/partitions.hpp"
#include "proto/errors.hpp"
#include "store/pg/link_settings.hpp"
#include "store/pg/session.hpp"

namespace nf::actors {

namespace {

// One prune statement deletes at most this many rows; a pass runs a few of them.
constexpr int64_t prune_batch = 10000;
constexpr int max_prune_rounds = 20;

struct maintenance_state {
  std::optional<store::session> db;
  store::partition_manager partitions;
  std::chrono::seconds interval{3600};
  int64_t outbox_retention_s = 604800;
  int64_t request_ids_hours = 24;
  int64_t poll_data_hours = 168;
  std::shared_ptr<spdlog::logger> log;

  static inline const char* name = "nf.maintenance";
};

using maintenance_actor = caf::stateful_actor<maintenance_state>;

// Runs one bounded prune (`prune_once`, at most prune_batch rows) until a round deletes fewer,
// at most max_prune_rounds times; answers how many rows went.
template <class Prune>
caf::expected<int64_t> prune_in_rounds(Prune prune_once) {
  int64_t total = 0;
  for (int round = 0; round < max_prune_rounds; ++round) {
    auto n = prune_once();
    if (!n)
      return std::move(n.error());
    total += *n;
    if (*n < prune_batch)
      break;
  }
  return total;
}

void run_pass(maintenance_actor* self) {
  auto& st = self->state;
  auto t0 = std::chrono::steady_clock::now();
  auto fail = [&](const char* what, const caf::error& err) {
    st.db->on_error(err);
    st.log->warn("{} error=\"{}\" (next pass in {}s)", what, nf::message_of(err),
                 st.interval.count());
  };
  auto conn = st.db->get();
  if (!conn)
    return fail("maintenance_db_unavailable", conn.error());
  auto& c = **conn;
  auto now = store::server_now(c);
  if (!now)
    return fail("maintenance_failed", now.error());
  auto created = st.partitions.ensure_ahead(c, *now);
  if (!created)
    return fail("partitions_ensure_failed", created.error());
  auto dropped = st.partitions.drop_expired(c, *now);
  if (!dropped)
    return fail("partitions_drop_failed", dropped.error());
  for (const auto& k : dropped->kept)
    st.log->info("partition_kept name={} reason=\"{}\"", k.name, k.reason);
  auto pruned = prune_in_rounds([&] { return store::prune_output_cache(c, prune_batch); });
  if (!pruned)
    return fail("output_cache_prune_failed", pruned.error());
  // Request ids answer retries for retention.request_ids_hours; the table is not partitioned.
  auto ids_pruned = prune_in_rounds(
    [&] { return store::prune_request_ids(c, st.request_ids_hours, prune_batch); });
  if (!ids_pruned)
    return fail("request_ids_prune_failed", ids_pruned.error());
  // A worker that stopped polling leaves the poll data after retention.poll_data_hours.
  auto polls_pruned = prune_in_rounds(
    [&] { return store::prune_poll_data(c, st.poll_data_hours, prune_batch); });
  if (!polls_pruned)
    return fail("poll_data_prune_failed", polls_pruned.error());
  // Delivered events are kept for relay.published_retention_s, then deleted: nothing reads
  // them again, and the table is not partitioned, so without this it only grows.
  auto outbox_pruned = store::prune_published_outbox(c, st.outbox_retention_s);
  if (!outbox_pruned)
    return fail("outbox_prune_failed", outbox_pruned.error());
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
  st.log->info("maintenance partitions_created={} partitions_dropped={} partitions_kept={} "
               "timers_moved={} cache_pruned={} request_ids_pruned={} poll_data_pruned={} "
               "outbox_pruned={} ms={:.1f}",
               created->size(), dropped->dropped.size(), dropped->kept.size(),
               dropped->timers_moved, *pruned, *ids_pruned, *polls_pruned, *outbox_pruned,
               ms.count());
}

caf::behavior maintenance_behavior(maintenance_actor* self, std::string dsn,
                                   config::values settings) {
  auto& st = self->state;
  st.log = folder_logger("maintenance");
  // A pass may move a month of rows out of a default partition: no statement timeout.
  st.db.emplace(std::move(dsn), &store::without_statement_timeout);
  st.interval = std::chrono::seconds{settings.get(config::keys::maintenance_interval_s)};
  st.outbox_retention_s = settings.get(config::keys::relay_published_retention_s);
  st.request_ids_hours = settings.get(config::keys::retention_request_ids_hours);
  st.poll_data_hours = settings.get(config::keys::retention_poll_data_hours);
  st.partitions = store::partition_manager{retention_of(settings)};
  self->send(self, tick_atom_v);
  return {
    [=](tick_atom) {
      run_pass(self);
      self->delayed_send(self, self->state.interval, tick_atom_v);
    },
  };
}

} // namespace

caf::actor spawn_maintenance(caf::actor_system& sys, std::string dsn,
                             const config::values& settings) {
  return sys.spawn<caf::detached>(maintenance_behavior, std::move(dsn), settings);
}

} // namespace nf::actors
