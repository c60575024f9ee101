#pragma once

// The decider's reads and writes beyond one evaluation (store/decisions.hpp): the
// definition stamps its cache checks, the history facts a snapshot needs (signals, a
// reset workflow timeout), the SUB_WORKFLOW parent/child link, and the clean-up of
// claimed rows whose execution is gone. All in the caller's transaction.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "flow/status.hpp"
#include "store/ids.hpp"
#include "store/pg/params.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

/// A value that changes whenever a task or workflow definition of the namespace is
/// registered or updated: counts, the sum of task revisions and the latest "updatedAt"
/// of both tables. One statement for every namespace asked.
caf::expected<std::map<std::string, std::string>>
load_definition_stamps(connection& conn, const std::vector<namespace_id>& namespaces);

/// The server's wall clock (clock_timestamp(), not the transaction's now()) in
/// milliseconds since the epoch: the clock decide() runs with. Read it after the
/// claim: a timer whose wake-up the claim saw had fired, and committed, before it.
caf::expected<int64_t> server_now_ms(connection& conn);

/// One `SIGNAL_RECEIVED` event, as store/signals.hpp writes it.
struct signal_row {
  int64_t seq = 0;
  std::string name;
  std::string payload;  ///< JSON text
  int64_t at_ms = 0;
  std::string task_ref; ///< set: addressed to a WAIT task by ref (store::deliver_task_update)
  std::string status;   ///< with task_ref: the status it ends the task with
};

/// What a snapshot needs from a workflow's history.
struct history_facts {
  std::vector<signal_row> signals;  ///< in seq order
  /// When a retry/rerun/restart restarted the workflow's timeout clock (the latest
  /// `WORKFLOW_RETRIED` / `WORKFLOW_RERUN` / `WORKFLOW_RESTARTED` event whose payload
  /// says `"timeoutReset": true`); "startedAt" is the id's timestamp and cannot move.
  std::optional<int64_t> timeout_reset_ms;
};

/// The facts of each workflow in `ids` (one statement; each id prunes to months from
/// its start). Workflows with none are absent from the map.
caf::expected<std::map<std::string, history_facts>>
load_history_facts(transaction& tx, const std::vector<workflow_id>& ids);

/// The statement behind load_history_facts, so an EXPLAIN test checks the SQL it runs.
const statement& history_facts_statement();

/// The reads above as statements of the caller's pipeline, and their results read, so
/// the decider can send them with its claim in one round trip (store/decide_reads.hpp).
void add_now_ms(pipeline& p);
int64_t now_ms_of(const result& r);
void add_definition_stamps(pipeline& p, const std::vector<namespace_id>& namespaces);
std::map<std::string, std::string> definition_stamps_of(const result& r);
void add_history_facts(pipeline& p, const std::vector<workflow_id>& ids);
/// The facts in `r`; a payload stored out of line is read on `conn` (store/payloads.hpp).
caf::expected<std::map<std::string, history_facts>> history_facts_of(connection& conn,
                                                                     const result& r);

/// A child started for a SUB_WORKFLOW task.
struct sub_workflow_link {
  workflow_id parent;
  task_id task;
  workflow_id child;
};

/// Records each child on its parent task ("subWorkflowId") and marks the task
/// IN_PROGRESS (only while it is still SCHEDULED).
caf::expected<void> link_sub_workflows(transaction& tx,
                                       const std::vector<sub_workflow_link>& links);

/// A child that reached a terminal status, or could not be started.
struct sub_workflow_end {
  workflow_id parent;
  task_id task;
  std::optional<workflow_id> child;
  flow::task_status status = flow::task_status::completed;  ///< COMPLETED or FAILED
  std::optional<json_text> output;
  std::optional<std::string> reason;
};

/// Ends each parent task that is still SCHEDULED or IN_PROGRESS, appends its event and
/// wakes the parent's decider (DESIGN §3 step 4's lock order, through
/// task_transitions). A task already ended is left alone. `errc::stale`: a race moved
/// a row between the read and the locks; roll back and run the batch again.
caf::expected<void> finish_sub_workflow_tasks(transaction& tx,
                                              const std::vector<sub_workflow_end>& ends);

/// Deletes claimed "DecideQueues" rows whose execution no longer exists (a dropped
/// month), so they do not come back on every poll. Only rows this transaction claimed.
caf::expected<void> drop_decide_rows(transaction& tx, const std::vector<workflow_id>& ids);

/// The ids among `ids` that have an execution (re-reading after an in-doubt commit).
caf::expected<std::set<std::string>> existing_workflows(connection& conn,
                                                        const std::vector<workflow_id>& ids);

} // namespace nf::store
