// The task rules (I1, I5): an identity (workflowId, refName, iteration) is completed at most
// once, and nothing of it is scheduled or started after that completion. A completion that
// two owners or a late worker both got accepted, or a retry scheduled past a completion the
// decider missed, shows here.

#include "tests/fault/checker/rules.hpp"

namespace nf::fault::detail {

namespace {

/// The statuses that accept a task's result and let its workflow go on.
constexpr const char* accepted = "('COMPLETED', 'COMPLETED_WITH_ERRORS')";

std::string identity_text(const store::result& r, int i, int wf, int ref, int it) {
  return r.str(i, wf) + " " + r.str(i, ref) + "#" + r.str(i, it);
}

} // namespace

rule_result check_one_accepted_completion(store::connection& conn, const check_options& o) {
  tally t{"one_accepted_completion"};
  auto r = query(conn, t, std::string{R"(
SELECT t."workflowId", t."refName", t."iteration", count(*) AS "completions",
       string_agg(t."attempt"::text, ',' ORDER BY t."attempt") AS "attempts"
  FROM "TaskExecutions" t
  JOIN "WorkflowExecutions" w ON w."id" = t."workflowId"
 WHERE w."startedAt" >= )"} + since_sql + R"( AND t."status" IN )" + accepted + R"(
 GROUP BY t."workflowId", t."refName", t."iteration"
 ORDER BY t."workflowId", t."refName", t."iteration")",
                 store::params::of(o.since_ms));
  if (!r)
    return t.done();
  const int wf = r->column_named("workflowId"), ref = r->column_named("refName"),
            it = r->column_named("iteration"), n = r->column_named("completions"),
            attempts = r->column_named("attempts");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    if (r->i64(i, n) > 1)
      t.violation("task " + identity_text(*r, i, wf, ref, it) + " completed by attempts "
                  + r->str(i, attempts));
  }
  return t.done();
}

// The accepted completion of an identity is its first (by end, then attempt); an attempt
// that is itself an accepted completion is one_accepted_completion's to report, so this rule
// looks only at the others: a higher attempt, or one scheduled or started after that end.
rule_result check_no_attempt_after_completion(store::connection& conn, const check_options& o) {
  tally t{"no_attempt_after_completion"};
  auto r = query(conn, t, std::string{R"(
WITH c AS (
  SELECT DISTINCT ON (t."workflowId", t."refName", t."iteration")
         t."workflowId", t."refName", t."iteration", t."attempt", t."endedAt"
    FROM "TaskExecutions" t
    JOIN "WorkflowExecutions" w ON w."id" = t."workflowId"
   WHERE w."startedAt" >= )"} + since_sql + R"( AND t."status" IN )" + accepted + R"(
   ORDER BY t."workflowId", t."refName", t."iteration", t."endedAt", t."attempt")
SELECT c."workflowId", c."refName", c."iteration", c."attempt" AS "completedAttempt",
       c."endedAt"::text AS "completedAt", x."attempt", x."status"::text AS "status",
       x."scheduledAt"::text AS "scheduledAt", x."startedAt"::text AS "startedAt"
  FROM c
  LEFT JOIN "TaskExecutions" x
    ON x."workflowId" = c."workflowId" AND x."refName" = c."refName"
   AND x."iteration" = c."iteration" AND x."status" NOT IN )" + accepted + R"(
   AND (x."attempt" > c."attempt" OR x."scheduledAt" > c."endedAt" OR x."startedAt" > c."endedAt")
 ORDER BY c."workflowId", c."refName", c."iteration", x."attempt")",
                 store::params::of(o.since_ms));
  if (!r)
    return t.done();
  const int wf = r->column_named("workflowId"), ref = r->column_named("refName"),
            it = r->column_named("iteration"), done = r->column_named("completedAttempt"),
            done_at = r->column_named("completedAt"), attempt = r->column_named("attempt"),
            status = r->column_named("status"), scheduled = r->column_named("scheduledAt"),
            started = r->column_named("startedAt");
  std::string last;
  for (int i = 0; i < r->rows(); ++i) {
    auto id = identity_text(*r, i, wf, ref, it);
    if (id != last)
      t.checked();
    last = id;
    if (r->is_null(i, attempt))
      continue;
    t.violation("task " + id + " attempt " + r->str(i, attempt) + " (" + r->str(i, status)
                + ", scheduled " + r->str(i, scheduled) + ", started "
                + r->opt_str(i, started).value_or("never") + ") after attempt " + r->str(i, done)
                + " completed at " + r->str(i, done_at));
  }
  return t.done();
}

} // namespace nf::fault::detail
