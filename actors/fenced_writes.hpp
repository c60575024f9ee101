#pragma once

// What a partition actor does when the epoch fence refused its write
// (store/partition_fence.hpp): counts it (nodeflow_stale_writes_refused_total), logs the
// partition with the epoch it acted at and the lease as it is now, and stops acting for
// the partition. The node learns that the partition is gone from membership.

#include <cstdint>
#include <string_view>
#include <vector>

#include <caf/error.hpp>

#include "actors/served_shards.hpp"

namespace spdlog {
class logger;
}

namespace nf::actors {

/// Counts and logs one refusal of `writer`'s write for `partition` at `epoch`.
void note_stale_write(spdlog::logger& log, std::string_view writer, int16_t partition,
                      int64_t epoch, const caf::error& err);

/// For a node-wide actor: the shards the refusal `err` names are served no more (each
/// counted and logged). Returns them.
std::vector<int16_t> drop_fenced(served_shards& served, spdlog::logger& log,
                                 std::string_view writer, const caf::error& err);

} // namespace nf::actors
