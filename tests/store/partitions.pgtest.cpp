#define CAF_SUITE store.partitions
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "store/schema/partitions.hpp"
#include "proto/errors.hpp"
#include "tests/support/check_saying.hpp"
#include "tests/support/notifications.hpp"
#include "tests/support/test_database.hpp"

using namespace nf::store;
using std::chrono::system_clock;

namespace {

using time_point = system_clock::time_point;

int64_t secs(time_point t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

time_point mid(const range_partition& p) {
  return p.lo + (p.hi - p.lo) / 2;
}

// Runs fn(conns[i]) for every connection on its own thread, all released
// together by a barrier, so the callers really race; results in order.
template <class F>
auto race(std::vector<connection>& conns, F fn) {
  using result_type = decltype(fn(conns[0]));
  std::mutex mx;
  std::condition_variable cv;
  size_t waiting = conns.size();
  std::vector<std::optional<result_type>> slots(conns.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < conns.size(); ++i)
    threads.emplace_back([&, i] {
      {
        std::unique_lock<std::mutex> guard{mx};
        if (--waiting == 0)
          cv.notify_all();
        else
          cv.wait(guard, [&] { return waiting == 0; });
      }
      slots[i].emplace(fn(conns[i]));
    });
  for (auto& t : threads)
    t.join();
  std::vector<result_type> out;
  for (auto& r : slots)
    out.push_back(std::move(*r));
  return out;
}

struct key_column {
  const char* parent;
  const char* key;
  const char* name_format; // to_char format of the partition suffix
};

constexpr key_column keyed[] = {
  {"WorkflowExecutions", "startedAt", R"("y"YYYY"m"MM)"},
  {"WorkflowEvents", "at", R"("y"YYYY"m"MM)"},
  {"Timers", "fireAt", R"("y"YYYY"m"MM"d"DD"h"HH24)"},
};

struct fixture {
  nf::test::test_database db{"partitions"};
  connection conn = db.connect();

  std::string one(const std::string& sql, const params& p = {}) {
    auto r = conn.exec(sql, p);
    CAF_REQUIRE(r);
    CAF_REQUIRE_EQUAL(r->rows(), 1);
    return r->str(0, 0);
  }

  void run(const std::string& sql, const params& p = {}) {
    auto r = conn.exec(sql, p);
    if (!r)
      CAF_FAIL(sql << ": " << nf::message_of(r.error()));
  }

  time_point now() {
    auto t = server_now(conn);
    CAF_REQUIRE(t);
    return *t;
  }

  std::set<std::string> partitions() {
    std::set<std::string> out;
    // "AuditEvents" has no DEFAULT to adopt from (migration 0024): managed, but not keyed here.
    std::vector<std::string> parents{"AuditEvents"};
    for (const auto& k : keyed)
      parents.emplace_back(k.parent);
    for (const auto& parent : parents) {
      auto ps = list_partitions(conn, parent);
      CAF_REQUIRE(ps);
      for (auto& p : *ps)
        out.insert(p.name);
    }
    return out;
  }

  // Inserted straight into the parent: with no partition for `at` yet the row
  // lands in DEFAULT, exactly as a live workflow's far-out rows do.
  std::string add_execution(time_point at, const char* status) {
    return one(R"(WITH n AS (SELECT uuidv7(to_timestamp($1::bigint) - clock_timestamp()) AS id)
                  INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId", "workflowName",
                                                    "workflowVersion", "shard", "status", "endedAt")
                  SELECT id, uuid_extract_timestamp(id), '00000000-0000-0000-0000-000000000001',
                         'wf', 1, 0, $2::workflow_execution_status,
                         CASE WHEN $2 IN ('RUNNING', 'PAUSED') THEN NULL ELSE now() END
                    FROM n RETURNING "id")",
               params::of(secs(at), std::string{status}));
  }

  void add_events(time_point at, int n) {
    run(R"(INSERT INTO "WorkflowEvents" ("workflowId", "seq", "at", "namespaceId", "eventType")
           SELECT w, s, to_timestamp($1::bigint), '00000000-0000-0000-0000-000000000001',
                  'TASK_SCHEDULED'
             FROM (SELECT uuidv7() AS w) x, generate_series(1, $2::int) s)",
        params::of(secs(at), n));
  }

  std::string add_timer(time_point at, bool claimed) {
    return one(R"(WITH n AS (SELECT uuidv7() AS w)
                  INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt",
                                        "claimedAt")
                  SELECT to_timestamp($1::bigint), 0, 'workflowTimeout', w, uuid_extract_timestamp(w),
                         CASE WHEN $2 THEN now() END
                    FROM n RETURNING "id")",
               params::of(secs(at), claimed));
  }

  // Every row of `parent` and its content: nothing may be lost or changed.
  std::string fingerprint(const char* parent) {
    return one(std::string{"SELECT count(*)::text || ':' || coalesce(md5(string_agg(t::text, '|' "
                           "ORDER BY t::text)), '') FROM \""}
               + parent + "\" t");
  }

  // Rows not in the partition their key names (or DEFAULT when that does not exist).
  int64_t misplaced(const key_column& k) {
    return std::stoll(one(std::string{"SELECT count(*) FROM \""} + k.parent + "\" t WHERE t.tableoid"
                          + " <> coalesce(to_regclass(quote_ident('" + k.parent + "_' || to_char(t.\""
                          + k.key + "\" AT TIME ZONE 'UTC', '" + k.name_format + "'))), '\""
                          + k.parent + "_default\"'::regclass)"));
  }

  int64_t in_default(const key_column& k) {
    return std::stoll(
      one(std::string{"SELECT count(*) FROM \""} + k.parent + "_default\""));
  }

  int64_t count(const std::string& sql, const params& p = {}) {
    return std::stoll(one(sql, p));
  }
};

} // namespace

CAF_TEST(partition names parse back to their bounds and nothing else parses) {
  auto p = parse_partition_name("Timers_y2026m11d30h06");
  CAF_REQUIRE(p);
  CAF_CHECK_EQUAL(p->parent, "Timers");
  CAF_CHECK_EQUAL(secs(p->lo), 1796018400); // 2026-11-30 06:00:00+00
  CAF_CHECK_EQUAL(secs(p->hi) - secs(p->lo), 3600);
  auto m = parse_partition_name("WorkflowEvents_y2026m12");
  CAF_REQUIRE(m);
  CAF_CHECK_EQUAL(secs(m->lo), 1796083200); // 2026-12-01
  CAF_CHECK_EQUAL(secs(m->hi), 1798761600); // 2027-01-01
  for (const char* bad : {"Timers_default", "Timers_y2026m11", "Timers_y2026m11d31h00",
                          "WorkflowExecutions_y2026m13", "WorkflowExecutions_y2026m1",
                          "TaskExecutions_p3", "Timers_y2026m11d30h24", "Timersy2026m11d30h06"})
    CHECK_SAYING(!parse_partition_name(bad), bad);
}

CAF_TEST_FIXTURE_SCOPE(partition_tests, fixture)

CAF_TEST(the migrations already created what ensure_ahead wants at their time) {
  partition_manager mgr{partition_settings{2, 48, 12, 48}}; // the migrations' own lookahead
  auto created = mgr.ensure_ahead(conn, now());
  CAF_REQUIRE(created);
  // The migrations ran seconds ago; only an hour boundary in between adds one.
  CAF_CHECK_LESS_OR_EQUAL(created->size(), 1u);
  for (const auto& k : keyed)
    CAF_CHECK_EQUAL(misplaced(k), 0);
}

CAF_TEST(four concurrent callers create and report each partition once and adopt DEFAULT) {
  constexpr int callers = 4;
  std::vector<connection> conns;
  for (int i = 0; i < callers; ++i)
    conns.push_back(db.connect());
  auto listener = db.connect();
  partition_manager mgr;
  auto base = now();
  // Live rows in the partitions the migrations made.
  add_execution(base, "RUNNING");
  add_events(base, 3);
  add_timer(base + std::chrono::minutes{30}, false);
  using std::chrono::hours;
  const time_point rounds[] = {base + hours{24 * 150}, base + hours{24 * 285 + 13},
                               base + hours{24 * 430 + 7}};
  int round = 0;
  for (auto when : rounds) {
    ++round;
    CAF_MESSAGE("round " << round);
    auto wanted = mgr.wanted(when);
    auto before = partitions();
    std::set<std::string> missing;
    for (const auto& p : wanted)
      if (!before.count(p.name))
        missing.insert(p.name);
    CAF_REQUIRE(!missing.empty());
    // Rows already waiting in DEFAULT for partitions about to be created, plus
    // rows further out than the lookahead, which must stay in DEFAULT.
    int nth_timer = 0;
    for (const auto& p : wanted) {
      if (!missing.count(p.name))
        continue;
      auto m = mid(p);
      if (p.parent == "WorkflowExecutions") {
        add_execution(m, "RUNNING");
        add_execution(m, "COMPLETED");
      } else if (p.parent == "WorkflowEvents") {
        add_events(m, 2);
      } else if (nth_timer++ % 6 == 0) {
        add_timer(m, false);
        add_timer(m, true);
      }
    }
    auto last = wanted.back(); // the last Timers hour
    add_timer(last.hi + std::chrono::hours{5}, false);
    add_execution(when + hours{24 * 200}, "RUNNING");
    add_events(when + hours{24 * 200}, 1);
    std::map<std::string, std::string> prints;
    std::map<std::string, int64_t> defaults;
    for (const auto& k : keyed) {
      prints[k.parent] = fingerprint(k.parent);
      defaults[k.parent] = in_default(k);
    }
    CAF_REQUIRE(listener.exec("LISTEN node_flow_workflow_events"));
    auto results = race(conns, [&](connection& c) { return mgr.ensure_ahead(c, when); });
    std::vector<std::string> reported;
    for (int i = 0; i < callers; ++i) {
      if (!results[i]) {
        CAF_FAIL("caller " << i << ": " << nf::message_of(results[i].error()));
        continue;
      }
      CAF_MESSAGE("caller " << i << " created " << results[i]->size());
      reported.insert(reported.end(), results[i]->begin(), results[i]->end());
    }
    std::sort(reported.begin(), reported.end());
    auto dup = std::adjacent_find(reported.begin(), reported.end());
    CHECK_SAYING(dup == reported.end(),
                 "reported twice: " << (dup == reported.end() ? std::string{} : *dup));
    CAF_CHECK_EQUAL(std::set<std::string>(reported.begin(), reported.end()), missing);
    CAF_CHECK_EQUAL(reported.size(), missing.size());
    auto after = partitions();
    for (const auto& p : wanted)
      CHECK_SAYING(after.count(p.name), "missing " << p.name);
    for (const auto& k : keyed) {
      CAF_CHECK_EQUAL(misplaced(k), 0);
      CAF_CHECK_EQUAL(fingerprint(k.parent), prints[k.parent]);
      CAF_CHECK_LESS(in_default(k), defaults[k.parent]); // something was adopted
      CAF_CHECK_GREATER(in_default(k), 0);                // and the far-out rows stayed
    }
    // A control event written after the race: notifications arrive in commit
    // order, so once it is seen, any NOTIFY a moved event fired has been too.
    auto control = one(R"(INSERT INTO "WorkflowEvents" ("workflowId", "seq", "namespaceId", "eventType")
                          VALUES (uuidv7(), 1, '00000000-0000-0000-0000-000000000001',
                                  'WORKFLOW_STARTED')
                          RETURNING "workflowId"::text || ':' || "seq")");
    auto seen = nf::test::notifications_until(listener, control);
    CAF_CHECK_EQUAL(seen, std::vector<std::string>{control});
    CAF_REQUIRE(listener.exec("UNLISTEN *"));
    // The partition-local index names follow the rule (rename_partition_indexes ran).
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM pg_indexes WHERE tablename = $1
                              AND indexname = $1 || '_due_idx')",
                          params::of(last.name)),
                    1);
    // Every execution partition, old or new, keeps room for HOT updates (migration 0012).
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                              WHERE i.inhparent = '"WorkflowExecutions"'::regclass
                                AND NOT coalesce(c.reloptions @> '{fillfactor=70}', false))"),
                    0);
    CAF_CHECK_GREATER(count(R"(SELECT count(*) FROM pg_inherits
                                WHERE inhparent = '"WorkflowExecutions"'::regclass)"),
                      4);
    // Every partition, old or new, leaves its JSON bodies out of ANALYZE (migration 0016).
    CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM pg_inherits i
                              JOIN pg_attribute a ON a.attrelid = i.inhrelid
                             WHERE (i.inhparent = '"WorkflowExecutions"'::regclass
                                    AND a.attname IN ('input', 'output', 'variables')
                                 OR i.inhparent = '"WorkflowEvents"'::regclass
                                    AND a.attname = 'payload')
                               AND a.attstattarget IS DISTINCT FROM 0)"),
                    0);
  }
}

CAF_TEST(drop_expired drops only expired partitions and keeps pending timers) {
  partition_manager mgr;
  auto base = now();
  using std::chrono::hours;
  // Timers: 60 hours on, the hours before (base + 12 h) are past retention.
  auto later = base + hours{60};
  CAF_REQUIRE(mgr.ensure_ahead(conn, later));
  auto timers_before = list_partitions(conn, "Timers");
  CAF_REQUIRE(timers_before);
  std::set<std::string> expired, young;
  auto horizon = secs(later) / 3600 * 3600 - 48 * 3600;
  for (const auto& p : *timers_before)
    (secs(p.hi) <= horizon ? expired : young).insert(p.name);
  CAF_REQUIRE_GREATER(expired.size(), 5u);
  auto hour_of = [&](int h) {
    for (const auto& p : *timers_before)
      if (p.lo <= base + hours{h} && base + hours{h} < p.hi)
        return p;
    CAF_FAIL("no partition for hour " << h);
    return range_partition{};
  };
  auto pending = add_timer(mid(hour_of(1)), false);
  auto fired = add_timer(mid(hour_of(2)), true);
  auto young_timer = add_timer(mid(hour_of(40)), false);
  // Three callers at once: each expired partition is dropped and reported once.
  std::vector<connection> conns;
  for (int i = 0; i < 3; ++i)
    conns.push_back(db.connect());
  auto results = race(conns, [&](connection& c) { return mgr.drop_expired(c, later); });
  std::vector<std::string> dropped;
  int64_t moved = 0;
  for (auto& r : results) {
    CAF_REQUIRE(r);
    dropped.insert(dropped.end(), r->dropped.begin(), r->dropped.end());
    moved += r->timers_moved;
    CAF_CHECK(r->kept.empty());
  }
  std::sort(dropped.begin(), dropped.end());
  CAF_CHECK(std::adjacent_find(dropped.begin(), dropped.end()) == dropped.end());
  CAF_CHECK_EQUAL(std::set<std::string>(dropped.begin(), dropped.end()), expired);
  auto timers_after = list_partitions(conn, "Timers");
  CAF_REQUIRE(timers_after);
  std::set<std::string> left;
  for (const auto& p : *timers_after)
    left.insert(p.name);
  CAF_CHECK_EQUAL(left, young);
  // The pending timer moved to fire at `later`, same id; the claimed one went with its hour.
  CAF_CHECK_EQUAL(moved, 1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "id" = $1 AND "claimedAt" IS NULL
                            AND "fireAt" = to_timestamp($2::bigint))",
                        params::of(pending, secs(later))),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "id" = $1)", params::of(fired)), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Timers" WHERE "id" = $1)", params::of(young_timer)),
                  1);

  // Months: 14 months on, the current month and the next are past retention.
  // The next one holds a RUNNING workflow: it and its events stay.
  auto month0 = *parse_partition_name(
    one(R"(SELECT 'WorkflowExecutions_' || to_char(now() AT TIME ZONE 'UTC', '"y"YYYY"m"MM'))"));
  auto month1 = *parse_partition_name(one(
    R"(SELECT 'WorkflowExecutions_' || to_char(now() AT TIME ZONE 'UTC' + interval '1 month', '"y"YYYY"m"MM'))"));
  auto done_wf = add_execution(mid(month0), "COMPLETED");
  run(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType", "taskDefName")
         VALUES ($1, '00000000-0000-0000-0000-000000000001', 't1', 'SIMPLE', 't'))",
      params::of(done_wf));
  run(R"(INSERT INTO "IdempotencyKeys" ("namespaceId", "key", "workflowId", "workflowStartedAt")
         VALUES ('00000000-0000-0000-0000-000000000001', 'k1', $1, uuid_extract_timestamp($1::uuid)))",
      params::of(done_wf));
  auto running_wf = add_execution(mid(month1), "RUNNING");
  run(R"(INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType", "taskDefName")
         VALUES ($1, '00000000-0000-0000-0000-000000000001', 't1', 'SIMPLE', 't'))",
      params::of(running_wf));
  // Values stored out of line (migration 0031) go with their executions' month.
  for (const auto& wf : {done_wf, running_wf})
    run(R"(INSERT INTO "Payloads" ("workflowId", "id", "body") VALUES ($1, uuidv7(), '{"big": 1}'))",
        params::of(wf));
  add_events(mid(month0), 2);
  add_events(mid(month1), 2);
  auto far = month0.lo + hours{24 * 31 * 14};
  CAF_REQUIRE(mgr.ensure_ahead(conn, far));
  auto r = mgr.drop_expired(conn, far);
  CAF_REQUIRE(r);
  std::set<std::string> got(r->dropped.begin(), r->dropped.end());
  CAF_CHECK(got.count(month0.name));
  CAF_CHECK(got.count("WorkflowEvents_" + month0.name.substr(std::string{"WorkflowExecutions_"}.size())));
  CAF_CHECK(!got.count(month1.name));
  std::set<std::string> kept;
  for (const auto& k : r->kept)
    kept.insert(k.name);
  CAF_CHECK(kept.count(month1.name));
  CAF_CHECK(kept.count("WorkflowEvents_" + month1.name.substr(std::string{"WorkflowExecutions_"}.size())));
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1)",
                        params::of(done_wf)),
                  0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "IdempotencyKeys" WHERE "key" = 'k1')"), 0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Payloads" WHERE "workflowId" = $1)",
                        params::of(done_wf)),
                  0);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "Payloads" WHERE "workflowId" = $1)",
                        params::of(running_wf)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "TaskExecutions" WHERE "workflowId" = $1)",
                        params::of(running_wf)),
                  1);
  CAF_CHECK_EQUAL(count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "at" >= to_timestamp($1::bigint)
                            AND "at" < to_timestamp($2::bigint))",
                        params::of(secs(month1.lo), secs(month1.hi))),
                  2);
  // Younger months are untouched.
  for (const auto& p : mgr.wanted(far))
    CAF_CHECK(!got.count(p.name));
}

CAF_TEST(invalid settings are rejected before anything is touched) {
  partition_manager mgr{partition_settings{3, 48, 0, 48}};
  auto r = mgr.drop_expired(conn, now());
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(nf::code_of(r.error()), nf::errc::invalid);
}

CAF_TEST_FIXTURE_SCOPE_END()
