#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// How far ahead range partitions are created and how long they are kept.
/// Defaults: the seed's retention (12 months of history, 48 hourly timer
/// periods) and enough lookahead that a late maintenance run never lets
/// current rows fall into a DEFAULT partition.
struct partition_settings {
  int months_ahead = 3;     ///< "WorkflowExecutions", "WorkflowEvents": current month + this many
  int hours_ahead = 48;     ///< "Timers": current hour + this many
  /// "WorkflowExecutions": a month whose end is older than now - this many is dropped.
  int months_retained = 12;
  /// "Timers": an hour whose end is older than now - this many is dropped; the timer's
  /// claim looks back as far (store::fire_options::horizon_hours), so a timer it could
  /// still claim is never in a dropped hour without being moved first.
  int hours_retained = 48;
  /// "AuditEvents" months: "who changed this?" is asked long after the executions were pruned.
  int audit_months_retained = 84;
  /// "WorkflowEvents": as months_retained, for the history (a running workflow keeps its
  /// months). Last, so the positional initialisers above keep their meaning.
  int history_months_retained = 12;
};

/// One managed range partition (docs/schema.md §3): its name, its parent and
/// its UTC bounds [lo, hi).
struct range_partition {
  std::string parent;
  std::string name;
  std::chrono::system_clock::time_point lo;
  std::chrono::system_clock::time_point hi;
};

/// A partition past retention that drop_expired left in place, and why.
struct kept_partition {
  std::string name;
  std::string reason;
};

struct drop_report {
  std::vector<std::string> dropped;   ///< dropped by this call
  std::vector<kept_partition> kept;   ///< expired, but still holding live data
  int64_t timers_moved = 0;           ///< pending timers moved out before their partition went
};

/// Creates range partitions ahead and drops expired ones, for
/// "WorkflowExecutions", "WorkflowEvents" and "AuditEvents" (monthly) and "Timers" (hourly).
/// Dropping an expired "AuditEvents" month is the only way audit rows leave (the table
/// refuses UPDATE, DELETE and TRUNCATE, migration 0024).
///
/// Every poller replica runs this, so concurrent calls are the normal case:
/// each partition is created (or dropped) in its own transaction, a lost race
/// (42P07, 42P17, 23505 on create; 42P01 on drop) means another caller did it,
/// and exactly one caller reports each partition.
class partition_manager {
public:
  using time_point = std::chrono::system_clock::time_point;

  explicit partition_manager(partition_settings settings = {});

  /// Creates the missing partitions of [now's period, now's period + lookahead],
  /// adopting rows that already sit in the table's DEFAULT partition for each
  /// new range (moved without re-insert through the parent, so the
  /// WorkflowEvents NOTIFY trigger does not fire again). Returns the partitions
  /// THIS call created. `now` should be the server's clock (`server_now`).
  caf::expected<std::vector<std::string>> ensure_ahead(connection& conn, time_point now);

  /// Drops partitions whose whole range is older than retention. Pending
  /// timers (`"claimedAt" IS NULL`) in an expired "Timers" partition are moved
  /// to fire at `now` first (their re-check decides whether they still apply);
  /// an execution month holding RUNNING/PAUSED workflows, and event months such
  /// workflows may still need, are kept. Dropping a month of executions also
  /// deletes those workflows' "TaskExecutions" and "IdempotencyKeys" rows.
  caf::expected<drop_report> drop_expired(connection& conn, time_point now);

  /// The partitions ensure_ahead wants to exist at `now`, oldest first per table.
  std::vector<range_partition> wanted(time_point now) const;

  const partition_settings& settings() const { return settings_; }

private:
  partition_settings settings_;
};

/// The server's clock: partition maintenance follows it, not the client's.
caf::expected<std::chrono::system_clock::time_point> server_now(connection& conn);

/// Parses a managed partition name ("Timers_y2026m11d30h06",
/// "WorkflowEvents_y2026m11") into its parent and bounds; nullopt for any
/// other name (DEFAULT partitions, hash partitions, typos).
std::optional<range_partition> parse_partition_name(std::string_view name);

/// The partitions of `parent` (a managed table) that exist now, parsed; names
/// that do not follow the naming rule are skipped.
caf::expected<std::vector<range_partition>> list_partitions(connection& conn,
                                                            const std::string& parent);

} // namespace nf::store
