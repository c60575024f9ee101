#pragma once

// "Schedules" (migration 0033): workflow schedules and their next due tick. The scheduler's
// claim takes due rows with FOR UPDATE SKIP LOCKED, so the transaction that starts a tick's
// workflow and moves "nextRunAt" past it is the only one to see that tick
// (engine/schedules/fire.*). Times are epoch milliseconds.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/json.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

struct schedule_row {
  namespace_id ns;
  std::string name;
  std::string cron_expression;
  std::string zone_id = "UTC";
  std::string workflow_name;
  std::string start_request_json; ///< Conductor's StartWorkflowRequest
  bool paused = false;
  std::optional<std::string> paused_reason;
  bool run_catchup = false;
  std::optional<int64_t> start_ms, end_ms;
  std::optional<std::string> description;
  std::optional<int64_t> next_run_ms, last_run_ms;
  std::optional<std::string> last_workflow_id;
  std::string created_by, updated_by;
  int64_t created_ms = 0, updated_ms = 0;
};

/// Creates or replaces the schedule (ns, name); "createdBy"/"createdAt" stay on a replace,
/// "lastRunAt" too. Answers whether it was created.
caf::expected<bool> save_schedule(connection& conn, const schedule_row& s);

caf::expected<std::optional<schedule_row>> get_schedule(connection& conn, const namespace_id& ns,
                                                        const std::string& name,
                                                        bool for_update = false);

/// The namespace's schedules by name, those starting `workflow_name` when not empty.
caf::expected<std::vector<schedule_row>> list_schedules(connection& conn, const namespace_id& ns,
                                                        const std::string& workflow_name);

/// False when there was none.
caf::expected<bool> delete_schedule(connection& conn, const namespace_id& ns,
                                    const std::string& name);

/// Pauses or resumes; a resume sets the next tick (`next_run_ms`), a pause keeps it. False
/// when there is no such schedule.
caf::expected<bool> set_schedule_paused(connection& conn, const namespace_id& ns,
                                        const std::string& name, bool paused,
                                        const std::optional<std::string>& reason,
                                        std::optional<int64_t> next_run_ms,
                                        const std::string& updated_by);

/// Claims up to `limit` unpaused schedules due at the server's clock, locked for the caller's
/// transaction and skipped by any other's. `now_ms` receives the server's clock.
caf::expected<std::vector<schedule_row>> claim_due_schedules(transaction& tx, int limit,
                                                            int64_t& now_ms);

/// After firing: the next tick (none: no run left) and what ran last.
caf::expected<void> advance_schedule(transaction& tx, const namespace_id& ns,
                                     const std::string& name, std::optional<int64_t> next_run_ms,
                                     std::optional<int64_t> last_run_ms,
                                     const std::optional<std::string>& last_workflow_id);

/// The earliest due tick of every unpaused schedule (none: nothing scheduled), and the
/// server's clock: how long the scheduler may sleep.
struct schedule_horizon {
  std::optional<int64_t> earliest_ms;
  int64_t now_ms = 0;
};
caf::expected<schedule_horizon> schedule_horizon_of(connection& conn);

} // namespace nf::store
