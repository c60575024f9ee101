#include "store/schema/migrator.hpp"

#include <cctype>
#include <map>
#include <string_view>

#include "store/schema/capabilities.hpp"
#include "proto/errors.hpp"
#include "store/pg/transaction.hpp"

namespace nf::store {

namespace {

// The migrator's own bookkeeping table; not a migration, since it must exist
// before the first one runs.
constexpr statement create_ledger{
  "migrate.create_ledger",
  R"(CREATE TABLE IF NOT EXISTS "SchemaMigrations" (
       "name" TEXT PRIMARY KEY,
       "checksum" TEXT NOT NULL,
       "appliedAt" TIMESTAMPTZ NOT NULL DEFAULT now()))"};

constexpr statement ledger_exists{"migrate.ledger_exists",
                                  R"(SELECT to_regclass('"SchemaMigrations"') IS NOT NULL AS ledger)"};

constexpr statement read_ledger{
  "migrate.read_ledger",
  R"(SELECT "name", "checksum", "appliedAt"::text FROM "SchemaMigrations" ORDER BY "name")"};

constexpr statement record_applied{
  "migrate.record_applied",
  R"(INSERT INTO "SchemaMigrations" ("name", "checksum")
     VALUES ($1, encode(sha256(convert_to($2, 'UTF8')), 'hex')))"};

constexpr statement forget_applied{"migrate.forget_applied",
                                   R"(DELETE FROM "SchemaMigrations" WHERE "name" = $1)"};

constexpr statement checksums{
  "migrate.checksums",
  R"(SELECT t.name, encode(sha256(convert_to(t.sql, 'UTF8')), 'hex') AS checksum
     FROM unnest($1::text[], $2::text[]) AS t(name, sql))"};

// One key for every nodeflow migrator against this database.
constexpr statement take_lock{"migrate.lock", "SELECT pg_advisory_lock(7315003412)"};
constexpr statement release_lock{"migrate.unlock", "SELECT pg_advisory_unlock(7315003412)"};

struct ledger_row {
  std::string checksum;
  std::string applied_at;
};

caf::expected<std::map<std::string, ledger_row>> load_ledger(connection& conn) {
  std::map<std::string, ledger_row> out;
  auto exists = conn.run1(ledger_exists);
  if (!exists)
    return std::move(exists.error());
  if (!exists->boolean(0, exists->column_named("ledger")))
    return out;
  auto rows = conn.run(read_ledger);
  if (!rows)
    return std::move(rows.error());
  const int name = rows->column_named("name"), checksum = rows->column_named("checksum"),
            applied_at = rows->column_named("appliedAt");
  for (int i = 0; i < rows->rows(); ++i)
    out[rows->str(i, name)] = ledger_row{rows->str(i, checksum), rows->str(i, applied_at)};
  return out;
}

caf::expected<std::map<std::string, std::string>>
manifest_checksums(connection& conn, const std::vector<migration>& manifest) {
  std::vector<std::string> names, sqls;
  for (const auto& m : manifest) {
    names.push_back(m.name);
    sqls.push_back(checksum_text(m.up));
  }
  auto rows = conn.run(checksums, params::of(text_array(names), text_array(sqls)));
  if (!rows)
    return std::move(rows.error());
  std::map<std::string, std::string> out;
  const int name = rows->column_named("name"), checksum = rows->column_named("checksum");
  for (int i = 0; i < rows->rows(); ++i)
    out[rows->str(i, name)] = rows->str(i, checksum);
  return out;
}

// Whether a ledger row's checksum stands for migration `m` of this build, whose checksum
// is `current`: it is that checksum, or one an earlier build recorded for the same SQL.
bool accepted(const migration& m, const std::string& current, const std::string& recorded) {
  if (recorded == current)
    return true;
  for (const auto& l : m.legacy)
    if (l.recorded == recorded && l.current == current)
      return true;
  return false;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// A character an identifier or a keyword may hold (a `$` after one is not a dollar quote).
bool is_word(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) != 0 || c == '_' || c == '$' || u >= 0x80;
}

// The length of the dollar-quote tag (`$$`, `$body$`) at sql[i], or 0 when there is none.
size_t dollar_tag(std::string_view sql, size_t i) {
  if (sql[i] != '$' || (i > 0 && is_word(sql[i - 1])))
    return 0;
  size_t j = i + 1;
  if (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j])) != 0)
    return 0; // a parameter, $1
  while (j < sql.size() && sql[j] != '$' && is_word(sql[j]))
    ++j;
  return j < sql.size() && sql[j] == '$' ? j + 1 - i : 0;
}

// The end of the quoted text that starts at sql[i] (a quote or a dollar tag).
size_t quoted_end(std::string_view sql, size_t i) {
  if (auto tag = dollar_tag(sql, i); tag > 0) {
    auto close = sql.find(sql.substr(i, tag), i + tag);
    return close == std::string_view::npos ? sql.size() : close + tag;
  }
  const char q = sql[i];
  // E'…' takes backslash escapes; every quoted text doubles its quote.
  const bool escapes = q == '\'' && i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e')
                       && (i < 2 || !is_word(sql[i - 2]));
  size_t j = i + 1;
  while (j < sql.size()) {
    if (escapes && sql[j] == '\\') {
      j += 2;
    } else if (sql[j] == q) {
      if (j + 1 < sql.size() && sql[j + 1] == q)
        j += 2;
      else
        return j + 1;
    } else {
      ++j;
    }
  }
  return sql.size();
}

caf::expected<void> run_script(connection& conn, const std::string& sql, const std::string& what) {
  auto r = conn.exec(sql);
  if (!r)
    return make_error(code_of(r.error()), what + ": " + message_of(r.error()),
                      sqlstate_of(r.error()));
  return {};
}

} // namespace

std::string checksum_text(const std::string& text) {
  std::string_view sql{text};
  std::string out;
  bool gap = false; // whitespace or a comment since the last token
  auto take = [&](size_t from, size_t to) {
    if (gap && !out.empty())
      out += ' ';
    gap = false;
    out.append(sql.substr(from, to - from));
  };
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
    if (is_space(c)) {
      gap = true;
      ++i;
    } else if (c == '-' && next == '-') {
      i = sql.find('\n', i);
      i = i == std::string_view::npos ? sql.size() : i;
      gap = true;
    } else if (c == '/' && next == '*') { // block comments nest
      int depth = 0;
      while (i < sql.size()) {
        if (sql.compare(i, 2, "/*") == 0) {
          ++depth;
          i += 2;
        } else if (sql.compare(i, 2, "*/") == 0) {
          i += 2;
          if (--depth == 0)
            break;
        } else {
          ++i;
        }
      }
      gap = true;
    } else if (c == '\'' || c == '"' || dollar_tag(sql, i) > 0) {
      auto end = quoted_end(sql, i);
      take(i, end);
      i = end;
    } else {
      take(i, i + 1);
      ++i;
    }
  }
  return out;
}

caf::expected<void> migrator::lock(connection& conn) {
  if (auto r = conn.run(take_lock); !r)
    return std::move(r.error());
  return {};
}

void migrator::unlock(connection& conn) {
  (void) conn.run(release_lock);
}

caf::expected<void> migrator::verify(connection& conn) {
  auto ledger = load_ledger(conn);
  if (!ledger)
    return std::move(ledger.error());
  auto sums = manifest_checksums(conn, manifest_);
  if (!sums)
    return std::move(sums.error());
  std::map<std::string, const migration*> by_name;
  for (const auto& m : manifest_)
    by_name[m.name] = &m;
  for (const auto& [name, row] : *ledger) {
    auto it = sums->find(name);
    if (it == sums->end())
      return make_error(errc::invalid, "the database has migration " + name
                                         + " applied, which this nodeflow build does not know; "
                                           "run a newer nodeflow");
    if (!accepted(*by_name.at(name), it->second, row.checksum))
      return make_error(errc::invalid,
                        "migration " + name + " was changed after it was applied (checksum "
                          + row.checksum.substr(0, 12) + " in the database, "
                          + it->second.substr(0, 12)
                          + " in this build); add a new migration instead of editing it");
  }
  return {};
}

caf::expected<std::vector<std::string>> migrator::up(connection& conn,
                                                     const progress_fn& progress) {
  if (auto caps = check_capabilities(conn); !caps)
    return std::move(caps.error());
  // A migration may wait for another node's migration (the lock) and rebuild a big table:
  // no statement or lock timeout while it runs; RESET brings back the connection's own.
  if (auto t = conn.exec("SET statement_timeout = 0; SET lock_timeout = 0"); !t)
    return std::move(t.error());
  auto reset = [&] { (void) conn.exec("RESET statement_timeout; RESET lock_timeout"); };
  if (auto l = lock(conn); !l) {
    reset();
    return std::move(l.error());
  }
  auto done = [&](caf::expected<std::vector<std::string>> value) {
    unlock(conn);
    reset();
    return value;
  };
  if (auto r = conn.run(create_ledger); !r)
    return done(std::move(r.error()));
  if (auto v = verify(conn); !v)
    return done(std::move(v.error()));
  auto ledger = load_ledger(conn);
  if (!ledger)
    return done(std::move(ledger.error()));
  std::vector<std::string> applied;
  for (const auto& m : manifest_) {
    if (ledger->count(m.name))
      continue;
    if (progress)
      progress("applying " + m.name + (m.transactional ? "" : " (outside a transaction)"));
    caf::expected<void> outcome;
    if (m.transactional) {
      outcome = perform(conn, [&](transaction& tx) -> caf::expected<void> {
        if (auto s = run_script(tx.conn(), m.up, m.name); !s)
          return s;
        if (auto r = tx.conn().run(record_applied, params::of(m.name, checksum_text(m.up))); !r)
          return std::move(r.error());
        return {};
      });
    } else {
      outcome = run_script(conn, m.up, m.name);
      if (outcome) {
        if (auto r = conn.run(record_applied, params::of(m.name, checksum_text(m.up))); !r)
          outcome = std::move(r.error());
      }
    }
    if (!outcome)
      return done(make_error(code_of(outcome.error()),
                             "migration " + m.name + " failed and was rolled back: "
                               + message_of(outcome.error()),
                             sqlstate_of(outcome.error())));
    applied.push_back(m.name);
  }
  return done(std::move(applied));
}

caf::expected<std::vector<std::string>> migrator::down_all(connection& conn,
                                                           const progress_fn& progress) {
  if (auto l = lock(conn); !l)
    return std::move(l.error());
  auto done = [&](caf::expected<std::vector<std::string>> value) {
    unlock(conn);
    return value;
  };
  if (auto v = verify(conn); !v)
    return done(std::move(v.error()));
  auto ledger = load_ledger(conn);
  if (!ledger)
    return done(std::move(ledger.error()));
  std::vector<std::string> reverted;
  for (auto it = manifest_.rbegin(); it != manifest_.rend(); ++it) {
    const auto& m = *it;
    if (!ledger->count(m.name))
      continue;
    if (progress)
      progress("reverting " + m.name);
    auto outcome = perform(conn, [&](transaction& tx) -> caf::expected<void> {
      if (auto s = run_script(tx.conn(), m.down, m.name + " (down)"); !s)
        return s;
      if (auto r = tx.conn().run(forget_applied, params::of(m.name)); !r)
        return std::move(r.error());
      return {};
    });
    if (!outcome)
      return done(std::move(outcome.error()));
    reverted.push_back(m.name);
  }
  return done(std::move(reverted));
}

caf::expected<std::vector<migration_state>> migrator::status(connection& conn) {
  auto ledger = load_ledger(conn);
  if (!ledger)
    return std::move(ledger.error());
  auto sums = manifest_checksums(conn, manifest_);
  if (!sums)
    return std::move(sums.error());
  std::vector<migration_state> out;
  for (const auto& m : manifest_) {
    migration_state s;
    s.name = m.name;
    if (auto it = ledger->find(m.name); it != ledger->end()) {
      s.applied = true;
      s.applied_at = it->second.applied_at;
      s.checksum_matches = accepted(m, (*sums)[m.name], it->second.checksum);
      ledger->erase(it);
    }
    out.push_back(std::move(s));
  }
  for (const auto& [name, row] : *ledger) {
    migration_state s;
    s.name = name;
    s.applied = true;
    s.applied_at = row.applied_at;
    s.checksum_matches = false; // unknown to this build
    out.push_back(std::move(s));
  }
  return out;
}

caf::expected<readiness_report> readiness(connection& conn,
                                          const std::vector<migration>& manifest) {
  readiness_report report;
  auto caps = check_capabilities(conn);
  if (!caps) {
    report.lines.push_back("server: NOT READY: " + message_of(caps.error()));
    return report;
  }
  report.lines.push_back("server: PostgreSQL " + caps->version + " (server_version_num "
                         + std::to_string(caps->version_num) + "), uuidv7() ok, io_method="
                         + caps->io_method);
  migrator m{manifest};
  auto states = m.status(conn);
  if (!states)
    return std::move(states.error());
  size_t applied = 0, changed = 0, unknown = 0;
  std::vector<std::string> pending;
  for (size_t i = 0; i < states->size(); ++i) {
    const auto& s = (*states)[i];
    bool known = i < manifest.size();
    if (!known)
      ++unknown;
    else if (s.applied && !s.checksum_matches)
      ++changed;
    if (s.applied && known)
      ++applied;
    if (!s.applied)
      pending.push_back(s.name);
  }
  report.lines.push_back("migrations: " + std::to_string(applied) + " of "
                         + std::to_string(manifest.size()) + " applied");
  for (const auto& p : pending)
    report.lines.push_back("  pending: " + p);
  if (changed > 0)
    report.lines.push_back("  " + std::to_string(changed)
                           + " applied migration(s) changed since they were applied");
  if (unknown > 0)
    report.lines.push_back("  " + std::to_string(unknown)
                           + " applied migration(s) unknown to this build");
  report.ready = pending.empty() && changed == 0 && unknown == 0;
  report.lines.push_back(report.ready ? "ready: yes" : "ready: no");
  return report;
}

} // namespace nf::store
