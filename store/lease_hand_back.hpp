#pragma once

// Leases whose tasks never reached their worker (the long poll's client had gone when the
// answer came, or the answer came after the requester's deadline), handed back at once
// instead of waiting for the lease to expire (the task's responseTimeoutSeconds, 300 s by
// default): the queue row is unleased and the task SCHEDULED again, as the same attempt, so
// the next poll takes it with a fresh lease token. A report that still presents the old
// token finds it gone (`lease lost`). The startToClose timer armed with the old lease is a
// no-op when it fires: its token no longer matches the queue row's.

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct undelivered_lease {
  workflow_id workflow;
  task_id task;
  lease_token token;
};

/// Hands back the leases still held with these tokens (one transaction); returns the queue
/// of each one handed back (a lease already reported, heartbeat-extended past its token or
/// swept is left alone).
caf::expected<std::vector<std::string>> hand_back_leases(connection& conn,
                                                         const std::vector<undelivered_lease>& ls);

} // namespace nf::store
