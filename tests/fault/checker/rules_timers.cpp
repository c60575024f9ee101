// `no_early_timer` (I6 and the deadlines of DESIGN §3): nothing the engine does on a deadline
// happened before that deadline by the Postgres clock. The evidence, each read on its own:
//  - a fired timer ("Timers"."claimedAt") claimed before its "fireAt";
//  - a TIMER_FIRED or TASK_TIMED_OUT event written before the "fireAt" of the timer its
//    payload names ("timerId");
//  - a TIMED_OUT worker task (one with a queue, the only kind with these deadlines) ended
//    before the deadline its reason names (pollTimeoutSeconds from "scheduledAt",
//    timeoutSeconds and responseTimeoutSeconds (the lease) from "startedAt",
//    totalTimeoutSeconds from the first attempt's "scheduledAt"), by its registered definition;
//  - a TIMED_OUT workflow ended before its definition's timeoutSeconds after its start (or
//    after the last event that restarted its timeout, payload "timeoutReset");
//  - a WAIT task that completed on its own (no signal, not completed by reference) before the
//    wake its input's duration or until names (flow::plan_wait, from its "scheduledAt");
//  - a retry's attempt started before its previous attempt's retry delay (flow::retry_delay_ms
//    without the jitter, which only adds) had passed since it was scheduled.
// An end is the later of its row's stamp and its event's "at", a start its first event's "at"
// (witnessed()).
// Deadlines are compared in whole milliseconds, as the engine computes them, with a slack for
// those derived from row stamps (stamp_slack_ms). Tasks whose workflow definition declares an
// inline taskDefinition, or whose definition is not registered, carry no deadline the checker
// can read and are left out.

#include <algorithm>
#include <optional>

#include <boost/json/parse.hpp>

#include "flow/definitions.hpp"
#include "flow/retry.hpp"
#include "flow/system_tasks.hpp"
#include "flow/types.hpp"
#include "tests/fault/checker/rules.hpp"

namespace nf::fault::detail {

namespace {

/// A decision is stamped with its transaction's start (now(): "endedAt", "scheduledAt") but
/// made at the clock_timestamp() it reads within that transaction (decide.now_ms), a few
/// milliseconds later; a deadline derived from the stamps may be missed by that much. The
/// timers' own rows need no slack: their claim compares "fireAt" with the now() it stamps.
constexpr int64_t stamp_slack_ms = 250;

/// When task `t` did what its `type` event records, by the best Postgres clock there is: the
/// event's "at" is clock_timestamp() read after the decision (docs/schema.md, WorkflowEvents),
/// while `stamp` is its transaction's start, which may be a round trip earlier. `agg` "max"
/// takes the later of the two (an end); "min" the first such event, else the stamp (a start,
/// whose row keeps only its latest lease).
std::string witnessed(const std::string& stamp, const std::string& agg, const std::string& type) {
  std::string event = "(SELECT " + agg + R"((e."at") FROM "WorkflowEvents" e WHERE e."workflowId" = t."workflowId" AND e."taskId" = t."id" AND e."eventType" = ')" + type + "')";
  return agg == "max" ? "greatest(" + stamp + ", " + event + ")"
                      : "coalesce(" + event + ", " + stamp + ")";
}

/// The execution and its definition, joined for the task checks: only tasks of executions
/// in scope whose workflow definition overrides no task definition inline.
std::string task_join(const std::string& alias) {
  return std::string{R"(
  JOIN "WorkflowExecutions" w ON w."id" = )"} + alias + R"(."workflowId"
  JOIN "WorkflowDefinitions" wd ON wd."namespaceId" = w."namespaceId"
   AND wd."name" = w."workflowName" AND wd."version" = w."workflowVersion"
   AND wd."tasks"::text NOT LIKE '%"taskDefinition"%'
  JOIN "TaskDefinitions" d ON d."namespaceId" = )" + alias + R"(."namespaceId" AND d."name" = )"
         + alias + R"(."taskDefName")";
}

void fired_timers(store::connection& conn, tally& t, const check_options& o) {
  auto r = query(conn, t, std::string{R"(
SELECT "id", "kind"::text AS "kind", "workflowId", "taskId", "fireAt"::text AS "fireAt",
       "claimedAt"::text AS "claimedAt", "claimedAt" < "fireAt" AS "early"
  FROM "Timers"
 WHERE "claimedAt" IS NOT NULL AND "workflowStartedAt" >= )"} + since_sql + R"(
 ORDER BY "id")",
                 store::params::of(o.since_ms));
  if (!r)
    return;
  const int id = r->column_named("id"), kind = r->column_named("kind"),
            wf = r->column_named("workflowId"), fire = r->column_named("fireAt"),
            claimed = r->column_named("claimedAt"), early = r->column_named("early");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    if (r->boolean(i, early))
      t.violation(r->str(i, kind) + " timer " + r->str(i, id) + " of workflow " + r->str(i, wf)
                  + " claimed at " + r->str(i, claimed) + ", due at " + r->str(i, fire));
  }
}

void timer_events(store::connection& conn, tally& t, const check_options& o) {
  auto r = query(conn, t, std::string{R"(
SELECT e."workflowId", e."seq", e."eventType"::text AS "eventType", e."at"::text AS "at",
       x."id" AS "timerId", x."fireAt"::text AS "fireAt", e."at" < x."fireAt" AS "early"
  FROM "WorkflowEvents" e
  JOIN "WorkflowExecutions" w ON w."id" = e."workflowId"
  JOIN "Timers" x ON x."id" = (e."payload"->>'timerId')::bigint
 WHERE w."startedAt" >= )"} + since_sql + R"(
   AND e."eventType" IN ('TIMER_FIRED', 'TASK_TIMED_OUT')
   AND jsonb_typeof(e."payload"->'timerId') = 'number'
 ORDER BY e."workflowId", e."seq")",
                 store::params::of(o.since_ms));
  if (!r)
    return;
  const int wf = r->column_named("workflowId"), seq = r->column_named("seq"),
            type = r->column_named("eventType"), at = r->column_named("at"),
            timer = r->column_named("timerId"), fire = r->column_named("fireAt"),
            early = r->column_named("early");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    if (r->boolean(i, early))
      t.violation(r->str(i, type) + " (workflow " + r->str(i, wf) + " seq " + r->str(i, seq)
                  + ") at " + r->str(i, at) + ", its timer " + r->str(i, timer) + " due at "
                  + r->str(i, fire));
  }
}

void timed_out_tasks(store::connection& conn, tally& t, const check_options& o) {
  auto r = query(conn, t, std::string{R"(
SELECT t."workflowId", t."refName", t."iteration", t."attempt",
       coalesce(t."reasonForIncompletion", '') AS "reason",
       )"} + ms_of("t.\"scheduledAt\"") + R"( AS "scheduledMs",
       )" + ms_of("t.\"startedAt\"") + R"( AS "startedMs",
       )" + ms_of(witnessed("t.\"endedAt\"", "max", "TASK_TIMED_OUT")) + R"( AS "endedMs",
       (SELECT )" + ms_of("min(f.\"scheduledAt\")") + R"( FROM "TaskExecutions" f
         WHERE f."workflowId" = t."workflowId" AND f."refName" = t."refName"
           AND f."iteration" = t."iteration") AS "firstScheduledMs",
       d."pollTimeoutSeconds", d."timeoutSeconds", d."responseTimeoutSeconds",
       d."totalTimeoutSeconds"
  FROM "TaskExecutions" t)" + task_join("t") + R"(
 WHERE w."startedAt" >= )" + since_sql + R"( AND t."status" = 'TIMED_OUT'
   AND t."queueName" IS NOT NULL
 ORDER BY t."workflowId", t."refName", t."iteration", t."attempt")",
                 store::params::of(o.since_ms));
  if (!r)
    return;
  const int wf = r->column_named("workflowId"), ref = r->column_named("refName"),
            it = r->column_named("iteration"), attempt = r->column_named("attempt"),
            reason = r->column_named("reason"), scheduled = r->column_named("scheduledMs"),
            started = r->column_named("startedMs"), ended = r->column_named("endedMs"),
            first = r->column_named("firstScheduledMs"),
            poll = r->column_named("pollTimeoutSeconds"),
            timeout = r->column_named("timeoutSeconds"),
            response = r->column_named("responseTimeoutSeconds"),
            total = r->column_named("totalTimeoutSeconds");
  struct deadline {
    std::string field;
    int64_t at_ms;
  };
  for (int i = 0; i < r->rows(); ++i) {
    auto secs = [&](int col) { return r->opt_i64(i, col).value_or(0); };
    auto from = [&](int col) { return r->opt_i64(i, col); };
    // Every deadline that could have applied, each with the field it comes from.
    std::vector<deadline> all;
    auto add = [&](std::string field, std::optional<int64_t> base, int64_t s) {
      if (base && s > 0)
        all.push_back({std::move(field), *base + s * 1000});
    };
    add("pollTimeoutSeconds", from(scheduled), secs(poll));
    add("timeoutSeconds", from(started), secs(timeout));
    // The lease is at least one second long (store/queues.cpp) and a heartbeat only extends it.
    add("responseTimeoutSeconds", from(started), std::max<int64_t>(secs(response), 1));
    add("totalTimeoutSeconds", from(first), secs(total));
    // The reason names the deadline (the timer's kind, the decider's field, the lease sweep);
    // an unknown reason is held to the earliest of them.
    auto why = r->str(i, reason);
    std::string named;
    if (why.rfind("scheduleToStart", 0) == 0 || why.rfind("pollTimeoutSeconds", 0) == 0)
      named = "pollTimeoutSeconds";
    else if (why.rfind("startToClose", 0) == 0 || why.rfind("timeoutSeconds", 0) == 0)
      named = "timeoutSeconds";
    else if (why.rfind("responseTimeoutSeconds", 0) == 0 || why.rfind("lease expired", 0) == 0)
      named = "responseTimeoutSeconds";
    else if (why.rfind("totalTimeoutSeconds", 0) == 0)
      named = "totalTimeoutSeconds";
    std::optional<deadline> due;
    for (const auto& d : all)
      if (d.field == named)
        due = d;
    if (!due)
      for (const auto& d : all)
        if (!due || d.at_ms < due->at_ms)
          due = d;
    if (!due || r->is_null(i, ended))
      continue;
    t.checked();
    auto end = r->i64(i, ended);
    if (end + stamp_slack_ms < due->at_ms)
      t.violation("task " + r->str(i, wf) + " " + r->str(i, ref) + "#" + r->str(i, it)
                  + " attempt " + r->str(i, attempt) + " TIMED_OUT (" + why + ") "
                  + std::to_string(due->at_ms - end) + " ms before its " + due->field
                  + " deadline");
  }
}

void timed_out_workflows(store::connection& conn, tally& t, const check_options& o) {
  auto r = query(conn, t, std::string{R"(
SELECT w."id", )"} + ms_of("greatest(w.\"endedAt\", (SELECT max(e.\"at\") FROM \"WorkflowEvents\" e WHERE e.\"workflowId\" = w.\"id\" AND e.\"eventType\" = 'WORKFLOW_TIMED_OUT'))") + R"( AS "endedMs",
       greatest()" + ms_of("w.\"startedAt\"") + R"(,
                (SELECT )" + ms_of("max(e.\"at\")") + R"( FROM "WorkflowEvents" e
                  WHERE e."workflowId" = w."id" AND e."at" <= w."endedAt"
                    AND e."payload" @> '{"timeoutReset": true}')) AS "clockMs",
       wd."timeoutSeconds"
  FROM "WorkflowExecutions" w
  JOIN "WorkflowDefinitions" wd ON wd."namespaceId" = w."namespaceId"
   AND wd."name" = w."workflowName" AND wd."version" = w."workflowVersion"
 WHERE w."startedAt" >= )" + since_sql + R"( AND w."status" = 'TIMED_OUT'
   AND wd."timeoutSeconds" > 0
 ORDER BY w."id")",
                 store::params::of(o.since_ms));
  if (!r)
    return;
  const int id = r->column_named("id"), ended = r->column_named("endedMs"),
            clock = r->column_named("clockMs"), secs = r->column_named("timeoutSeconds");
  for (int i = 0; i < r->rows(); ++i) {
    t.checked();
    auto due = r->i64(i, clock) + r->i64(i, secs) * 1000;
    auto end = r->i64(i, ended);
    if (end + stamp_slack_ms < due)
      t.violation("workflow " + r->str(i, id) + " TIMED_OUT " + std::to_string(due - end)
                  + " ms before its timeoutSeconds (" + r->str(i, secs) + ")");
  }
}

void waits(store::connection& conn, tally& t, const check_options& o) {
  auto r = query(conn, t, std::string{R"(
SELECT t."workflowId", t."refName", t."iteration", t."attempt", t."input"::text AS "input",
       )"} + ms_of("t.\"scheduledAt\"") + R"( AS "scheduledMs",
       )" + ms_of(witnessed("t.\"endedAt\"", "max", "TASK_COMPLETED")) + R"( AS "endedMs"
  FROM "TaskExecutions" t
  JOIN "WorkflowExecutions" w ON w."id" = t."workflowId"
 WHERE w."startedAt" >= )" + since_sql + R"(
   AND t."taskType" = 'WAIT' AND t."status" = 'COMPLETED' AND t."inputPayloadId" IS NULL
   AND NOT coalesce(t."output" ? 'signal', false)
   AND NOT EXISTS (SELECT 1 FROM "WorkflowEvents" e
                    WHERE e."workflowId" = t."workflowId" AND e."eventType" = 'SIGNAL_RECEIVED'
                      AND e."payload"->>'taskRef' = t."refName")
 ORDER BY t."workflowId", t."refName", t."iteration", t."attempt")",
                 store::params::of(o.since_ms));
  if (!r)
    return;
  const int wf = r->column_named("workflowId"), ref = r->column_named("refName"),
            it = r->column_named("iteration"), input = r->column_named("input"),
            scheduled = r->column_named("scheduledMs"), ended = r->column_named("endedMs");
  for (int i = 0; i < r->rows(); ++i) {
    boost::json::error_code ec;
    auto in = boost::json::parse(r->str(i, input), ec);
    if (ec || !in.is_object())
      continue;
    auto plan = flow::plan_wait(in.as_object(), r->i64(i, scheduled));
    if (!plan.error.empty() || !plan.wake)
      continue;
    t.checked();
    auto end = r->i64(i, ended);
    if (end + stamp_slack_ms < *plan.wake)
      t.violation("WAIT " + r->str(i, wf) + " " + r->str(i, ref) + "#" + r->str(i, it)
                  + " completed " + std::to_string(*plan.wake - end) + " ms before its wake");
  }
}

flow::retry_logic logic_of(std::string_view s) {
  if (s == "LINEAR_BACKOFF")
    return flow::retry_logic::linear_backoff;
  if (s == "EXPONENTIAL_BACKOFF")
    return flow::retry_logic::exponential_backoff;
  return flow::retry_logic::fixed;
}

// An operator's retry or rerun schedules attempts at once, without a delay: workflows that
// had one are left out.
void retry_delays(store::connection& conn, tally& t, const check_options& o) {
  auto r = query(conn, t, std::string{R"(
SELECT t."workflowId", t."refName", t."iteration", t."attempt",
       )"} + ms_of("t.\"scheduledAt\"") + R"( AS "scheduledMs",
       )" + ms_of(witnessed("t.\"startedAt\"", "min", "TASK_STARTED")) + R"( AS "startedMs",
       d."retryLogic"::text AS "retryLogic", d."retryDelaySeconds",
       coalesce(d."maxRetryDelaySeconds", 0) AS "maxRetryDelaySeconds", d."backoffScaleFactor"
  FROM "TaskExecutions" t)" + task_join("t") + R"(
  JOIN "TaskExecutions" p ON p."workflowId" = t."workflowId" AND p."refName" = t."refName"
   AND p."iteration" = t."iteration" AND p."attempt" = t."attempt" - 1
 WHERE w."startedAt" >= )" + since_sql + R"(
   AND t."attempt" > 0 AND t."startedAt" IS NOT NULL AND t."queueName" IS NOT NULL
   AND p."status" IN ('FAILED', 'TIMED_OUT')
   AND NOT EXISTS (SELECT 1 FROM "WorkflowEvents" e
                    WHERE e."workflowId" = t."workflowId"
                      AND e."eventType" IN ('WORKFLOW_RETRIED', 'WORKFLOW_RERUN', 'WORKFLOW_RESTARTED'))
 ORDER BY t."workflowId", t."refName", t."iteration", t."attempt")",
                 store::params::of(o.since_ms));
  if (!r)
    return;
  const int wf = r->column_named("workflowId"), ref = r->column_named("refName"),
            it = r->column_named("iteration"), attempt = r->column_named("attempt"),
            scheduled = r->column_named("scheduledMs"), started = r->column_named("startedMs"),
            logic = r->column_named("retryLogic"), delay = r->column_named("retryDelaySeconds"),
            cap = r->column_named("maxRetryDelaySeconds"),
            scale = r->column_named("backoffScaleFactor");
  for (int i = 0; i < r->rows(); ++i) {
    flow::task_def def;
    def.logic = logic_of(r->text(i, logic));
    def.retry_delay_seconds = r->i64(i, delay);
    def.max_retry_delay_seconds = r->i64(i, cap);
    def.backoff_scale_factor = r->i64(i, scale);
    def.backoff_jitter_ms = 0;
    flow::task_identity failed{r->str(i, ref), r->i32(i, it), r->i32(i, attempt) - 1};
    auto wait = flow::retry_delay_ms(def, r->str(i, wf), failed);
    if (wait <= 0)
      continue;
    t.checked();
    auto due = r->i64(i, scheduled) + wait;
    auto start = r->i64(i, started);
    if (start + stamp_slack_ms < due)
      t.violation("retry " + r->str(i, wf) + " " + r->str(i, ref) + "#" + r->str(i, it)
                  + " attempt " + r->str(i, attempt) + " started " + std::to_string(due - start)
                  + " ms before its retry delay of " + std::to_string(wait) + " ms");
  }
}

} // namespace

rule_result check_no_early_timer(store::connection& conn, const check_options& o) {
  tally t{"no_early_timer"};
  fired_timers(conn, t, o);
  timer_events(conn, t, o);
  timed_out_tasks(conn, t, o);
  timed_out_workflows(conn, t, o);
  waits(conn, t, o);
  retry_delays(conn, t, o);
  return t.done();
}

} // namespace nf::fault::detail
