#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/schema/sql_check.hpp"

namespace nf::store {

/// Whole UTC hours [first_hour, first_hour + hours), counted from the epoch: the hourly
/// "Timers" partitions a statement may touch.
struct hour_window {
  int64_t first_hour = 0;
  int hours = 0;
};

/// The hours that cover [from_s, to_s] (UTC seconds since the epoch); nothing when that
/// takes more than `max_hours` of them.
std::optional<hour_window> hours_covering(int64_t from_s, int64_t to_s, int max_hours);

/// The hours that cover [now + from_offset_s, now + to_offset_s] by this process's clock,
/// widened by ten minutes each way for that clock being off the server's (hours_covering).
std::optional<hour_window> hours_around_now(int64_t from_offset_s, int64_t to_offset_s,
                                            int max_hours);

/// The variant of `st` that names only the hours of `w`.
///
/// A generic plan over `"Timers"` names every hourly partition: bounds on `now()` or on a
/// parameter prune them only when the executor starts. Building that plan takes
/// milliseconds (~50 hours ahead, up to 48 behind, each of them twice in a statement that
/// names the table twice), and a vacuum or analyse of any one of them makes every backend
/// build it again at its next use. In the variant, each
/// `/*hours: <column> */` comment becomes `AND <column> >= ALL('{<first hour>}') AND <column>
/// < ALL('{<end of the last>}')`, constants the planner prunes with: its plan names the
/// window's partitions alone, builds in a fraction of the time, and only their vacuum
/// invalidates it. Written with `ALL` over one element, the bounds prune as plain comparisons
/// would but are no index condition: the window, which covers its partitions whole, never
/// makes an index on the column look selective, and the statement keeps the index its other
/// conditions pick. The statement as written keeps the comments as comments.
///
/// The variant is named `<name>@h<first_hour>+<hours>` and lives while its window is
/// recent: the variants of a window that ended a day before the newest one asked for are
/// forgotten (a caller uses what it gets at once). Thread-safe.
const statement& within_hours(const statement& st, hour_window w);

/// True when `older` is the name of a variant `within_hours` made of the same statement as
/// `newer`, for a window that starts earlier: a connection that prepares `newer` has no use
/// for `older` any more (the clock only moves forward), and deallocates it
/// (store/pg/pipeline.cpp).
bool supersedes(std::string_view newer, std::string_view older);

} // namespace nf::store
