#pragma once

// The two time formats a WAIT task accepts.

#include <cstdint>
#include <optional>
#include <string_view>

#include "flow/types.hpp"

namespace nf::flow {

/// `duration`: an integer number of seconds, or units summed: "90s",
/// "1h 30m", "2 days 3 hours", "500ms" (ms, s/sec/second(s), m/min/minute(s),
/// h/hr/hour(s), d/day(s)). nullopt when malformed or beyond ~68 years.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

/// `until`: RFC 3339 / ISO 8601 in UTC or with an offset:
/// "2025-01-31T10:00:00Z", "2025-01-31 10:00 +02:00", "2025-01-31T10:00:00.250Z".
std::optional<time_ms> parse_time(std::string_view text);

} // namespace nf::flow
