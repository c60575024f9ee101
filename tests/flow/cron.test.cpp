#define CAF_SUITE flow.cron
#include "caf/test/unit_test.hpp"

// Cron expressions and their times in a zone (flow/cron.hpp, flow/time_zone.hpp): Spring's
// six fields and the classic five, what is refused by name, and the wall clock's gaps and
// overlaps (a zone given by its POSIX rule, as a TZif file's footer carries it).

#include "flow/cron.hpp"
#include "flow/time_zone.hpp"

using namespace nf::flow;

namespace {

int64_t utc(int64_t y, unsigned mo, unsigned d, int h, int mi, int s = 0) {
  return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

cron_expression cron(const char* text) {
  auto r = parse_cron(text);
  if (!r.expr)
    CAF_FAIL("refused " << text << ": " << r.error);
  return *r.expr;
}

std::string refusal(const char* text) {
  auto r = parse_cron(text);
  CAF_CHECK(!r.expr);
  return r.error;
}

// The next run as a value (-1: none), so a check compares no reference into a temporary.
int64_t next(const cron_expression& c, const time_zone& z, int64_t after) {
  auto n = next_run(c, z, after);
  return n ? *n : -1;
}

bool mentions(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

time_zone berlin() {
  time_zone z;
  z.name = "Europe/Berlin";
  z.tail = parse_posix_rule("CET-1CEST,M3.5.0,M10.5.0/3");
  CAF_REQUIRE(z.tail.has_value());
  return z;
}

} // namespace

CAF_TEST(six fields with seconds and five without) {
  auto z = utc_zone();
  auto every_second = cron("* * * ? * *");
  CAF_CHECK_EQUAL(next(every_second, z, utc(2025, 1, 1, 0, 0, 0)), utc(2025, 1, 1, 0, 0, 1));
  auto quarter = cron("*/15 * * * *");
  CAF_CHECK_EQUAL(next(quarter, z, utc(2025, 1, 1, 10, 7)), utc(2025, 1, 1, 10, 15));
  auto conductor = cron("0 */5 * ? * *");
  CAF_CHECK_EQUAL(next(conductor, z, utc(2025, 1, 1, 10, 7, 30)), utc(2025, 1, 1, 10, 10));
  auto stepped = cron("10/20 * * * * *");
  CAF_CHECK_EQUAL(next_runs(stepped, z, utc(2025, 1, 1, 0, 0), 0, 4),
                  (std::vector<int64_t>{utc(2025, 1, 1, 0, 0, 10), utc(2025, 1, 1, 0, 0, 30),
                                        utc(2025, 1, 1, 0, 0, 50), utc(2025, 1, 1, 0, 1, 10)}));
}

CAF_TEST(names lists ranges and the day rules) {
  auto z = utc_zone();
  // 2025-01-04 is a Saturday: the next weekday 09:00 is Monday the 6th.
  auto weekdays = cron("0 0 9 ? * mon-FRI");
  CAF_CHECK_EQUAL(next(weekdays, z, utc(2025, 1, 4, 12, 0)), utc(2025, 1, 6, 9, 0));
  auto sunday7 = cron("0 0 9 ? * 7");
  CAF_CHECK_EQUAL(next(sunday7, z, utc(2025, 1, 4, 12, 0)), utc(2025, 1, 5, 9, 0));
  auto months = cron("0 0 0 1 JAN,jul *");
  CAF_CHECK_EQUAL(next(months, z, utc(2025, 2, 1, 0, 0)), utc(2025, 7, 1, 0, 0));
  auto leap = cron("0 0 0 29 2 ?");
  CAF_CHECK_EQUAL(next(leap, z, utc(2025, 1, 1, 0, 0)), utc(2028, 2, 29, 0, 0));
  // Both day fields restricted: a day must match both (Spring), so Friday the 13th.
  auto friday13 = cron("0 0 0 13 * FRI");
  CAF_CHECK_EQUAL(next(friday13, z, utc(2025, 1, 1, 0, 0)), utc(2025, 6, 13, 0, 0));
  CAF_CHECK_EQUAL(next(cron("@hourly"), z, utc(2025, 1, 1, 0, 30)), utc(2025, 1, 1, 1, 0));
  CAF_CHECK_EQUAL(next(cron("0 0 0 30 2 *"), z, utc(2025, 1, 1, 0, 0)), -1);
}

CAF_TEST(what is not supported is refused by name) {
  CAF_CHECK(mentions(refusal("0 0 0 L * ?"), "'L'"));
  CAF_CHECK(mentions(refusal("0 0 0 ? * 6L"), "'L'"));
  CAF_CHECK(mentions(refusal("0 0 0 15W * ?"), "'W'"));
  CAF_CHECK(mentions(refusal("0 0 0 ? * 6#3"), "'#'"));
  CAF_CHECK(mentions(refusal("0 0 0 * * * 2030"), "year"));
  CAF_CHECK(mentions(refusal("* * *"), "got 3"));
  CAF_CHECK(mentions(refusal("61 * * * * *"), "second field"));
  CAF_CHECK(mentions(refusal("? * * * * *"), "'?'"));
  CAF_CHECK(mentions(refusal("0 0 25 * * *"), "hour field"));
  CAF_CHECK(mentions(refusal("0 0 0 * FOO *"), "\"FOO\""));
  CAF_CHECK(mentions(refusal("0 0 0 * * 1-8"), "day-of-week"));
  CAF_CHECK(mentions(refusal("*/0 * * * * *"), "step"));
  CAF_CHECK(mentions(refusal("@fortnightly"), "macro"));
}

CAF_TEST(a wall time in a spring forward gap runs shifted by the gap) {
  auto z = berlin();
  // 2025-03-30: 02:00 CET becomes 03:00 CEST. 02:30 does not exist: it runs at 03:30 CEST.
  auto half_two = cron("0 30 2 * * *");
  CAF_CHECK_EQUAL(next_runs(half_two, z, utc(2025, 3, 28, 12, 0), 0, 3),
                  (std::vector<int64_t>{utc(2025, 3, 29, 1, 30),   // 02:30 CET
                                        utc(2025, 3, 30, 1, 30),   // 03:30 CEST
                                        utc(2025, 3, 31, 0, 30)})); // 02:30 CEST
  // Hourly: 02:00 is shifted to 03:00 and merges with it; nothing runs twice.
  CAF_CHECK_EQUAL(next_runs(cron("0 0 * * * *"), z, utc(2025, 3, 29, 23, 30), 0, 3),
                  (std::vector<int64_t>{utc(2025, 3, 30, 0, 0),   // 01:00 CET
                                        utc(2025, 3, 30, 1, 0),   // 03:00 CEST
                                        utc(2025, 3, 30, 2, 0)})); // 04:00 CEST
}

CAF_TEST(a wall time in a fall back overlap runs once at its first occurrence) {
  auto z = berlin();
  // 2025-10-26: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
  auto half_two = cron("0 30 2 * * *");
  CAF_CHECK_EQUAL(next_runs(half_two, z, utc(2025, 10, 25, 12, 0), 0, 3),
                  (std::vector<int64_t>{utc(2025, 10, 26, 0, 30),  // 02:30 CEST
                                        utc(2025, 10, 27, 1, 30),  // 02:30 CET, next day
                                        utc(2025, 10, 28, 1, 30)}));
  auto hourly = next_runs(cron("0 0 * * * *"), z, utc(2025, 10, 25, 23, 30), 0, 3);
  CAF_CHECK_EQUAL(hourly, (std::vector<int64_t>{utc(2025, 10, 26, 0, 0),  // 02:00 CEST
                                                utc(2025, 10, 26, 2, 0),  // 03:00 CET
                                                utc(2025, 10, 26, 3, 0)}));
}

CAF_TEST(offsets from transitions and from the rule) {
  auto z = berlin();
  CAF_CHECK_EQUAL(offset_at(z, utc(2025, 1, 15, 12, 0)), 3600);
  CAF_CHECK_EQUAL(offset_at(z, utc(2025, 7, 15, 12, 0)), 7200);
  CAF_CHECK_EQUAL(offset_at(z, utc(2025, 3, 30, 0, 59, 59)), 3600);
  CAF_CHECK_EQUAL(offset_at(z, utc(2025, 3, 30, 1, 0)), 7200);
  auto ny = parse_posix_rule("EST5EDT,M3.2.0,M11.1.0");
  CAF_REQUIRE(ny.has_value());
  time_zone nyz;
  nyz.tail = ny;
  // 2025-03-09 02:00 EST: -5h until 07:00 UTC, -4h after.
  CAF_CHECK_EQUAL(offset_at(nyz, utc(2025, 3, 9, 6, 59)), -5 * 3600);
  CAF_CHECK_EQUAL(offset_at(nyz, utc(2025, 3, 9, 7, 0)), -4 * 3600);
  // A table with explicit transitions wins before its last one.
  time_zone table;
  table.initial_offset = 0;
  table.transitions = {utc(2025, 6, 1, 0, 0)};
  table.offsets = {3 * 3600};
  CAF_CHECK_EQUAL(offset_at(table, utc(2025, 5, 31, 23, 0)), 0);
  CAF_CHECK_EQUAL(offset_at(table, utc(2025, 6, 1, 0, 0)), 3 * 3600);
  CAF_CHECK_EQUAL(next(cron("0 0 12 * * *"), table, utc(2025, 6, 1, 0, 0)),
                  utc(2025, 6, 1, 9, 0));
  CAF_CHECK(!parse_posix_rule("CET-1CEST,J60,J300").has_value());
}
