#pragma once

// Cron expressions as Conductor's scheduler takes them (Spring's CronExpression): six fields
// `second minute hour day-of-month month day-of-week`, or the classic five without seconds
// (second 0), or a macro (@yearly @annually @monthly @weekly @daily @midnight @hourly). A
// field is `*`, `?` (day fields only), a number, a range `a-b`, a step `*/n`, `a/n`,
// `a-b/n`, or a comma list of those; months take JAN-DEC and days SUN-SAT (any case);
// day-of-week counts 0-7 with 0 and 7 both Sunday. When both day fields are restricted a
// day must match both (Spring's rule, not Vixie cron's "either"). `L`, `W`, `#` and a
// seventh (year) field are refused by name.
//
// Times are computed on the zone's wall clock (flow/time_zone.hpp), as java.time does:
// a wall time that does not exist (a spring-forward gap) runs shifted later by the gap's
// length (02:30 becomes 03:30, or merges with 03:30 when that also matches); a wall time
// that happens twice (a fall-back overlap) runs once, at its first occurrence.

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/time_zone.hpp"

namespace nf::flow {

struct cron_expression {
  std::bitset<60> seconds, minutes;
  std::bitset<24> hours;
  std::bitset<32> days;     ///< 1-31
  std::bitset<13> months;   ///< 1-12
  std::bitset<7> weekdays;  ///< 0 = Sunday
  bool days_restricted = false;
  bool weekdays_restricted = false;
};

struct cron_parse_result {
  std::optional<cron_expression> expr;
  std::string error; ///< why it was refused, naming the field
};

cron_parse_result parse_cron(std::string_view text);

/// The first run strictly after `after_s` (UTC seconds), or nullopt when none comes within
/// about nine years (`0 0 0 30 2 *`).
std::optional<int64_t> next_run(const cron_expression& c, const time_zone& z, int64_t after_s);

/// Up to `limit` runs after `after_s` and not after `end_s` (0: no end).
std::vector<int64_t> next_runs(const cron_expression& c, const time_zone& z, int64_t after_s,
                               int64_t end_s, int limit);

} // namespace nf::flow
