#pragma once

// Removing an ended workflow for good (DELETE /api/workflow/{id}/remove): its execution row,
// its task executions and their queue rows, its history, its payloads, its decide row and
// the idempotency key that named it, in one transaction with the audit record of the removal.
// Kept: the audit record, outbox events already owed to webhook sinks (delivered, then
// deleted by the relay as any others), and fired timers (their hour's partition is dropped
// by retention).

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>
#include <caf/expected.hpp>

#include "store/audit.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct removed_workflow {
  int64_t tasks = 0;
  int64_t events = 0;
  int64_t payloads = 0;
  /// A retry's: the first request's answer (nothing was deleted now).
  std::optional<std::string> earlier;
};

/// Deletes workflow `id` of namespace `ns` and records `audit` (its namespace set to `ns`,
/// its details given the counts) in the same transaction; with a `request_id`, claims it
/// with `answer` there too (store/request_ids.hpp), so a retry gets `answer` again and
/// deletes nothing. `not_found` when there is no such workflow; `invalid` while it is
/// RUNNING or PAUSED (nothing is deleted).
caf::expected<removed_workflow> remove_workflow(connection& conn, const workflow_id& id,
                                                const namespace_id& ns, audit_event audit,
                                                const std::string& request_id,
                                                const boost::json::object& answer);

} // namespace nf::store
