#pragma once

// The reads the client protocol needs beyond the engine's own paths: one
// execution's header, the keyset-paginated execution search, queue depths for
// `status`, a heartbeat's lease length and the dead-letter list's position.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "flow/status.hpp"
#include "store/ids.hpp"
#include "store/outbox.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// What routing and checks need to know about one execution.
struct execution_header {
  workflow_id id;
  namespace_id ns;
  std::string workflow_name;
  flow::workflow_status status = flow::workflow_status::running;
  int16_t shard = 0;
};

/// One execution's header by id (pruned to its month, docs/schema.md §4.1);
/// `not_found` ("workflow <id> not found") when there is none.
caf::expected<execution_header> read_execution_header(connection& conn, const workflow_id& id);

/// Newest first; `after` is the last id of the previous page (its start time
/// is the id's timestamp, so the id alone is the keyset position).
struct execution_search {
  namespace_id ns = default_namespace;
  std::optional<flow::workflow_status> status;
  std::optional<std::string> workflow_name;
  std::optional<std::string> correlation_id;
  std::optional<int64_t> started_after_ms;  ///< inclusive lower bound
  std::optional<int64_t> started_before_ms; ///< exclusive upper bound
  std::optional<workflow_id> after;
  int limit = 50; ///< 1 … 1000
};

struct execution_summary {
  workflow_id id;
  std::string workflow_name;
  int32_t workflow_version = 0;
  flow::workflow_status status = flow::workflow_status::running;
  int64_t started_at_ms = 0;
  std::optional<int64_t> ended_at_ms;
  std::optional<std::string> correlation_id;
  std::optional<std::string> reason_for_incompletion;
};

struct execution_page {
  std::vector<execution_summary> items;
  std::optional<workflow_id> next; ///< absent on the last page
};

/// One page of executions, on the index that matches the filters given
/// (correlation id, status, name, or none).
caf::expected<execution_page> search_executions(connection& conn, const execution_search& q);

/// Per workflow status, how many executions match the filters (status and keyset ignored),
/// each count stopping at `cap`.
caf::expected<std::vector<std::pair<std::string, int64_t>>>
count_executions(connection& conn, const execution_search& q, int64_t cap);

/// Pending "DecideQueues" rows per shard (shards with none are left out).
caf::expected<std::vector<std::pair<int16_t, int64_t>>> pending_decisions(connection& conn);

/// The task definition's "responseTimeoutSeconds" for a task execution
/// (nullopt when the task has no definition or the value is 0); `not_found`
/// when the task does not exist in namespace `ns`.
caf::expected<std::optional<int>> task_response_timeout(connection& conn, const workflow_id& wf,
                                                        const task_id& task,
                                                        const namespace_id& ns);

/// A ref's latest attempt: what completing a task by its reference name checks.
struct task_at_ref {
  task_id id;
  std::string type;   ///< a task_execution_type label (WAIT, SIMPLE, …)
  std::string status; ///< a task_execution_status label
};

/// The latest attempt (highest iteration, then attempt) of `ref` in workflow `wf`;
/// `not_found` when the workflow has no task by that name.
caf::expected<task_at_ref> latest_task_at_ref(connection& conn, const workflow_id& wf,
                                              const std::string& ref);

/// The keyset position just after dead letter `id` (for list pages that
/// continue "after id N"); `not_found` when `id` is not a dead letter of namespace `ns`.
caf::expected<dead_letter_cursor> dead_letter_position(connection& conn, int64_t id,
                                                      const namespace_id& ns);

} // namespace nf::store
