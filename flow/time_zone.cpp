#include "flow/time_zone.hpp"

#include <algorithm>
#include <cctype>

namespace nf::flow {

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

time_zone utc_zone() {
  time_zone z;
  z.name = "UTC";
  return z;
}

namespace {

struct reader {
  std::string_view s;
  size_t i = 0;
  bool at_end() const { return i >= s.size(); }
  char peek() const { return at_end() ? '\0' : s[i]; }
};

// A zone abbreviation: letters, or <...> quoted (e.g. "<+03>").
bool read_name(reader& r) {
  if (r.peek() == '<') {
    auto close = r.s.find('>', r.i);
    if (close == std::string_view::npos)
      return false;
    r.i = close + 1;
    return true;
  }
  size_t start = r.i;
  while (!r.at_end() && std::isalpha(static_cast<unsigned char>(r.peek())))
    ++r.i;
  return r.i - start >= 3;
}

// [+-]hh[:mm[:ss]] as seconds.
std::optional<int32_t> read_hms(reader& r) {
  int sign = 1;
  if (r.peek() == '+' || r.peek() == '-')
    sign = r.s[r.i++] == '-' ? -1 : 1;
  int32_t parts[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    if (k > 0) {
      if (r.peek() != ':')
        break;
      ++r.i;
    }
    size_t start = r.i;
    while (!r.at_end() && std::isdigit(static_cast<unsigned char>(r.peek())))
      parts[k] = parts[k] * 10 + (r.s[r.i++] - '0');
    if (r.i == start || r.i - start > 3)
      return std::nullopt;
  }
  return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
}

std::optional<int> read_int(reader& r) {
  size_t start = r.i;
  int v = 0;
  while (!r.at_end() && std::isdigit(static_cast<unsigned char>(r.peek())))
    v = v * 10 + (r.s[r.i++] - '0');
  if (r.i == start)
    return std::nullopt;
  return v;
}

std::optional<tz_rule_date> read_date(reader& r) {
  if (r.peek() != 'M')
    return std::nullopt;
  ++r.i;
  tz_rule_date d;
  auto m = read_int(r);
  if (!m || r.peek() != '.')
    return std::nullopt;
  ++r.i;
  auto w = read_int(r);
  if (!w || r.peek() != '.')
    return std::nullopt;
  ++r.i;
  auto wd = read_int(r);
  if (!wd || *m < 1 || *m > 12 || *w < 1 || *w > 5 || *wd > 6)
    return std::nullopt;
  d.month = *m;
  d.week = *w;
  d.weekday = *wd;
  if (r.peek() == '/') {
    ++r.i;
    auto t = read_hms(r);
    if (!t)
      return std::nullopt;
    d.time_s = *t;
  }
  return d;
}

// The local (standard-or-daylight wall) second of `d` in `year`, counted as UTC.
int64_t local_of(const tz_rule_date& d, int64_t year) {
  int64_t first = days_from_civil(year, static_cast<unsigned>(d.month), 1);
  // 1970-01-01 was a Thursday (4).
  int64_t wd_first = ((first % 7) + 7 + 4) % 7;
  int64_t day = first + ((d.weekday - wd_first) + 7) % 7 + (d.week - 1) * 7;
  unsigned next_m = d.month == 12 ? 1 : static_cast<unsigned>(d.month + 1);
  int64_t next_first = days_from_civil(d.month == 12 ? year + 1 : year, next_m, 1);
  while (day >= next_first)
    day -= 7;
  return day * 86400 + d.time_s;
}

int32_t rule_offset(const tz_posix_rule& p, int64_t utc_s) {
  if (!p.dst_offset)
    return p.std_offset;
  int64_t y;
  unsigned m, d;
  civil_from_days((utc_s + p.std_offset) / 86400 - ((utc_s + p.std_offset) % 86400 < 0), y, m,
                  d);
  // The switches as UTC instants: the start is in standard time, the end in daylight time.
  int64_t start = local_of(p.dst_start, y) - p.std_offset;
  int64_t end = local_of(p.dst_end, y) - *p.dst_offset;
  bool in_dst = start < end ? (utc_s >= start && utc_s < end) : !(utc_s >= end && utc_s < start);
  return in_dst ? *p.dst_offset : p.std_offset;
}

} // namespace

std::optional<tz_posix_rule> parse_posix_rule(std::string_view text) {
  reader r{text};
  tz_posix_rule p;
  if (!read_name(r))
    return std::nullopt;
  auto std_off = read_hms(r);
  if (!std_off)
    return std::nullopt;
  p.std_offset = -*std_off; // POSIX counts west of UTC as positive
  if (r.at_end())
    return p;
  if (!read_name(r))
    return std::nullopt;
  p.dst_offset = p.std_offset + 3600;
  if (r.peek() != ',') {
    auto dst_off = read_hms(r);
    if (!dst_off)
      return std::nullopt;
    p.dst_offset = -*dst_off;
  }
  if (r.peek() != ',')
    return std::nullopt;
  ++r.i;
  auto a = read_date(r);
  if (!a || r.peek() != ',')
    return std::nullopt;
  ++r.i;
  auto b = read_date(r);
  if (!b || !r.at_end())
    return std::nullopt;
  p.dst_start = *a;
  p.dst_end = *b;
  return p;
}

int32_t offset_at(const time_zone& z, int64_t utc_s) {
  auto it = std::upper_bound(z.transitions.begin(), z.transitions.end(), utc_s);
  if (it == z.transitions.begin())
    return z.transitions.empty() && z.tail ? rule_offset(*z.tail, utc_s) : z.initial_offset;
  if (it == z.transitions.end() && z.tail)
    return rule_offset(*z.tail, utc_s);
  return z.offsets[static_cast<size_t>(it - z.transitions.begin() - 1)];
}

std::vector<int64_t> instants_of(const time_zone& z, int64_t local_s) {
  // Offsets stay within ±26 hours, and change at most once within a day around any
  // instant in practice: the candidates are the offsets in force a day either side.
  std::vector<int64_t> out;
  for (int64_t probe : {local_s - 86400 * 2, local_s, local_s + 86400 * 2}) {
    int32_t off = offset_at(z, probe);
    int64_t utc = local_s - off;
    if (offset_at(z, utc) == off && std::find(out.begin(), out.end(), utc) == out.end())
      out.push_back(utc);
  }
  // Also every offset that begins or ends within two days of the time.
  auto lo = std::lower_bound(z.transitions.begin(), z.transitions.end(), local_s - 2 * 86400);
  for (auto it = lo; it != z.transitions.end() && *it <= local_s + 2 * 86400; ++it) {
    for (int64_t probe : {*it - 1, *it}) {
      int32_t off = offset_at(z, probe);
      int64_t utc = local_s - off;
      if (offset_at(z, utc) == off && std::find(out.begin(), out.end(), utc) == out.end())
        out.push_back(utc);
    }
  }
  if (z.tail && z.tail->dst_offset) {
    for (int32_t off : {z.tail->std_offset, *z.tail->dst_offset}) {
      int64_t utc = local_s - off;
      bool past = z.transitions.empty() || utc >= z.transitions.back();
      if (past && offset_at(z, utc) == off && std::find(out.begin(), out.end(), utc) == out.end())
        out.push_back(utc);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace nf::flow
