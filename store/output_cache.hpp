#pragma once

// "TaskOutputCache" housekeeping (docs/schema.md §2, 0010): reads already ignore
// expired rows ("expiresAt" > now()); pruning only keeps the table small.

#include <cstdint>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// Deletes up to `limit` expired rows (oldest expiry first, on the "expiresAt"
/// index); returns how many went. Call again while it returns `limit`.
caf::expected<int64_t> prune_output_cache(connection& conn, int64_t limit);

} // namespace nf::store
