#define CAF_SUITE store.pruning
#include "caf/test/unit_test.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "store/decisions.hpp"
#include "store/pg/binary_params.hpp"
#include "store/pg/hour_window.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/pruning.hpp"
#include "tests/store/decide_fixture.hpp"

using namespace nf;
using namespace nf::store;

namespace {

constexpr statement keyed{"test.keyed", R"(
SELECT count(*) FROM "TaskExecutions" t
  JOIN unnest($1::uuid[], $2::uuid[]) AS u(wf, id) ON t."workflowId" = u.wf AND t."id" = u.id
 WHERE t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[]))", 1};

constexpr statement commented{"test.commented", R"(
SELECT (SELECT x."id" FROM "TaskExecutions" x
         WHERE x."workflowId" = u.wf /*prune: AND x."workflowId" = ANY($1::uuid[]) */)
  FROM unnest($1::uuid[]) AS u(wf))", 1};

constexpr statement plain{"test.plain", R"(SELECT $1::uuid[])"};

// $1 is named in its ANY alone: a variant's text does not name it at all.
constexpr statement key_named_once{"test.key_named_once", R"(
SELECT count(*) FROM "TaskExecutions" t
 WHERE t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[]))", 1};

constexpr statement timers_due{"test.timers_due", R"(
SELECT count(*) FROM "Timers"
 WHERE "fireAt" <= now() + make_interval(secs => $1::bigint) /*hours: "fireAt" */)"};

constexpr statement started{"test.started", R"(
SELECT e."id"::text FROM unnest($1::uuid[]) AS u(id)
 CROSS JOIN LATERAL (
   SELECT "id" FROM "WorkflowExecutions"
    WHERE "id" = u.id AND "startedAt" = uuid_extract_timestamp(u.id)
      /*started: "startedAt" */) e
 ORDER BY 1)", 0, 1};

constexpr statement keyed_and_started{"test.keyed_and_started", R"(
SELECT count(*) FROM unnest($1::uuid[]) AS u(wf)
  JOIN "TaskExecutions" t ON t."workflowId" = u.wf
  JOIN "WorkflowExecutions" w ON w."id" = t."workflowId"
   AND w."startedAt" = uuid_extract_timestamp(t."workflowId")
 WHERE t."workflowId" = ANY($1::uuid[]) /*started: w."startedAt" */)", 1, 1};

const std::string a = "01a22eeb-c172-752e-b773-745043330a69";
const std::string b = "01a22eeb-c3ff-74d6-bf56-8ab6d88b6d27";
const std::string c = "01a22eeb-c3ff-740c-848a-03d5c4c66d0c";

std::string uuid_n(int i) {
  auto s = std::to_string(100000000000 + i);
  return "01a22eeb-c172-752e-b773-" + s.substr(s.size() - 12);
}

/// Names of the partitions (`prefix`…) a plan still holds (one set up at executor start
/// shows up; one pruned then does not).
void partitions_in(const boost::json::object& plan, const std::string& prefix,
                   std::set<std::string>& out) {
  if (auto it = plan.find("Relation Name"); it != plan.end()) {
    std::string rel{it->value().get_string()};
    if (rel.rfind(prefix, 0) == 0)
      out.insert(rel);
  }
  if (auto it = plan.find("Plans"); it != plan.end())
    for (const auto& child : it->value().as_array())
      partitions_in(child.as_object(), prefix, out);
}

struct fixture : test::decide_fixture {
  fixture() : decide_fixture("pruning") {
    sql("SET plan_cache_mode = force_generic_plan");
  }

  std::set<std::string> partitions_of(const std::string& execute,
                                      const std::string& prefix = "TaskExecutions_p") {
    auto r = sql("EXPLAIN (ANALYZE, FORMAT JSON) " + execute);
    auto doc = boost::json::parse(r.str(0, 0));
    std::set<std::string> out;
    partitions_in(doc.as_array().at(0).as_object().at("Plan").as_object(), prefix, out);
    return out;
  }

  int64_t scalar_int(const std::string& text) {
    return sql(text).i64(0, 0);
  }

  /// A RUNNING execution whose id (and so its month) is `days` from now.
  std::string add_execution(int days) {
    auto r = sql(R"(WITH n AS (SELECT uuidv7(make_interval(days => $1::int)) AS id)
                    INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId",
                                                      "workflowName", "workflowVersion", "shard")
                    SELECT id, uuid_extract_timestamp(id), '00000000-0000-0000-0000-000000000001',
                           'wf', 1, 0 FROM n RETURNING "id"::text)",
                 params::of(int64_t{days}));
    return r.str(0, 0);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(pruning_tests, fixture)

CAF_TEST(a small batch gets a variant with its distinct keys one parameter each) {
  auto p = params::of(array_literal{"{\"" + a + "\",\"" + b + "\",NULL,\"" + a + "\",\"" + c + "\"}"},
                      array_literal{"{}"});
  const auto& v = with_pruning_keys(keyed, p);
  CAF_CHECK_EQUAL(std::string{v.name}, "test.keyed/4"); // three keys, padded to four
  std::string sql_text = v.sql;
  CAF_CHECK(sql_text.find("= ANY($1::uuid[])") == std::string::npos);
  CAF_CHECK(sql_text.find(R"(t."workflowId" = ANY(ARRAY[$3::uuid, $4::uuid, $5::uuid, $6::uuid]))")
            != std::string::npos);
  CAF_CHECK(sql_text.find("unnest($1::uuid[], $2::uuid[])") != std::string::npos);
  CAF_CHECK(sql_text.find("= ANY($2::uuid[])") != std::string::npos);
  CAF_REQUIRE_EQUAL(p.size(), 6u);
  CAF_CHECK_EQUAL(*p.values()[2], a);
  CAF_CHECK_EQUAL(*p.values()[3], b);
  CAF_CHECK_EQUAL(*p.values()[4], c);
  CAF_CHECK_EQUAL(*p.values()[5], a);
  // The same statement and slot count is one variant, at one address.
  auto q = params::of(array_literal{"{\"" + c + "\",\"" + b + "\",\"" + a + "\"}"},
                      array_literal{"{}"});
  CAF_CHECK_EQUAL(&with_pruning_keys(keyed, q), &v);
}

CAF_TEST(a prune comment is a clause of the variants only) {
  auto p = params::of(array_literal{"{\"" + a + "\"}"});
  const auto& v = with_pruning_keys(commented, p);
  std::string sql_text = v.sql;
  CAF_CHECK(sql_text.find("prune:") == std::string::npos);
  CAF_CHECK(sql_text.find(R"(x."workflowId" = u.wf  AND x."workflowId" = ANY(ARRAY[$2::uuid]) )")
            != std::string::npos);
  CAF_CHECK(sql_text.find("unnest($1::uuid[])") != std::string::npos);
  // As written, the comment is a comment: it runs, with no bound but the probe's own.
  auto r = conn.run(commented, params::of(text_array(std::vector<std::string>(
                                 max_pruning_keys + 1, a))));
  NF_REQUIRE_OK(r);
  auto v2 = conn.run(commented, params::of(text_array(std::vector<std::string>{a})));
  NF_REQUIRE_OK(v2);
}

CAF_TEST(a variant whose text no longer names a parameter is prepared with its base s type) {
  auto keys = params::of(array_literal{"{\"" + a + "\"}"}, array_literal{"{\"" + b + "\"}"});
  const auto& v = with_pruning_keys(key_named_once, keys);
  CAF_REQUIRE_NOT_EQUAL(&v, &key_named_once);
  CAF_CHECK(std::string{v.sql}.find("$1") == std::string::npos);
  CAF_CHECK(declared_array_types(v) == declared_array_types(key_named_once));
  // Through a connection and through a pipeline, each preparing it afresh.
  auto r = conn.run(key_named_once, params::of(array_literal{"{\"" + a + "\"}"},
                                               array_literal{"{\"" + b + "\"}"}));
  NF_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(r->str(0, 0), "0");
  auto other = db->connect();
  pipeline batch{other};
  batch.add(key_named_once, params::of(array_literal{"{\"" + a + "\"}"},
                                       array_literal{"{\"" + b + "\"}"}));
  auto rs = batch.run();
  NF_REQUIRE_OK(rs);
  CAF_CHECK_EQUAL(rs->front().str(0, 0), "0");
}

CAF_TEST(large or empty batches and undeclared statements run as written) {
  std::string many = "{";
  for (size_t i = 0; i <= max_pruning_keys; ++i)
    many += (i ? "," : "") + uuid_n(static_cast<int>(i));
  many += "}";
  auto p = params::of(array_literal{many}, array_literal{"{}"});
  CAF_CHECK_EQUAL(&with_pruning_keys(keyed, p), &keyed);
  CAF_CHECK_EQUAL(p.size(), 2u);
  auto empty = params::of(array_literal{"{}"}, array_literal{"{}"});
  CAF_CHECK_EQUAL(&with_pruning_keys(keyed, empty), &keyed);
  // Text that is no uuid is left to the statement as written and its usual error.
  auto odd = params::of(text_array(std::vector<std::string>{a, "x\",y"}), array_literal{"{}"});
  CAF_CHECK_EQUAL(&with_pruning_keys(keyed, odd), &keyed);
  auto q = params::of(array_literal{"{" + a + "}"});
  CAF_CHECK_EQUAL(&with_pruning_keys(plain, q), &plain);
  CAF_CHECK_EQUAL(q.size(), 1u);
}

CAF_TEST(the engine s statements set up only the partitions their keys hash to) {
  // Workflows in three different partitions, each with a task.
  sql(R"(
    INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "attempt", "taskType",
                                  "taskDefName", "status")
    SELECT uuidv7(), '00000000-0000-0000-0000-000000000001', 't', 0, 'SIMPLE', 'work',
           'SCHEDULED' FROM generate_series(1, 64))");
  auto ids = sql(R"(SELECT DISTINCT ON (c.relname) t."workflowId"::text, c.relname
                      FROM "TaskExecutions" t JOIN pg_class c ON c.oid = t.tableoid
                     ORDER BY c.relname LIMIT 3)");
  CAF_REQUIRE_EQUAL(ids.rows(), 3);
  std::vector<std::string> wfs;
  std::set<std::string> owners;
  for (int i = 0; i < ids.rows(); ++i) {
    wfs.push_back(ids.str(i, 0));
    owners.insert(ids.str(i, 1));
  }
  // Run through the connection, as the engine does: prepares the variant for four slots.
  auto r = conn.run(frontier_statement(), params::of(text_array(wfs)));
  NF_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(r->rows(), 3);
  auto list = "'{" + wfs[0] + "," + wfs[1] + "," + wfs[2] + "}'";
  auto keys = "'" + wfs[0] + "', '" + wfs[1] + "', '" + wfs[2] + "', '" + wfs[0] + "'";
  CAF_CHECK_EQUAL(partitions_of("EXECUTE \"decide.frontier/4\"(" + list + ", " + keys + ")"),
                  owners);
  // The statement as written, with the same generic plan mode, sets up all sixteen.
  NF_REQUIRE_OK(conn.prepare(frontier_statement()));
  CAF_CHECK_EQUAL(partitions_of("EXECUTE \"decide.frontier\"(" + list + ")").size(), 16u);
}

CAF_TEST(a batch s start times bound the execution months it sets up) {
  auto now_a = add_execution(0), now_b = add_execution(0), old = add_execution(-75);
  std::string upper = now_b;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  // Any order, any case: the earliest and the latest id go last, in that order.
  auto p = params::of(text_array(std::vector<std::string>{upper, old, now_a}));
  const auto& v = with_pruning_keys(started, p);
  CAF_CHECK_EQUAL(std::string{v.name}, "test.started/r");
  std::string sql_text = v.sql;
  CAF_CHECK(sql_text.find(R"("startedAt" BETWEEN uuid_extract_timestamp($2::uuid) AND )"
                          R"(uuid_extract_timestamp($3::uuid))")
            != std::string::npos);
  CAF_REQUIRE_EQUAL(p.size(), 3u);
  CAF_CHECK_EQUAL(*p.values()[1], old);
  CAF_CHECK_EQUAL(*p.values()[2], std::max(now_a, now_b));
  // Every row of a batch spanning months is found, through the variant.
  auto r = conn.run(started, params::of(text_array(std::vector<std::string>{now_a, old, upper})));
  NF_REQUIRE_OK(r);
  CAF_REQUIRE_EQUAL(r->rows(), 3);
  std::vector<std::string> found{r->str(0, 0), r->str(1, 0), r->str(2, 0)};
  std::vector<std::string> want{now_a, now_b, old};
  std::sort(want.begin(), want.end());
  CAF_CHECK_EQUAL(found, want);
  // This month's batch sets up this month's partition alone; as written, every month.
  auto months = count(R"(SELECT count(*) FROM pg_inherits
                          WHERE inhparent = '"WorkflowExecutions"'::regclass)");
  CAF_REQUIRE_GREATER(months, 1);
  NF_REQUIRE_OK(conn.run(started, params::of(text_array(std::vector<std::string>{now_a}))));
  auto list = "'{" + now_a + "," + now_b + "}'";
  auto bounds = "'" + std::min(now_a, now_b) + "', '" + std::max(now_a, now_b) + "'";
  CAF_CHECK_EQUAL(partitions_of("EXECUTE \"test.started/r\"(" + list + ", " + bounds + ")",
                                "WorkflowExecutions_")
                    .size(),
                  1u);
  NF_REQUIRE_OK(conn.prepare(started));
  CAF_CHECK_EQUAL(static_cast<int64_t>(
                    partitions_of("EXECUTE \"test.started\"(" + list + ")", "WorkflowExecutions_")
                      .size()),
                  months);
}

CAF_TEST(start bounds follow the spelled out keys and need uuidv7 ids) {
  auto wf = add_execution(0);
  auto p = params::of(text_array(std::vector<std::string>{wf}));
  const auto& v = with_pruning_keys(keyed_and_started, p);
  CAF_CHECK_EQUAL(std::string{v.name}, "test.keyed_and_started/1r");
  std::string sql_text = v.sql;
  CAF_CHECK(sql_text.find(R"(t."workflowId" = ANY(ARRAY[$2::uuid]))") != std::string::npos);
  CAF_CHECK(sql_text.find(R"(w."startedAt" BETWEEN uuid_extract_timestamp($3::uuid))")
            != std::string::npos);
  CAF_CHECK_EQUAL(p.size(), 4u);
  NF_REQUIRE_OK(conn.run(keyed_and_started, params::of(text_array(std::vector<std::string>{wf}))));
  // A uuid of another version has no start time in its first bits: the batch runs as
  // written, and finds what it can.
  const std::string v4 = "6f1c3a52-1b2d-4c3e-9f4a-5b6c7d8e9f00";
  auto q = params::of(text_array(std::vector<std::string>{wf, v4}));
  CAF_CHECK_EQUAL(&with_pruning_keys(started, q), &started);
  CAF_CHECK_EQUAL(q.size(), 1u);
  auto r = conn.run(started, params::of(text_array(std::vector<std::string>{wf, v4})));
  NF_REQUIRE_OK(r);
  CAF_CHECK_EQUAL(r->rows(), 1);
  auto none = params::of(array_literal{"{NULL}"});
  CAF_CHECK_EQUAL(&with_pruning_keys(started, none), &started);
}

CAF_TEST(an hour window covers whole hours and names them in its variant) {
  auto w = hours_covering(3599, 3600, 3);
  CAF_REQUIRE(w);
  CAF_CHECK_EQUAL(w->first_hour, 0);
  CAF_CHECK_EQUAL(w->hours, 2);
  w = hours_covering(-1, 0, 3);  // before the epoch: the hour that holds it
  CAF_REQUIRE(w);
  CAF_CHECK_EQUAL(w->first_hour, -1);
  CAF_CHECK_EQUAL(w->hours, 2);
  CAF_CHECK(!hours_covering(0, 3 * 3600, 3));  // four hours
  CAF_CHECK(!hours_covering(10, 9, 3));
  const int64_t hour = 493'000;  // 2026-03-29 16:00 UTC
  const auto& v = within_hours(timers_due, hour_window{hour, 2});
  CAF_CHECK_EQUAL(std::string{v.name}, "test.timers_due@h493000+2");
  std::string text = v.sql;
  CAF_CHECK(text.find(R"(AND "fireAt" >= ALL('{"2026-03-29 16:00:00.000+00"}'::timestamptz[]) )"
                      R"(AND "fireAt" < ALL('{"2026-03-29 18:00:00.000+00"}'::timestamptz[]))")
            != std::string::npos);
  CAF_CHECK(text.find("hours:") == std::string::npos);
  CAF_CHECK_EQUAL(&within_hours(timers_due, hour_window{hour, 2}), &v);
  CAF_CHECK(supersedes("test.timers_due@h493001+1", v.name));
  CAF_CHECK(!supersedes(v.name, "test.timers_due@h493001+1"));
  CAF_CHECK(!supersedes("test.timers_due@h493000+3", v.name));  // the same first hour
  CAF_CHECK(!supersedes("test.other@h493001+1", v.name));
  CAF_CHECK(!supersedes("test.timers_due@h493001+1", "test.timers_due"));
}

CAF_TEST(a connection deallocates the variants of hours a newer window left behind) {
  auto now_s = scalar_int("SELECT extract(epoch FROM now())::bigint");
  auto hour = now_s / 3600;
  auto prepared = [&] {
    std::set<std::string> out;
    auto r = sql("SELECT name FROM pg_prepared_statements WHERE name LIKE 'test.timers_due@%'");
    for (int i = 0; i < r.rows(); ++i)
      out.insert(r.str(i, 0));
    return out;
  };
  auto run = [&](int64_t first_hour, int hours) {
    pipeline p{conn};
    p.add(within_hours(timers_due, hour_window{first_hour, hours}), params::of(int64_t{60}));
    NF_REQUIRE_OK(p.run());
  };
  run(hour, 1);
  run(hour, 2);  // the same first hour: both stay
  CAF_CHECK_EQUAL(prepared(), (std::set<std::string>{"test.timers_due@h" + std::to_string(hour) + "+1",
                                                     "test.timers_due@h" + std::to_string(hour) + "+2"}));
  run(hour + 1, 1);  // the hours have moved on
  CAF_CHECK_EQUAL(prepared(),
                  (std::set<std::string>{"test.timers_due@h" + std::to_string(hour + 1) + "+1"}));
  CAF_CHECK(!conn.is_prepared(("test.timers_due@h" + std::to_string(hour) + "+1").c_str()));
  // Outside a transaction the connection's own prepare does the same.
  NF_REQUIRE_OK(conn.run(within_hours(timers_due, hour_window{hour + 2, 1}),
                         params::of(int64_t{60})));
  CAF_CHECK_EQUAL(prepared(),
                  (std::set<std::string>{"test.timers_due@h" + std::to_string(hour + 2) + "+1"}));
  // And inside one, after its first statement has taken the BEGIN: where the timer prepares
  // its claim, after reading the transaction's now().
  {
    transaction tx{conn};
    NF_REQUIRE_OK(tx.begin());
    NF_REQUIRE_OK(conn.run(plain, params::of(array_literal{"{}"})));
    NF_REQUIRE_OK(conn.run(within_hours(timers_due, hour_window{hour + 3, 1}),
                           params::of(int64_t{60})));
    NF_REQUIRE_OK(tx.commit());
  }
  CAF_CHECK_EQUAL(prepared(),
                  (std::set<std::string>{"test.timers_due@h" + std::to_string(hour + 3) + "+1"}));
}

CAF_TEST_FIXTURE_SCOPE_END()
