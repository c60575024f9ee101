#pragma once

#include <cstdint>
#include <string_view>

#include "store/ids.hpp"

namespace nf {

/// A workflow's logical partition: the last 16 bits of its UUID (random bits in
/// a uuidv7) modulo the partition count. SQL computes the same value with
/// `('x' || right("id"::text, 4))::bit(16)::int % P` in the start statement,
/// so rows written by SQL and claims made by C++ agree.
int16_t shard_of(std::string_view uuid_text, int partition_count);
inline shard_id shard_of(const workflow_id& id, int partition_count) {
  return shard_id{shard_of(id.str(), partition_count)};
}

/// The partition that owns a queue: FNV-1a of its name modulo the partition count.
int16_t queue_shard(std::string_view queue_name, int partition_count);

} // namespace nf
