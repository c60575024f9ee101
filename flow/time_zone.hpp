#pragma once

// A time zone as a pure table: the UTC offsets an IANA zone had and will have, read from
// the system's tz database by the caller (engine/schedules/tz_database.*) and handed here,
// so that schedule times are computed without I/O. Local ("wall clock") times are counted
// in seconds as if the wall clock were UTC: local_s = utc_s + offset.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nf::flow {

/// When a POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3") switches: month, week 1-5 (5 = last),
/// weekday 0 = Sunday, at `time_s` seconds after local midnight (wall time before the switch).
struct tz_rule_date {
  int month = 0;
  int week = 0;
  int weekday = 0;
  int32_t time_s = 7200;
};

/// The TZif footer: what holds after the last listed transition.
struct tz_posix_rule {
  int32_t std_offset = 0;                ///< seconds east of UTC
  std::optional<int32_t> dst_offset;     ///< none: no daylight saving time
  tz_rule_date dst_start, dst_end;
};

struct time_zone {
  std::string name;
  int32_t initial_offset = 0;            ///< before the first transition
  std::vector<int64_t> transitions;      ///< UTC seconds, ascending
  std::vector<int32_t> offsets;          ///< the offset from transitions[i] on
  std::optional<tz_posix_rule> tail;     ///< after the last transition
};

/// UTC itself (also what "UTC", "Etc/UTC" and "Z" name without reading any file).
time_zone utc_zone();

/// Parses the footer rule of a TZif file ("EST5EDT,M3.2.0,M11.1.0"); nullopt when it is not
/// in the form this reads (the M-form dates, the one every zone in the database uses).
std::optional<tz_posix_rule> parse_posix_rule(std::string_view text);

/// The offset in force at `utc_s`.
int32_t offset_at(const time_zone& z, int64_t utc_s);

/// The UTC instants whose wall clock reads `local_s`: one normally, two in a fall-back
/// overlap (earlier first), none in a spring-forward gap.
std::vector<int64_t> instants_of(const time_zone& z, int64_t local_s);

/// Days since 1970-01-01 of a civil date, and back.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d);
void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d);

} // namespace nf::flow
