#include "flow/cron.hpp"

#include <array>
#include <cctype>

namespace nf::flow {

namespace {

constexpr std::array<const char*, 6> field_names = {"second", "minute", "hour", "day-of-month",
                                                   "month", "day-of-week"};
constexpr std::array<const char*, 12> month_names = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                    "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<const char*, 7> day_names = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// A number or (months, days) a name; nullopt when neither.
std::optional<int> value_of(std::string_view tok, int field) {
  if (tok.empty())
    return std::nullopt;
  bool digits = true;
  for (char c : tok)
    digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits)
    return tok.size() > 4 ? std::nullopt : std::optional<int>{std::stoi(std::string(tok))};
  auto u = upper(tok);
  if (field == 4)
    for (size_t i = 0; i < month_names.size(); ++i)
      if (u == month_names[i])
        return static_cast<int>(i + 1);
  if (field == 5)
    for (size_t i = 0; i < day_names.size(); ++i)
      if (u == day_names[i])
        return static_cast<int>(i);
  return std::nullopt;
}

// Why `tok` is no value: the Quartz extensions are named.
std::string not_a_value(const std::string& field, std::string_view tok) {
  auto u = upper(tok);
  if (u.find('L') != std::string::npos)
    return field + ": 'L' (the last day) is not supported";
  if (u.find('W') != std::string::npos)
    return field + ": 'W' (the nearest weekday) is not supported";
  return field + ": \"" + std::string(tok) + "\" is not a value";
}

// Sets the values `text` names in `bits` (indices lo..hi), or says what is wrong.
template <size_t N>
std::string parse_field(std::string_view text, int field, int lo, int hi, std::bitset<N>& bits,
                        bool& restricted) {
  std::string name = std::string{field_names[static_cast<size_t>(field)]} + " field \""
                     + std::string(text) + "\"";
  if (text.find('#') != std::string_view::npos)
    return name + ": '#' (the nth weekday of the month) is not supported";
  restricted = true;
  for (auto item : split(text, ',')) {
    if (item.empty())
      return name + ": an empty item";
    int step = 1;
    auto slash = item.find('/');
    std::string_view range = item.substr(0, slash);
    if (slash != std::string_view::npos) {
      auto s = value_of(item.substr(slash + 1), -1);
      if (!s || *s < 1)
        return name + ": the step must be a positive number";
      step = *s;
    }
    int a = lo, b = hi;
    if (range == "*" || range == "?") {
      if (range == "?" && field != 3 && field != 5)
        return name + ": '?' is allowed in the day-of-month and day-of-week fields only";
      if (slash == std::string_view::npos && item.size() == 1 && split(text, ',').size() == 1)
        restricted = false;
    } else {
      auto dash = range.find('-');
      auto first = value_of(range.substr(0, dash), field);
      if (!first)
        return not_a_value(name, range.substr(0, dash));
      a = *first;
      b = slash == std::string_view::npos ? a : hi;
      if (dash != std::string_view::npos) {
        auto last = value_of(range.substr(dash + 1), field);
        if (!last)
          return not_a_value(name, range.substr(dash + 1));
        b = *last;
      }
    }
    int max = field == 5 ? 7 : hi;
    if (a < lo || a > max || b < lo || b > max)
      return name + ": values run from " + std::to_string(lo) + " to " + std::to_string(max);
    if (a > b)
      return name + ": the range's start is after its end";
    for (int v = a; v <= b; v += step)
      bits.set(static_cast<size_t>(field == 5 ? v % 7 : v));
  }
  return {};
}

bool day_matches(const cron_expression& c, unsigned day, unsigned weekday) {
  bool d = c.days.test(day);
  bool w = c.weekdays.test(weekday);
  if (c.days_restricted && c.weekdays_restricted)
    return d && w;
  if (c.days_restricted)
    return d;
  if (c.weekdays_restricted)
    return w;
  return true;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

} // namespace

cron_parse_result parse_cron(std::string_view text) {
  std::string expanded;
  auto trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  if (!trimmed.empty() && trimmed.front() == '@') {
    auto m = upper(trimmed);
    if (m == "@YEARLY" || m == "@ANNUALLY")
      expanded = "0 0 0 1 1 *";
    else if (m == "@MONTHLY")
      expanded = "0 0 0 1 * *";
    else if (m == "@WEEKLY")
      expanded = "0 0 0 * * 0";
    else if (m == "@DAILY" || m == "@MIDNIGHT")
      expanded = "0 0 0 * * *";
    else if (m == "@HOURLY")
      expanded = "0 0 * * * *";
    else
      return {std::nullopt, "\"" + std::string(trimmed) + "\" is not a macro this knows "
                            "(@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)"};
    trimmed = expanded;
  }
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < trimmed.size()) {
    while (i < trimmed.size() && std::isspace(static_cast<unsigned char>(trimmed[i])))
      ++i;
    size_t start = i;
    while (i < trimmed.size() && !std::isspace(static_cast<unsigned char>(trimmed[i])))
      ++i;
    if (i > start)
      fields.push_back(trimmed.substr(start, i - start));
  }
  if (fields.size() == 7)
    return {std::nullopt, "a seventh (year) field is not supported: use six fields "
                          "(second minute hour day-of-month month day-of-week)"};
  if (fields.size() != 5 && fields.size() != 6)
    return {std::nullopt, "expected six fields (second minute hour day-of-month month "
                          "day-of-week) or five (without the second), got "
                            + std::to_string(fields.size())};
  if (fields.size() == 5)
    fields.insert(fields.begin(), "0");
  cron_expression c;
  bool ignored = false;
  std::string err;
  if (err.empty()) err = parse_field(fields[0], 0, 0, 59, c.seconds, ignored);
  if (err.empty()) err = parse_field(fields[1], 1, 0, 59, c.minutes, ignored);
  if (err.empty()) err = parse_field(fields[2], 2, 0, 23, c.hours, ignored);
  if (err.empty()) err = parse_field(fields[3], 3, 1, 31, c.days, c.days_restricted);
  if (err.empty()) err = parse_field(fields[4], 4, 1, 12, c.months, ignored);
  if (err.empty()) err = parse_field(fields[5], 5, 0, 6, c.weekdays, c.weekdays_restricted);
  if (!err.empty())
    return {std::nullopt, err};
  return {c, {}};
}

std::optional<int64_t> next_run(const cron_expression& c, const time_zone& z, int64_t after_s) {
  int64_t local = after_s + offset_at(z, after_s) + 1;
  // Whole days and months are skipped at once, so nine years of days bound the search.
  for (int guard = 0; guard < 9 * 366 * 30; ++guard) {
    int64_t days = floor_div(local, 86400);
    int64_t sod = local - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, y, mo, d);
    auto weekday = static_cast<unsigned>(((days % 7) + 7 + 4) % 7);
    if (!c.months.test(mo)) {
      local = days_from_civil(mo == 12 ? y + 1 : y, mo == 12 ? 1 : mo + 1, 1) * 86400;
      continue;
    }
    if (!day_matches(c, d, weekday)) {
      local = (days + 1) * 86400;
      continue;
    }
    auto h = static_cast<size_t>(sod / 3600), mi = static_cast<size_t>(sod / 60 % 60),
         s = static_cast<size_t>(sod % 60);
    if (!c.hours.test(h)) {
      local = days * 86400 + static_cast<int64_t>(h + 1) * 3600;
      continue;
    }
    if (!c.minutes.test(mi)) {
      local = days * 86400 + static_cast<int64_t>(h) * 3600 + static_cast<int64_t>(mi + 1) * 60;
      continue;
    }
    if (!c.seconds.test(s)) {
      ++local;
      continue;
    }
    auto at = instants_of(z, local);
    if (at.empty()) {
      // A gap: the wall clock jumps past `local`. Run at the instant the offset before the
      // jump would give, which the clock shows later by the gap's length (java.time's rule).
      int64_t u = local - offset_at(z, local - 86400);
      if (u > after_s)
        return u;
    }
    for (auto u : at)
      if (u > after_s)
        return u;
    ++local;
  }
  return std::nullopt;
}

std::vector<int64_t> next_runs(const cron_expression& c, const time_zone& z, int64_t after_s,
                               int64_t end_s, int limit) {
  std::vector<int64_t> out;
  int64_t t = after_s;
  while (static_cast<int>(out.size()) < limit) {
    auto n = next_run(c, z, t);
    if (!n || (end_s > 0 && *n > end_s))
      break;
    out.push_back(*n);
    t = *n;
  }
  return out;
}

} // namespace nf::flow
