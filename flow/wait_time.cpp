#include "flow/wait_time.hpp"

#include <cctype>
#include <string>

namespace nf::flow {

namespace {

constexpr std::int64_t max_ms = std::int64_t{2147483647} * 1000;

struct cursor {
  std::string_view s;
  std::size_t i = 0;

  void space() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
      ++i;
  }
  bool done() const { return i >= s.size(); }
  bool digits(std::size_t n, int& out) {
    out = 0;
    for (std::size_t k = 0; k < n; ++k, ++i) {
      if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
        return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  }
  bool lit(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
};

// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return std::int64_t{era} * 146097 + doe - 719468;
}

int days_in_month(int y, int m) {
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

std::int64_t unit_ms(std::string_view unit) {
  if (unit == "ms")
    return 1;
  if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds")
    return 1000;
  if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes")
    return 60'000;
  if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hour" || unit == "hours")
    return 3'600'000;
  if (unit == "d" || unit == "day" || unit == "days")
    return 86'400'000;
  return 0;
}

}  // namespace

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
  cursor c{text};
  c.space();
  if (c.done())
    return std::nullopt;
  std::int64_t total = 0;
  bool bare_number = true;
  std::size_t terms = 0;
  while (!c.done()) {
    std::int64_t n = 0;
    std::size_t start = c.i;
    while (!c.done() && std::isdigit(static_cast<unsigned char>(c.s[c.i]))) {
      n = n * 10 + (c.s[c.i++] - '0');
      if (n > max_ms)
        return std::nullopt;
    }
    if (c.i == start)
      return std::nullopt;
    c.space();
    std::size_t ustart = c.i;
    while (!c.done() && std::isalpha(static_cast<unsigned char>(c.s[c.i])))
      ++c.i;
    std::string_view unit = c.s.substr(ustart, c.i - ustart);
    std::int64_t scale = 1000;
    if (!unit.empty()) {
      bare_number = false;
      scale = unit_ms(unit);
      if (scale == 0)
        return std::nullopt;
    } else if (terms > 0 || !bare_number) {
      return std::nullopt;  // "5m 30" is ambiguous: every term needs a unit
    }
    if (n > max_ms / scale)
      return std::nullopt;
    total += n * scale;
    if (total > max_ms)
      return std::nullopt;
    ++terms;
    c.space();
    c.lit(',');
    c.space();
  }
  return total;
}

std::optional<time_ms> parse_time(std::string_view text) {
  cursor c{text};
  c.space();
  int y, mo, d, h, mi, s = 0, ms = 0;
  if (!c.digits(4, y) || !c.lit('-') || !c.digits(2, mo) || !c.lit('-') || !c.digits(2, d))
    return std::nullopt;
  if (!c.lit('T') && !c.lit(' '))
    return std::nullopt;
  if (!c.digits(2, h) || !c.lit(':') || !c.digits(2, mi))
    return std::nullopt;
  if (c.lit(':')) {
    if (!c.digits(2, s))
      return std::nullopt;
    if (c.lit('.')) {
      int scale = 100;
      std::size_t start = c.i;
      while (!c.done() && std::isdigit(static_cast<unsigned char>(c.s[c.i]))) {
        ms += (c.s[c.i] - '0') * scale;
        scale /= 10;
        ++c.i;
      }
      if (c.i == start)
        return std::nullopt;
    }
  }
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59)
    return std::nullopt;
  c.space();
  std::int64_t offset_min = 0;
  if (c.lit('Z') || c.s.substr(c.i) == "UTC" || c.s.substr(c.i) == "GMT") {
    if (c.s.substr(c.i) == "UTC" || c.s.substr(c.i) == "GMT")
      c.i += 3;
  } else if (!c.done() && (c.s[c.i] == '+' || c.s[c.i] == '-')) {
    int sign = c.s[c.i++] == '-' ? -1 : 1;
    int oh, om;
    if (!c.digits(2, oh) || !c.lit(':') || !c.digits(2, om) || oh > 23 || om > 59)
      return std::nullopt;
    offset_min = sign * (oh * 60 + om);
  } else {
    return std::nullopt;  // a local time without a zone is ambiguous
  }
  c.space();
  if (!c.done())
    return std::nullopt;
  std::int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s
                      - offset_min * 60;
  return secs * 1000 + ms;
}

} // namespace nf::flow
