// `rows_in_right_partitions`: the time-partitioned tables (docs/schema.md §3:
// "WorkflowExecutions" by "startedAt", "WorkflowEvents" by "at", "Timers" by "fireAt",
// "AuditEvents" by "at") have their keys from the Postgres clock. Postgres routes every row
// by its key, so a row is always in the partition its key names; what can go wrong is the key
// itself, taken from a node's clock. A key more than `skew` away from the Postgres time the
// row was written at shows it:
//  - an execution's "startedAt" (its uuidv7 id's time) against its WORKFLOW_STARTED event's
//    "at" (the start transaction's now());
//  - an event's "at" earlier than its workflow's start event, or later than now();
//  - a timer's "fireAt" earlier than its "createdAt" (the engine writes greatest(due, now()));
//  - an audit event's "at" against its uuidv7 id's time.

#include "tests/fault/checker/rules.hpp"

namespace nf::fault::detail {

namespace {

/// The largest difference two Postgres timestamps of one write may show without a node's
/// clock behind one of them (a long transaction, a slow start).
constexpr const char* skew = "interval '60 seconds'";

void read_skews(store::connection& conn, tally& t, const std::string& sql, int64_t since_ms) {
  auto r = query(conn, t, sql, store::params::of(since_ms));
  if (!r)
    return;
  const int what = r->column_named("what"), bad = r->column_named("bad");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    if (r->boolean(i, bad))
      t.violation(r->str(i, what));
  }
}

} // namespace

rule_result check_rows_in_right_partitions(store::connection& conn, const check_options& o) {
  tally t{"rows_in_right_partitions"};
  std::string since = since_sql;
  read_skews(conn, t, R"(
SELECT 'workflow ' || w."id" || ' startedAt ' || w."startedAt" || ' (its id''s time), started by Postgres at '
         || coalesce(e."at"::text, 'an unknown time') AS "what",
       coalesce(abs(extract(epoch FROM w."startedAt" - e."at")) > extract(epoch FROM )" + std::string{skew} + R"(), false) AS "bad"
  FROM "WorkflowExecutions" w
  LEFT JOIN "WorkflowEvents" e ON e."workflowId" = w."id" AND e."seq" = 1
 WHERE w."startedAt" >= )" + since + R"(
 ORDER BY w."id")",
             o.since_ms);
  read_skews(conn, t, R"(
SELECT 'event ' || e."workflowId" || ' seq ' || e."seq" || ' (' || e."eventType" || ') at ' || e."at"
         || ', its workflow started at ' || s."at" || ', now ' || now() AS "what",
       e."at" < s."at" - )" + std::string{skew} + R"( OR e."at" > now() + )" + skew + R"( AS "bad"
  FROM "WorkflowEvents" e
  JOIN "WorkflowExecutions" w ON w."id" = e."workflowId"
  JOIN "WorkflowEvents" s ON s."workflowId" = e."workflowId" AND s."seq" = 1
 WHERE w."startedAt" >= )" + since + R"(
 ORDER BY e."workflowId", e."seq")",
             o.since_ms);
  read_skews(conn, t, R"(
SELECT x."kind" || ' timer ' || x."id" || ' fireAt ' || x."fireAt" || ', created at ' || x."createdAt" AS "what",
       x."fireAt" < x."createdAt" - )" + std::string{skew} + R"( AS "bad"
  FROM "Timers" x
 WHERE x."workflowStartedAt" >= )" + since + R"(
 ORDER BY x."id")",
             o.since_ms);
  read_skews(conn, t, R"(
SELECT 'audit event ' || a."id" || ' (' || a."action" || ') at ' || a."at" || ', its id''s time '
         || uuid_extract_timestamp(a."id") AS "what",
       abs(extract(epoch FROM a."at" - uuid_extract_timestamp(a."id"))) > extract(epoch FROM )" + std::string{skew} + R"() AS "bad"
  FROM "AuditEvents" a
 WHERE a."at" >= )" + since + R"(
 ORDER BY a."at", a."id")",
             o.since_ms);
  return t.done();
}

} // namespace nf::fault::detail
