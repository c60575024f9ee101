#pragma once

// The lease-expiry sweep: a lease whose "leaseExpiresAt" passed without a completion or
// heartbeat (lost worker, response timeout) times its attempt out and wakes the decider,
// which schedules the retry (attempt + 1) per the task's definition.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct swept_lease {
  std::string queue;
  workflow_id workflow;
  task_id task;
  int16_t shard = 0;  ///< the workflow's partition
};

/// Times out up to `limit` (1 … 10000) expired leases in one transaction. Conditional on
/// the token read AND the expiry, re-checked under the row lock: a heartbeat or a
/// completion that got there first wins and its task is left alone.
caf::expected<std::vector<swept_lease>> sweep_expired_leases(connection& conn, int limit);

/// Milliseconds until the earliest lease of any queue runs out (negative: it has), none when
/// no task is leased: what lets the sweep sleep until then on an idle node.
caf::expected<std::optional<int64_t>> next_lease_expiry(connection& conn);

} // namespace nf::store
