#pragma once

// "RateLimitBuckets": at most `per_frequency` leases of a task definition per window of
// `frequency_seconds` (fixed window, restarted by the first lease after it ended; §0010).

#include <string>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct rate_limit {
  namespace_id ns;
  std::string task_def_name;
  int per_frequency = 0;     ///< rateLimitPerFrequency, > 0
  int frequency_seconds = 1; ///< rateLimitFrequencyInSeconds, > 0
};

/// Takes up to `wanted` leases from the current window, inside the caller's transaction
/// (the bucket row stays locked until it ends, serialising lessors of the definition).
caf::expected<int> take_rate_grant(connection& conn, const rate_limit& limit, int wanted);

/// Gives back `unused` leases of a grant taken in the same transaction.
caf::expected<void> give_back_rate_grant(connection& conn, const rate_limit& limit, int unused);

} // namespace nf::store
