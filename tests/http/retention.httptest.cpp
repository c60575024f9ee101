#define CAF_SUITE http.retention

// The retention settings (retention.*) decide what a node's maintenance drops and what
// `nodeflow partitions --drop-expired` drops: partitions made in the past (months back,
// hours back) are dropped by a short setting where the defaults would keep them, each table
// by its own setting. The old key maintenance.audit_months_retained is refused naming the new.

#include <caf/test/dsl.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include "store/schema/partitions.hpp"
#include "tests/e2e/e2e_fixture.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

using time_point = std::chrono::system_clock::time_point;

std::vector<store::range_partition> partitions_of(store::connection& conn,
                                                  const std::string& parent) {
  auto ps = store::list_partitions(conn, parent);
  CAF_REQUIRE(ps);
  return *ps;
}

std::set<std::string> names(const std::vector<store::range_partition>& ps) {
  std::set<std::string> out;
  for (const auto& p : ps)
    out.insert(p.name);
  return out;
}

// The months of `ps` (sorted by lo, contiguous) before the current one and the `retained`
// before it: those a drop with that retention removes.
std::set<std::string> past_retention(const std::vector<store::range_partition>& ps,
                                     time_point now, int retained) {
  int current = -1;
  for (size_t i = 0; i < ps.size(); ++i)
    if (ps[i].lo <= now && now < ps[i].hi)
      current = static_cast<int>(i);
  CAF_REQUIRE_GREATER_OR_EQUAL(current, 0);
  std::set<std::string> out;
  for (int i = 0; i < current - retained; ++i)
    out.insert(ps[static_cast<size_t>(i)].name);
  return out;
}

std::set<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

struct fixture {
  test::e2e_fixture f{"http_retention"};
  time_point now;

  fixture() {
    auto n = store::server_now(f.conn);
    CAF_REQUIRE(n);
    now = *n;
    // Every month from four or five back, and hours from 30 back, as nodes running then
    // made them (28-day steps miss no month).
    store::partition_manager past;
    for (int k = 5; k >= 1; --k)
      CAF_REQUIRE(past.ensure_ahead(f.conn, now - std::chrono::hours{24 * 28 * k}));
    CAF_REQUIRE(past.ensure_ahead(f.conn, now - 30h));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_retention, fixture)

CAF_TEST(the maintenance of a node drops what the retention settings say and keeps the rest) {
  auto executions = partitions_of(f.conn, "WorkflowExecutions");
  auto history = partitions_of(f.conn, "WorkflowEvents");
  auto audit = partitions_of(f.conn, "AuditEvents");
  auto timers = partitions_of(f.conn, "Timers");
  CAF_REQUIRE_GREATER_OR_EQUAL(past_retention(executions, now, 0).size(), 4u);
  // Hours ending before the current hour less 24 are past a 24-hour retention (none are
  // past the default 48: the oldest is 30 hours back).
  auto hour = std::chrono::floor<std::chrono::hours>(now);
  std::set<std::string> old_hours;
  for (const auto& p : timers)
    if (p.hi <= hour - 24h)
      old_hours.insert(p.name);
  CAF_REQUIRE_GREATER_OR_EQUAL(old_hours.size(), 5u);

  f.start_node({{"retention.executions_months", "2"},
                {"retention.history_months", "3"},
                {"retention.timers_hours", "24"},
                {"retention.audit_months", "1"}});
  // Maintenance runs once when the node starts; "Timers" is the last table it visits.
  bool timers_done = f.await(
    [&] { return minus(names(timers), names(partitions_of(f.conn, "Timers"))) == old_hours; },
    60s);
  CAF_CHECK(timers_done);
  auto audit_dropped = past_retention(audit, now, 1);
  // The current month and the settings' count before it stay; older months go.
  CAF_CHECK(minus(names(executions), names(partitions_of(f.conn, "WorkflowExecutions")))
            == past_retention(executions, now, 2));
  CAF_CHECK(minus(names(history), names(partitions_of(f.conn, "WorkflowEvents")))
            == past_retention(history, now, 3));
  CAF_CHECK(minus(names(audit), names(partitions_of(f.conn, "AuditEvents"))) == audit_dropped);
}

CAF_TEST(nodeflow partitions drops by the retention settings and refuses the old names) {
  auto executions = partitions_of(f.conn, "WorkflowExecutions");
  auto history = partitions_of(f.conn, "WorkflowEvents");
  auto old_flag = f.run_cli({"partitions", "--dsn", f.db.dsn(), "--audit-months-retained", "5"});
  CAF_CHECK_EQUAL(old_flag.exit_code, 2);
  CAF_CHECK(old_flag.log.find("--retention.audit_months") != std::string::npos);
  auto conf = f.dir + "/old.conf";
  std::ofstream(conf) << "maintenance.audit_months_retained = 84\n";
  auto old_key = f.run_cli({"config", "--check", conf});
  CAF_CHECK_EQUAL(old_key.exit_code, 1);
  CAF_CHECK(old_key.log.find("retention.audit_months") != std::string::npos);

  // Defaults: nothing five months old is past twelve.
  auto kept = f.run_cli({"partitions", "--dsn", f.db.dsn(), "--drop-expired"});
  CAF_REQUIRE_EQUAL(kept.exit_code, 0);
  CAF_CHECK(names(partitions_of(f.conn, "WorkflowExecutions")) == names(executions));

  std::ofstream(f.dir + "/short.conf") << "retention.history_months = 2\n";
  auto dropped = f.run_cli({"partitions", "--dsn", f.db.dsn(), "--drop-expired", "--config",
                            f.dir + "/short.conf", "--retention.executions_months", "3"});
  CAF_REQUIRE_EQUAL(dropped.exit_code, 0);
  CAF_CHECK(minus(names(executions), names(partitions_of(f.conn, "WorkflowExecutions")))
            == past_retention(executions, now, 3));
  CAF_CHECK(minus(names(history), names(partitions_of(f.conn, "WorkflowEvents")))
            == past_retention(history, now, 2));
}

CAF_TEST(the timer claims an overdue timer as far back as timer hours are kept) {
  // 60 hours overdue: past the default 48, within 72, so its hour stays and only a claim
  // that looks back 72 hours fires it.
  store::partition_manager past;
  CAF_REQUIRE(past.ensure_ahead(f.conn, now - 62h));
  f.sql(R"(WITH w AS (SELECT uuidv7() AS id)
           INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt")
           SELECT now() - interval '60 hours', 0, 'workflowTimeout', w.id,
                  uuid_extract_timestamp(w.id)
             FROM w)");
  f.start_node({{"retention.timers_hours", "72"}});
  CAF_CHECK(f.await_count(R"(SELECT count(*) FROM "Timers" WHERE "claimedAt" IS NOT NULL)", 1,
                          30s));
}

CAF_TEST_FIXTURE_SCOPE_END()
