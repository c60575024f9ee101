#pragma once

// Postgres's clock as this process sees it. Ids (uuidv7) carry their creation time, and
// "startedAt" = uuid_extract_timestamp(id) is the partition key of WorkflowExecutions
// and the tables keyed with it: a node whose own clock is off would stamp rows into the
// wrong partitions. So the node learns the offset between Postgres's clock and its own
// (membership's heartbeat and serve's start-up check read clock_timestamp() in a statement
// they already run) and every wall-clock reading that ends up in a row, or is compared
// with one, goes through db_clock_now().

#include <chrono>
#include <cstdint>

namespace nf {

/// Postgres's clock minus this process's system clock, in microseconds (0 before the
/// first reading).
int64_t db_clock_offset_us();

/// Records one reading of Postgres's clock, `server_us` (microseconds since the epoch),
/// taken by a statement sent at `sent` and answered at `received` (this process's system
/// clock). The offset moves only when the one it holds falls outside what this reading
/// allows (server_us - received … server_us - sent), and then to the round trip's
/// midpoint: readings' jitter does not move ids back and forth, and when the offset
/// does change, ids step back by at most that change.
void observe_db_clock(std::chrono::system_clock::time_point sent, int64_t server_us,
                      std::chrono::system_clock::time_point received);

/// This process's system clock corrected to Postgres's.
std::chrono::system_clock::time_point db_clock_now();

/// db_clock_now() in milliseconds since the epoch.
int64_t db_clock_now_ms();

} // namespace nf
