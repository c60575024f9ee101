#pragma once

// "TaskOutputCache" housekeeping (docs/schema.md §2, 0010): expired rows are deleted so the
// table stays small. No statement reads or writes the cache yet; one that reads it must
// also ignore expired rows ("expiresAt" > now()): the prune runs only now and then.

#include <cstdint>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// Deletes up to `limit` expired rows (oldest expiry first, on the "expiresAt"
/// index); returns how many went. Call again while it returns `limit`.
caf::expected<int64_t> prune_output_cache(connection& conn, int64_t limit);

} // namespace nf::store
