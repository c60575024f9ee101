#pragma once

// What an operator sees of the cluster (GET /api/cluster, the web UI's cluster page): the
// nodes that are running or stopped lately, and who holds each partition, with the ages on
// Postgres's clock so no node's clock skews them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

struct node_view {
  std::string id;
  std::string address;
  int64_t started_at_ms = 0;
  int64_t heartbeat_age_ms = 0;
  bool stopped = false;
  int64_t partitions = 0; ///< leases it holds that have not expired
};

struct partition_view {
  int partition = 0;
  std::string owner;
  int64_t epoch = 0;
  int64_t lease_remaining_ms = 0; ///< negative: expired that long ago
  int64_t held_ms = 0;            ///< since this owner acquired it
};

struct cluster_view {
  std::vector<node_view> nodes;  ///< not stopped, or stopped in the last hour; oldest first
  std::vector<partition_view> partitions;
};

/// At most this many nodes are listed (a cluster restarted often keeps old rows).
constexpr int64_t cluster_view_max_nodes = 200;

caf::expected<cluster_view> read_cluster_view(connection& conn);

} // namespace nf::store
