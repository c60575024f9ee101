#pragma once

// The executions of one task definition, newest scheduled first: the one reader of
// "TaskExecutions_recent_by_def_idx" ("namespaceId","taskDefName","scheduledAt" DESC,
// migration 0004). The table is hash-partitioned by "workflowId", so the plan is a Merge
// Append of each partition's scan of that index in its order; the id breaks ties (a
// decision schedules many tasks at one now()) through an Incremental Sort over it, which
// reads only the rows of the page's last instant beyond the page
// (tests/http/task_history.httptest.cpp pins the plan).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct task_history_row {
  std::string id;
  std::string workflow_id;
  std::string ref;
  int32_t iteration = 0;
  int32_t attempt = 0;
  std::string task_type;
  std::string status;
  int64_t scheduled_us = 0; ///< "scheduledAt" in microseconds: the page's key, exactly
  std::optional<int64_t> started_ms;
  std::optional<int64_t> ended_ms;
  std::optional<std::string> worker_id;
  std::optional<std::string> reason;
};

/// Where a page starts: strictly before ("scheduledAt", id) in (scheduledAt DESC, id DESC).
struct task_history_key {
  int64_t scheduled_us = 0;
  std::string id;
};

/// Up to `limit` executions of `task_def_name` in `ns` after `before` (none: the newest).
caf::expected<std::vector<task_history_row>>
recent_task_executions(connection& conn, const namespace_id& ns, const std::string& task_def_name,
                       const std::optional<task_history_key>& before, int32_t limit);

} // namespace nf::store
