#pragma once

// The epoch fence of a partition's writes. A node's partition actors act on the
// partitions it acquired, each at the epoch "PartitionLeases" gave it then; when another
// node takes a partition over (the lease expired: the node was paused, cut off, slow),
// the epoch grows. A transaction writing for a partition puts the fence's check in one of
// its round trips: once "PartitionLeases" no longer says this node holds every partition
// at its epoch, the check raises NF002 and the transaction rolls back, nothing of it
// written. The check takes no lock on the lease rows (FOR SHARE would write a row lock on
// them in every partition transaction, and make every renewal and takeover wait for
// those in flight): a takeover that commits after the check passed, while the transaction
// still runs, is possible only for a lease that expired during it, and what the stale
// transaction then commits is what the version compare-and-set absorbs (I1–I4), as it
// absorbed everything before fencing.

#include <cstdint>
#include <map>
#include <vector>

#include <caf/error.hpp>

#include "store/ids.hpp"

namespace nf::store {

class pipeline;

struct partition_fence {
  node_id node;                       ///< empty: no fence (tools, tests without membership)
  std::map<int16_t, int64_t> epochs;  ///< partition -> the epoch it was acquired at

  bool empty() const { return node.str().empty() || epochs.empty(); }
};

/// Adds the fence's check to `p` (one statement, one result the caller skips); nothing
/// when the fence is empty. Returns the number of statements added (0 or 1).
size_t add_fence_check(pipeline& p, const partition_fence& fence);

/// Whether `err` is the fence's refusal (SQLSTATE NF002).
bool is_fenced(const caf::error& err);

/// The partitions the refusal `err` names (those whose lease moved on), in order.
std::vector<int16_t> fenced_partitions(const caf::error& err);

} // namespace nf::store
