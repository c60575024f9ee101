#include "store/schema/partitions.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>

#include "proto/errors.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

namespace {

using seconds_t = int64_t; // UTC seconds since the epoch; partitions are whole hours/months

struct managed_table {
  const char* parent;
  const char* key; ///< the range partition key column
  bool hourly;
  const char* storage; ///< a new partition's storage parameters ("" = defaults)
  /// Columns ANALYZE skips (statistics target 0, migration 0016), which a partition does
  /// not take from its parent.
  std::initializer_list<const char*> unsampled;
  /// Append-only (migration 0024): no DEFAULT partition to adopt rows from (adopting is a
  /// DELETE, which the table refuses), and every partition gets the TRUNCATE trigger a
  /// partition does not inherit.
  bool append_only = false;
};

// docs/schema.md §3. Order matters for drop_expired: executions before events.
constexpr managed_table managed_tables[] = {
  // Room for HOT updates of the execution rows (migration 0012).
  {"WorkflowExecutions", "startedAt", false, " WITH (fillfactor = 70)",
   {"input", "output", "variables"}},
  {"WorkflowEvents", "at", false, "", {"payload"}},
  {"AuditEvents", "at", false, "", {}, true},
  {"Timers", "fireAt", true, "", {}},
};

// A partition transaction waits at most this long for a lock (e.g. ATTACH's
// ACCESS EXCLUSIVE on DEFAULT behind a long insert) instead of queueing every
// later writer behind it indefinitely; the next maintenance round tries again.
constexpr const char* lock_timeout = "SET LOCAL lock_timeout = '5s'";

// --- UTC civil time (H. Hinnant's algorithms), enough for month arithmetic ---

struct civil {
  int64_t y;
  unsigned m, d, h;
};

constexpr int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

civil to_civil(seconds_t t) {
  int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
  seconds_t rem = t - days * 86400;
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  return civil{y, m, d, static_cast<unsigned>(rem / 3600)};
}

seconds_t from_civil(const civil& c) {
  return days_from_civil(c.y, c.m, c.d) * 86400 + static_cast<seconds_t>(c.h) * 3600;
}

seconds_t period_start(seconds_t t, bool hourly) {
  auto c = to_civil(t);
  if (!hourly) {
    c.d = 1;
    c.h = 0;
  }
  return from_civil(c);
}

// `start` must be a period start.
seconds_t add_periods(seconds_t start, int64_t n, bool hourly) {
  if (hourly)
    return start + n * 3600;
  auto c = to_civil(start);
  int64_t months = c.y * 12 + (c.m - 1) + n;
  int64_t y = months >= 0 ? months / 12 : -((-months + 11) / 12);
  c.y = y;
  c.m = static_cast<unsigned>(months - y * 12 + 1);
  return from_civil(c);
}

std::string partition_name_of(const std::string& parent, seconds_t lo, bool hourly) {
  auto c = to_civil(lo);
  char buf[32];
  if (hourly)
    std::snprintf(buf, sizeof buf, "_y%04lldm%02ud%02uh%02u", static_cast<long long>(c.y), c.m,
                  c.d, c.h);
  else
    std::snprintf(buf, sizeof buf, "_y%04lldm%02u", static_cast<long long>(c.y), c.m);
  return parent + buf;
}

// A timestamptz literal with explicit offset, as the migrations write bounds.
std::string literal(seconds_t t) {
  auto c = to_civil(t);
  char buf[40];
  std::snprintf(buf, sizeof buf, "'%04lld-%02u-%02u %02u:00:00+00'", static_cast<long long>(c.y),
                c.m, c.d, c.h);
  return buf;
}

std::string iso(seconds_t t) {
  auto s = literal(t);
  return s.substr(1, s.size() - 2);
}

seconds_t to_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point from_seconds(seconds_t t) {
  return std::chrono::system_clock::time_point{std::chrono::seconds{t}};
}

std::string quoted(const std::string& ident) {
  return '"' + ident + '"';
}

bool is_lost_create_race(const caf::error& err) {
  auto s = sqlstate_of(err);
  // 42P07 duplicate table, 42P17 overlapping partition bounds, 23505 two CREATE
  // TABLEs colliding on the pg_class/pg_type unique indexes.
  return s == "42P07" || s == "42P17" || s == "23505";
}

bool is_lost_drop_race(const caf::error& err) {
  return sqlstate_of(err) == "42P01"; // undefined table: another caller dropped it
}

constexpr statement list_partitions_st{
  "partitions.list",
  R"(SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1) ORDER BY c.relname)"};

constexpr statement server_now_st{"partitions.server_now",
                                  "SELECT floor(extract(epoch FROM now()))::bigint AS now_s"};

constexpr statement move_pending_timers{
  "partitions.move_pending_timers",
  R"(UPDATE "Timers" SET "fireAt" = greatest(to_timestamp($3::bigint), now())
      WHERE "fireAt" >= to_timestamp($1::bigint) AND "fireAt" < to_timestamp($2::bigint)
        AND "claimedAt" IS NULL)"};

constexpr statement active_in_month{
  "partitions.active_in_month",
  R"(SELECT EXISTS (SELECT 1 FROM "WorkflowExecutions"
      WHERE "startedAt" >= to_timestamp($1::bigint) AND "startedAt" < to_timestamp($2::bigint)
        AND "status" IN ('RUNNING', 'PAUSED')) AS found)"};

constexpr statement active_started_before{
  "partitions.active_started_before",
  R"(SELECT EXISTS (SELECT 1 FROM "WorkflowExecutions"
      WHERE "startedAt" < to_timestamp($1::bigint) AND "status" IN ('RUNNING', 'PAUSED'))
     AS found)"};

constexpr statement delete_month_tasks{
  "partitions.delete_month_tasks",
  R"(DELETE FROM "TaskExecutions" t USING "WorkflowExecutions" w
      WHERE w."startedAt" >= to_timestamp($1::bigint) AND w."startedAt" < to_timestamp($2::bigint)
        AND t."workflowId" = w."id")"};

// The values of the month's tasks and workflows stored out of line (migration 0031), keyed
// like its task rows and deleted with them.
constexpr statement delete_month_payloads{
  "partitions.delete_month_payloads",
  R"(DELETE FROM "Payloads" p USING "WorkflowExecutions" w
      WHERE w."startedAt" >= to_timestamp($1::bigint) AND w."startedAt" < to_timestamp($2::bigint)
        AND p."workflowId" = w."id")"};

constexpr statement delete_month_keys{
  "partitions.delete_month_keys",
  R"(DELETE FROM "IdempotencyKeys"
      WHERE "workflowStartedAt" >= to_timestamp($1::bigint)
        AND "workflowStartedAt" < to_timestamp($2::bigint))"};

params range_params(const range_partition& p) {
  return params::of(to_seconds(p.lo), to_seconds(p.hi));
}

caf::expected<bool> exists_flag(connection& conn, const statement& st, const params& p) {
  auto r = conn.run1(st, p);
  if (!r)
    return std::move(r.error());
  return r->boolean(0, r->column_named("found"));
}

// docs/schema.md §3 "Adopting rows from DEFAULT", used for every creation: with
// an empty DEFAULT it costs the same as CREATE … PARTITION OF (both scan DEFAULT
// under an ACCESS EXCLUSIVE lock), and one path is one path to test. The rows
// move by DELETE … RETURNING into a standalone table, never through the parent,
// so the WorkflowEvents NOTIFY trigger and the Timers id sequence are untouched.
// The parent's SHARE UPDATE EXCLUSIVE lock (self-conflicting, but not with DML)
// serialises creators of one table before they touch DEFAULT, so two of them can
// neither deadlock on it nor both create the same name.
std::string create_sql(const managed_table& t, const range_partition& p) {
  auto parent = quoted(t.parent);
  auto name = quoted(p.name);
  auto lo = literal(to_seconds(p.lo));
  auto hi = literal(to_seconds(p.hi));
  auto key = quoted(t.key);
  std::string unsampled;
  for (const char* column : t.unsampled)
    unsampled += (unsampled.empty() ? "ALTER TABLE " + name + " " : std::string{", "})
                 + "ALTER COLUMN " + quoted(column) + " SET STATISTICS 0";
  if (!unsampled.empty())
    unsampled += ";\n";
  auto head = std::string{lock_timeout} + ";\n"
              + "LOCK TABLE ONLY " + parent + " IN SHARE UPDATE EXCLUSIVE MODE;\n"
              // No IF NOT EXISTS: the loser of a race must fail, not claim the creation.
              + "CREATE TABLE " + name + " (LIKE " + parent
              + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)" + t.storage + ";\n" + unsampled;
  auto attach = "ALTER TABLE " + parent + " ATTACH PARTITION " + name + " FOR VALUES FROM ("
                + lo + ") TO (" + hi + ");\n"
                + "SELECT \"rename_partition_indexes\"('" + parent + "');";
  if (t.append_only)
    return head + "CREATE TRIGGER " + quoted(p.name + "_no_truncate_trg")
           + " BEFORE TRUNCATE ON " + name + " FOR EACH STATEMENT EXECUTE FUNCTION "
           + quoted(std::string{t.parent} + "_append_only") + "();\n" + attach;
  return head + "WITH moved AS (DELETE FROM " + quoted(std::string{t.parent} + "_default")
         + " WHERE " + key + " >= " + lo + " AND " + key + " < " + hi + " RETURNING *)\n"
         + "INSERT INTO " + name + " SELECT * FROM moved;\n" + attach;
}

// Parent first (ACCESS EXCLUSIVE, which DROP of a partition needs anyway), the
// same order as every query, so a drop cannot deadlock with readers.
caf::expected<void> lock_for_drop(connection& conn, const managed_table& t) {
  auto r = conn.exec(std::string{lock_timeout} + "; LOCK TABLE ONLY " + quoted(t.parent)
                     + " IN ACCESS EXCLUSIVE MODE");
  if (!r)
    return std::move(r.error());
  return {};
}

caf::expected<void> drop_table(connection& conn, const range_partition& p) {
  auto r = conn.exec("DROP TABLE " + quoted(p.name));
  if (!r)
    return std::move(r.error());
  return {};
}

enum class outcome { done, lost_race, kept };

} // namespace

partition_manager::partition_manager(partition_settings settings) : settings_(settings) {
}

std::optional<range_partition> parse_partition_name(std::string_view name) {
  for (const auto& t : managed_tables) {
    std::string_view parent{t.parent};
    if (name.size() <= parent.size() + 2 || name.substr(0, parent.size()) != parent
        || name.substr(parent.size(), 2) != "_y")
      continue;
    auto rest = name.substr(parent.size() + 2);
    // yYYYYmMM or yYYYYmMMdDDhHH, every field zero-padded.
    size_t want = t.hourly ? 4 + 3 + 3 + 3 : 4 + 3;
    if (rest.size() != want)
      return std::nullopt;
    auto digits = [&](size_t at, size_t n) -> std::optional<unsigned> {
      unsigned v = 0;
      for (size_t i = at; i < at + n; ++i) {
        if (rest[i] < '0' || rest[i] > '9')
          return std::nullopt;
        v = v * 10 + static_cast<unsigned>(rest[i] - '0');
      }
      return v;
    };
    auto y = digits(0, 4);
    if (!y || rest[4] != 'm')
      return std::nullopt;
    auto m = digits(5, 2);
    if (!m || *m < 1 || *m > 12)
      return std::nullopt;
    civil c{static_cast<int64_t>(*y), *m, 1, 0};
    if (t.hourly) {
      if (rest[7] != 'd' || rest[10] != 'h')
        return std::nullopt;
      auto d = digits(8, 2);
      auto h = digits(11, 2);
      if (!d || !h || *d < 1 || *h > 23)
        return std::nullopt;
      c.d = *d;
      c.h = *h;
    }
    auto lo = from_civil(c);
    // Rejects day 31 of a 30-day month and other names that only look right.
    if (partition_name_of(t.parent, lo, t.hourly) != name)
      return std::nullopt;
    return range_partition{t.parent, std::string{name}, from_seconds(lo),
                           from_seconds(add_periods(lo, 1, t.hourly))};
  }
  return std::nullopt;
}

caf::expected<std::vector<range_partition>> list_partitions(connection& conn,
                                                            const std::string& parent) {
  auto r = conn.run(list_partitions_st, params::of(quoted(parent)));
  if (!r)
    return std::move(r.error());
  std::vector<range_partition> out;
  const int relname = r->column_named("relname");
  for (int i = 0; i < r->rows(); ++i)
    if (auto p = parse_partition_name(r->text(i, relname)); p && p->parent == parent)
      out.push_back(std::move(*p));
  std::sort(out.begin(), out.end(),
            [](const range_partition& a, const range_partition& b) { return a.lo < b.lo; });
  return out;
}

caf::expected<std::chrono::system_clock::time_point> server_now(connection& conn) {
  auto r = conn.run1(server_now_st);
  if (!r)
    return std::move(r.error());
  return from_seconds(r->i64(0, r->column_named("now_s")));
}

std::vector<range_partition> partition_manager::wanted(time_point now) const {
  std::vector<range_partition> out;
  for (const auto& t : managed_tables) {
    auto first = period_start(to_seconds(now), t.hourly);
    int ahead = t.hourly ? settings_.hours_ahead : settings_.months_ahead;
    for (int i = 0; i <= ahead; ++i) {
      auto lo = add_periods(first, i, t.hourly);
      out.push_back(range_partition{t.parent, partition_name_of(t.parent, lo, t.hourly),
                                    from_seconds(lo), from_seconds(add_periods(lo, 1, t.hourly))});
    }
  }
  return out;
}

namespace {

caf::error invalid_settings(const partition_settings& s) {
  if (s.months_ahead < 0 || s.hours_ahead < 0)
    return make_error(errc::invalid, "partition lookahead (months_ahead, hours_ahead) must be "
                                     ">= 0");
  if (s.months_retained < 1 || s.history_months_retained < 1 || s.hours_retained < 1
      || s.audit_months_retained < 1)
    return make_error(errc::invalid, "partition retention (months_retained, "
                                     "history_months_retained, hours_retained, "
                                     "audit_months_retained) must be >= 1");
  return {};
}

std::string with_progress(const caf::error& err, const std::vector<std::string>& done,
                          const char* verb) {
  auto msg = message_of(err);
  if (!done.empty()) {
    msg += " (this call " + std::string{verb} + ":";
    for (const auto& n : done)
      msg += " " + n;
    msg += ")";
  }
  return msg;
}

caf::error partition_error(const caf::error& err, const std::string& what,
                           const std::vector<std::string>& done, const char* verb) {
  return make_error(code_of(err), what + ": " + with_progress(err, done, verb),
                    sqlstate_of(err));
}

} // namespace

caf::expected<std::vector<std::string>> partition_manager::ensure_ahead(connection& conn,
                                                                        time_point now) {
  if (auto err = invalid_settings(settings_))
    return err;
  std::vector<std::string> created;
  auto wanted_now = wanted(now);
  for (const auto& t : managed_tables) {
    auto existing = list_partitions(conn, t.parent);
    if (!existing)
      return partition_error(existing.error(), std::string{"listing partitions of "} + t.parent,
                             created, "created");
    for (const auto& p : wanted_now) {
      if (p.parent != t.parent)
        continue;
      if (std::any_of(existing->begin(), existing->end(),
                      [&](const range_partition& e) { return e.name == p.name; }))
        continue;
      auto sql = create_sql(t, p);
      auto r = perform(conn, [&](transaction& tx) -> caf::expected<void> {
        if (auto x = tx.conn().exec(sql); !x)
          return std::move(x.error());
        return {};
      });
      if (r) {
        created.push_back(p.name);
      } else if (!is_lost_create_race(r.error())) {
        return partition_error(r.error(), "creating partition " + p.name + " ["
                                            + iso(to_seconds(p.lo)) + ", "
                                            + iso(to_seconds(p.hi)) + ")",
                               created, "created");
      }
    }
  }
  return created;
}

namespace {

// Each returns `done` when this call dropped the partition, `lost_race` when
// another caller had, `kept` when it must stay.
caf::expected<outcome> drop_timers(connection& conn, const managed_table& t,
                                   const range_partition& p, int64_t now, int64_t& moved) {
  int64_t moved_here = 0;
  auto r = perform(conn, [&](transaction& tx) -> caf::expected<void> {
    if (auto l = lock_for_drop(tx.conn(), t); !l)
      return l;
    // A pending timer is never lost with its hour: it moves to fire now, and
    // the firing re-check (I6) decides whether its deadline still applies.
    auto m = tx.conn().run(move_pending_timers, params::of(to_seconds(p.lo), to_seconds(p.hi), now));
    if (!m)
      return std::move(m.error());
    moved_here = m->affected();
    return drop_table(tx.conn(), p);
  });
  if (!r)
    return is_lost_drop_race(r.error()) ? caf::expected<outcome>{outcome::lost_race}
                                        : caf::expected<outcome>{std::move(r.error())};
  moved += moved_here;
  return outcome::done;
}

caf::expected<outcome> drop_executions(connection& conn, const managed_table& t,
                                       const range_partition& p) {
  auto active = exists_flag(conn, active_in_month, range_params(p));
  if (!active)
    return std::move(active.error());
  if (*active)
    return outcome::kept;
  // Most of the month's tasks go before the table lock, so the locked
  // transaction below stays short; it sweeps whatever is left.
  if (auto d = conn.run(delete_month_tasks, range_params(p)); !d)
    return std::move(d.error());
  if (auto d = conn.run(delete_month_payloads, range_params(p)); !d)
    return std::move(d.error());
  bool kept = false;
  auto r = perform(conn, [&](transaction& tx) -> caf::expected<void> {
    kept = false;
    if (auto l = lock_for_drop(tx.conn(), t); !l)
      return l;
    auto again = exists_flag(tx.conn(), active_in_month, range_params(p));
    if (!again)
      return std::move(again.error());
    if (*again) {
      kept = true; // reopened meanwhile (rerun/retry): keep it
      return {};
    }
    if (auto d = tx.conn().run(delete_month_tasks, range_params(p)); !d)
      return std::move(d.error());
    if (auto d = tx.conn().run(delete_month_payloads, range_params(p)); !d)
      return std::move(d.error());
    if (auto d = tx.conn().run(delete_month_keys, range_params(p)); !d)
      return std::move(d.error());
    return drop_table(tx.conn(), p);
  });
  if (!r)
    return is_lost_drop_race(r.error()) ? caf::expected<outcome>{outcome::lost_race}
                                        : caf::expected<outcome>{std::move(r.error())};
  return kept ? outcome::kept : outcome::done;
}

// A month dropped whole (an audit month past retention, or an events month nothing running
// needs): DROP TABLE is the one way its rows leave (no row trigger fires on it).
caf::expected<outcome> drop_whole(connection& conn, const managed_table& t,
                                  const range_partition& p) {
  auto r = perform(conn, [&](transaction& tx) -> caf::expected<void> {
    if (auto l = lock_for_drop(tx.conn(), t); !l)
      return l;
    return drop_table(tx.conn(), p);
  });
  if (!r)
    return is_lost_drop_race(r.error()) ? caf::expected<outcome>{outcome::lost_race}
                                        : caf::expected<outcome>{std::move(r.error())};
  return outcome::done;
}

caf::expected<outcome> drop_events(connection& conn, const managed_table& t,
                                   const range_partition& p) {
  // A workflow still running keeps every event month since its start.
  auto active = exists_flag(conn, active_started_before, params::of(to_seconds(p.hi)));
  if (!active)
    return std::move(active.error());
  if (*active)
    return outcome::kept;
  return drop_whole(conn, t, p);
}

} // namespace

caf::expected<drop_report> partition_manager::drop_expired(connection& conn, time_point now) {
  if (auto err = invalid_settings(settings_))
    return err;
  drop_report report;
  auto now_s = to_seconds(now);
  for (const auto& t : managed_tables) {
    auto existing = list_partitions(conn, t.parent);
    if (!existing)
      return partition_error(existing.error(), std::string{"listing partitions of "} + t.parent,
                             report.dropped, "dropped");
    // Whole periods: the current one plus `retained` before it stay.
    auto retained = t.hourly        ? settings_.hours_retained
                    : t.append_only ? settings_.audit_months_retained
                    : std::string_view{t.parent} == "WorkflowEvents"
                      ? settings_.history_months_retained
                      : settings_.months_retained;
    auto horizon = add_periods(period_start(now_s, t.hourly), -retained, t.hourly);
    for (const auto& p : *existing) {
      if (to_seconds(p.hi) > horizon)
        break; // sorted by lo, so every later one is younger
      caf::expected<outcome> r = outcome::done;
      if (t.hourly)
        r = drop_timers(conn, t, p, now_s, report.timers_moved);
      else if (std::string_view{t.parent} == "WorkflowExecutions")
        r = drop_executions(conn, t, p);
      else if (t.append_only)
        r = drop_whole(conn, t, p);
      else
        r = drop_events(conn, t, p);
      if (!r)
        return partition_error(r.error(), "dropping partition " + p.name, report.dropped,
                               "dropped");
      if (*r == outcome::done)
        report.dropped.push_back(p.name);
      else if (*r == outcome::kept)
        report.kept.push_back(kept_partition{p.name, "holds running or paused workflows"});
    }
  }
  return report;
}

} // namespace nf::store
