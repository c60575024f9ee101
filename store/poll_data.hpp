#pragma once

// "PollData" (migration 0038): when each worker last polled each task type, per namespace and
// domain, as Conductor's poll data reports it. A node batches what its api saw and writes it
// with record_polls every few seconds; readers get every node's latest flush.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// One worker's latest poll of a task type: `age_ms` before the statement that records it,
/// so the time written is the database's clock, whatever the node's says.
struct poll_seen {
  namespace_id ns;
  std::string task_type;
  std::string domain;    ///< '' = the poll named no domain
  std::string worker_id; ///< '' = the poll named no worker
  int64_t age_ms = 0;
};

/// A row read back: `last_poll_ms` is Unix milliseconds.
struct poll_row {
  std::string task_type;
  std::string domain;
  std::string worker_id;
  int64_t last_poll_ms = 0;
};

/// Upserts `seen` (a row keeps the later of its time and the new one). Rows are written in
/// key order, so two nodes recording the same workers at once cannot deadlock.
caf::expected<void> record_polls(connection& conn, std::vector<poll_seen> seen);

/// The rows of namespace `ns`, of `task_type` only unless it is empty, in key order, at most
/// `limit`.
caf::expected<std::vector<poll_row>> read_poll_data(connection& conn, const namespace_id& ns,
                                                    const std::string& task_type,
                                                    int64_t limit);

/// Deletes at most `limit` rows not refreshed for `retention_hours`; answers how many.
caf::expected<int64_t> prune_poll_data(connection& conn, int64_t retention_hours,
                                       int64_t limit);

} // namespace nf::store
