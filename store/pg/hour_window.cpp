#include "store/pg/hour_window.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "store/db_clock.hpp"
#include "store/pg/owned_statement.hpp"
#include "store/pg/params.hpp"
#include "store/pg/sql_comments.hpp"

namespace nf::store {

namespace {

constexpr int64_t hour_s = 3600;
constexpr const char* marker = "@h";

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0);
}

// A one-element array: `col >= ALL('{…}')` prunes partitions at plan time as `col >= …`
// would, but no index scan can take it as a condition (a btree takes an array only as
// `op ANY`), so the window never makes an index on the column look selective.
std::string hour_text(int64_t hour) {
  return "ALL('{\"" + timestamptz_text(hour * hour_s * 1000) + "\"}'::timestamptz[])";
}

std::string rewrite(const statement& st, hour_window w) {
  return expand_comments(st.sql, "hours:", [&](const std::string& body) {
    auto column = trimmed(body);
    return " AND " + column + " >= " + hour_text(w.first_hour) + " AND " + column + " < "
           + hour_text(w.first_hour + w.hours) + " ";
  });
}

/// The window's first hour in a variant's name, and the statement's name before it.
struct parsed_name {
  std::string_view base;
  int64_t first_hour = 0;
};

std::optional<parsed_name> parse(std::string_view name) {
  auto at = name.rfind(marker);
  if (at == std::string_view::npos)
    return std::nullopt;
  auto rest = name.substr(at + 2);
  auto plus = rest.find('+');
  if (plus == 0 || plus == std::string_view::npos)
    return std::nullopt;
  int64_t hour = 0;
  for (char c : rest.substr(0, plus)) {
    if (c < '0' || c > '9')
      return std::nullopt;
    hour = hour * 10 + (c - '0');
  }
  return parsed_name{name.substr(0, at), hour};
}

struct variant {
  std::unique_ptr<owned_statement> owned;
  int64_t end_hour = 0;
};

class registry {
public:
  const statement& get(const statement& base, hour_window w) {
    std::lock_guard<std::mutex> guard{mutex_};
    auto name = std::string{base.name} + marker + std::to_string(w.first_hour) + "+"
                + std::to_string(w.hours);
    auto& of_base = variants_[base.name];
    auto& slot = of_base[name];
    if (!slot.owned) {
      slot.owned = std::make_unique<owned_statement>(name, rewrite(base, w));
      slot.end_hour = w.first_hour + w.hours;
      // One new window an hour per statement: those that ended a day before this one began
      // are not asked for again.
      for (auto it = of_base.begin(); it != of_base.end();) {
        if (it->second.end_hour + 24 < w.first_hour)
          it = of_base.erase(it);
        else
          ++it;
      }
    }
    return slot.owned->st;
  }

private:
  std::mutex mutex_;
  std::map<std::string, std::map<std::string, variant>> variants_;
};

registry& variants() {
  static registry r;
  return r;
}

} // namespace

std::optional<hour_window> hours_covering(int64_t from_s, int64_t to_s, int max_hours) {
  if (to_s < from_s)
    return std::nullopt;
  auto first = floor_div(from_s, hour_s);
  auto last = floor_div(to_s, hour_s);
  if (last - first + 1 > max_hours)
    return std::nullopt;
  return hour_window{first, static_cast<int>(last - first + 1)};
}

std::optional<hour_window> hours_around_now(int64_t from_offset_s, int64_t to_offset_s,
                                            int max_hours) {
  constexpr int64_t clock_skew_s = 600;
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                  db_clock_now().time_since_epoch())
                  .count();
  return hours_covering(now + from_offset_s - clock_skew_s, now + to_offset_s + clock_skew_s,
                        max_hours);
}

const statement& within_hours(const statement& st, hour_window w) {
  return variants().get(st, w);
}

bool supersedes(std::string_view newer, std::string_view older) {
  auto n = parse(newer), o = parse(older);
  return n && o && n->base == o->base && o->first_hour < n->first_hour;
}

} // namespace nf::store
