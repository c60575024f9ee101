#include "store/timers.hpp"

#include <set>

#include <boost/json.hpp>

#include "flow/retry.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/pg/hour_window.hpp"
#include "store/pg/pipeline.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

constexpr statement arm{"timer.arm", R"(
INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt", "taskId",
                      "leaseToken")
SELECT now() + u.ms * interval '1 millisecond', u.shard, u.kind::timer_kind, u.wf,
       uuid_extract_timestamp(u.wf), u.tid, u.tok
  FROM unnest($1::bigint[], $2::smallint[], $3::text[], $4::uuid[], $5::uuid[], $6::uuid[])
       AS u(ms, shard, kind, wf, tid, tok))"};

// The transaction's now(), which the claim's bounds use: its hours are the claim's window.
constexpr statement transaction_now{"timer.transaction_now",
                                    R"(SELECT extract(epoch FROM now())::bigint AS now_s)"};

// §4.5: both "fireAt" bounds, in the claim and again on the outer UPDATE, so both prune to
// the due partitions. It runs as the variant for the hours of those bounds (fire_due_timers,
// store/pg/hour_window.hpp): its plan leaves out the hours ahead and those past the horizon,
// which the bounds prune only when the executor starts. It names "Timers" alone: what the
// claimed timers point at is read by claimed_targets, only when it claimed any.
constexpr statement claim_due{"timer.claim_due", R"(
WITH c AS (
  SELECT "id", "fireAt" FROM "Timers"
   WHERE "fireAt" <= now() AND "fireAt" >= now() - make_interval(hours => $1::int)
     /*hours: "fireAt" */ AND "claimedAt" IS NULL
     AND ($2::smallint[] IS NULL OR "shard" = ANY($2::smallint[]))
   ORDER BY "fireAt" LIMIT $3 FOR UPDATE SKIP LOCKED),
f AS (
  UPDATE "Timers" t SET "claimedAt" = now()
    FROM c
   WHERE t."id" = c."id" AND t."fireAt" = c."fireAt"
     AND t."fireAt" <= now() AND t."fireAt" >= now() - make_interval(hours => $1::int)
     /*hours: t."fireAt" */
  RETURNING t."id", t."kind", t."workflowId", t."taskId", t."leaseToken", t."shard", t."fireAt")
SELECT f."id", f."kind"::text, f."workflowId", f."taskId", f."leaseToken", f."shard"
  FROM f
 ORDER BY f."fireAt", f."id")"};

// What the claimed timers point at, one row per timer in claim_due's order ($1 workflow
// ids, $2 task ids, NULL for a workflow's own timer). Kept apart from the claim because it
// names every partition of "TaskExecutions" (twice) and of "TaskQueues": within the claim,
// its generic plan would be built again after a vacuum of any of them, at the timer's
// checks that find nothing due too, milliseconds each. The reads take no
// lock: what they say is only a plan, which apply_transition re-checks under the locks (I6).
constexpr statement claimed_targets{"timer.claimed_targets", R"(
SELECT w."status"::text AS workflow_status, w."namespaceId",
       te."status"::text AS task_status, te."queueName", te."refName", te."scheduledAt",
       te."pollCount",
       q."taskId" IS NOT NULL AS queued, q."leaseToken", o.is_open IS NOT NULL AS ref_open
  FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS f(wf, tid, ord)
  LEFT JOIN LATERAL (
    SELECT we."status", we."namespaceId" FROM "WorkflowExecutions" we
     WHERE we."id" = f.wf AND we."startedAt" = uuid_extract_timestamp(f.wf)) w ON true
  LEFT JOIN LATERAL (
    SELECT x."status", x."queueName", x."refName", x."iteration", x."scheduledAt", x."pollCount"
      FROM "TaskExecutions" x WHERE x."workflowId" = f.wf AND x."id" = f.tid) te
    ON true
  LEFT JOIN LATERAL (
    SELECT y."taskId", y."leaseToken" FROM "TaskQueues" y
     WHERE y."queueName" = te."queueName" AND y."taskId" = f.tid) q ON true
  LEFT JOIN LATERAL (
    SELECT true AS is_open FROM "TaskExecutions" z
     WHERE z."workflowId" = f.wf AND z."refName" = te."refName"
       AND z."iteration" = te."iteration" AND z."status" IN ('SCHEDULED', 'IN_PROGRESS')
     LIMIT 1) o ON true
 ORDER BY f.ord)"};

// Run as the variant for the horizon up to an hour ahead (earliest_pending_timer), by this
// process's clock.
constexpr statement earliest{"timer.earliest_pending", R"(
SELECT GREATEST(0, extract(epoch FROM ("fireAt" - now())) * 1000)::bigint AS in_ms FROM "Timers"
 WHERE "claimedAt" IS NULL AND "fireAt" >= now() - make_interval(hours => $1::int)
   /*hours: "fireAt" */ AND ($2::smallint[] IS NULL OR "shard" = ANY($2::smallint[]))
 ORDER BY "fireAt" LIMIT 1)"};

// How far ahead the earliest pending timer is looked for: the timer's own poll
// (timer.poll_interval_ms, an hour at most) finds one due later. The window reaches ten
// minutes further each way, for this process's clock being off the server's; a timer it
// misses even so is found by the poll too.
constexpr int64_t earliest_ahead_s = 3600;

constexpr const char* kind_names[] = {"scheduleToStart", "startToClose", "taskTimeout",
                                      "workflowTimeout", "wait", "delay"};

caf::expected<void> validate(const std::vector<timer_spec>& timers) {
  for (size_t i = 0; i < timers.size(); ++i) {
    const auto& t = timers[i];
    auto at = "timers[" + std::to_string(i) + "]";
    if (t.after_ms < 0)
      return make_error(errc::invalid, at + ".after_ms: expected an integer >= 0, got "
                                         + std::to_string(t.after_ms));
    if (t.kind != timer_kind::workflow_timeout && !t.task)
      return make_error(errc::invalid, at + ".task: expected a task id for a "
                                         + std::string{to_sql(t.kind)} + " timer");
    if (t.kind == timer_kind::start_to_close && !t.token)
      return make_error(errc::invalid, at + ".token: expected the lease token a startToClose "
                                            "timer guards");
    if (t.shard < 0)
      return make_error(errc::invalid, at + ".shard: expected an integer >= 0");
  }
  return {};
}

/// Where claim_due's result holds its columns.
struct claim_columns {
  explicit claim_columns(const result& r)
    : id(r.column_named("id")), kind(r.column_named("kind")),
      workflow(r.column_named("workflowId")), task(r.column_named("taskId")),
      token(r.column_named("leaseToken")), shard(r.column_named("shard")) {}
  int id, kind, workflow, task, token, shard;
};

/// Where claimed_targets' result holds its columns.
struct target_columns {
  explicit target_columns(const result& r)
    : workflow_status(r.column_named("workflow_status")), ns(r.column_named("namespaceId")),
      task_status(r.column_named("task_status")), queue(r.column_named("queueName")),
      ref(r.column_named("refName")), scheduled_at(r.column_named("scheduledAt")),
      queued(r.column_named("queued")), token(r.column_named("leaseToken")),
      ref_open(r.column_named("ref_open")), polls(r.column_named("pollCount")) {}
  int workflow_status, ns, task_status, queue, ref, scheduled_at, queued, token, ref_open, polls;
};

bool open_workflow(const result& t, const target_columns& tc, int i) {
  if (t.is_null(i, tc.workflow_status))
    return false;
  auto status = t.text(i, tc.workflow_status);
  return status == "RUNNING" || status == "PAUSED";
}

/// What claimed timer `i` does (row i of claim_due's `c`), decided from the unlocked read
/// of its targets (row i of claimed_targets' `t`); `plan` gets its writes.
fired_timer plan_one(const result& c, const claim_columns& cc, const result& t,
                     const target_columns& tc, int i, std::set<std::string>& touched,
                     transition_plan& plan) {
  fired_timer f;
  f.id = c.i64(i, cc.id);
  f.kind = timer_kind_from_sql(c.text(i, cc.kind)).value_or(timer_kind::delay);
  f.workflow = workflow_id{c.str(i, cc.workflow)};
  if (!c.is_null(i, cc.task))
    f.task = task_id{c.str(i, cc.task)};
  f.shard = static_cast<int16_t>(c.i64(i, cc.shard));
  if (!open_workflow(t, tc, i))
    return f;
  auto shard = f.shard;
  namespace_id ns{t.str(i, tc.ns)};
  // The task's status, or none for a workflow timer.
  auto status = t.is_null(i, tc.task_status) ? std::nullopt
                                             : flow::parse_task_status(t.str(i, tc.task_status));
  bool scheduled = status.has_value() && *status == flow::task_status::scheduled;
  bool in_progress = status.has_value() && *status == flow::task_status::in_progress;
  bool has_queue_row = t.boolean(i, tc.queued);
  bool leased = !t.is_null(i, tc.token);
  // One action per task per batch: a second timer on a task already acted on is a no-op.
  auto target = f.task ? f.task->str() : "wf:" + f.workflow.str();
  if (touched.count(target) > 0)
    return f;
  boost::json::object payload{{"timer", to_sql(f.kind)}, {"timerId", f.id}};
  auto timed_out = [&](flow::task_status from, std::optional<lease_token> token) {
    if (has_queue_row)
      plan.removals.push_back(queue_removal{t.str(i, tc.queue), *f.task, std::move(token), false});
    plan.finishes.push_back(task_finish{f.workflow, *f.task, from, flow::task_status::timed_out, std::nullopt,
                                        f.kind == timer_kind::start_to_close
                                          ? std::string{flow::response_timeout_reason}
                                          : std::string{to_sql(f.kind)} + " timeout",
                                        t.str(i, tc.scheduled_at), std::nullopt});
    plan.events.push_back(event_draft{f.workflow, ns, shard, "TASK_TIMED_OUT", f.task,
                                      t.str(i, tc.ref), json(payload)});
  };
  switch (f.kind) {
    case timer_kind::schedule_to_start:
      // It waits for a first poll: a task polled and given back (a callback) is not late.
      f.acted = scheduled && !leased && (t.is_null(i, tc.polls) || t.i64(i, tc.polls) == 0);
      if (f.acted)
        timed_out(flow::task_status::scheduled, std::nullopt);
      break;
    case timer_kind::start_to_close:
      f.acted = in_progress && leased && t.str(i, tc.token) == c.str(i, cc.token);
      if (f.acted)
        timed_out(flow::task_status::in_progress, lease_token{c.str(i, cc.token)});
      break;
    case timer_kind::task_timeout:
      f.acted = t.boolean(i, tc.ref_open);
      break;
    case timer_kind::workflow_timeout:
      f.acted = true;
      break;
    case timer_kind::wait:
      f.acted = scheduled || in_progress;
      break;
    case timer_kind::delay:
      f.acted = scheduled && !has_queue_row;
      if (f.acted && !t.is_null(i, tc.queue)) {
        f.queue = t.str(i, tc.queue);
        plan.inserts.push_back(queue_insert{f.workflow, *f.task, shard});
        touched.insert(target);
        return f; // the lessor takes it from here; the decider has nothing to decide
      }
      break;
  }
  if (!f.acted)
    return f;
  touched.insert(target);
  if (f.kind == timer_kind::task_timeout || f.kind == timer_kind::workflow_timeout
      || f.kind == timer_kind::wait || f.kind == timer_kind::delay)
    plan.events.push_back(event_draft{f.workflow, ns, shard, "TIMER_FIRED", f.task,
                                      t.opt_str(i, tc.ref), json(payload)});
  plan.wakes.push_back(decider_wake{f.workflow, ns, shard, to_sql(f.kind)});
  return f;
}

} // namespace

const char* to_sql(timer_kind k) {
  return kind_names[static_cast<int>(k)];
}

std::optional<timer_kind> timer_kind_from_sql(std::string_view s) {
  for (int i = 0; i < 6; ++i)
    if (s == kind_names[i])
      return static_cast<timer_kind>(i);
  return std::nullopt;
}

void add_arm_timers(pipeline& p, const std::vector<timer_spec>& timers) {
  if (timers.empty())
    return;
  std::vector<int64_t> ms, shards;
  std::vector<std::string> kinds, wfs;
  std::vector<std::optional<std::string>> tids, toks;
  for (const auto& t : timers) {
    ms.push_back(t.after_ms);
    shards.push_back(t.shard);
    kinds.emplace_back(to_sql(t.kind));
    wfs.push_back(t.workflow.str());
    tids.push_back(t.task ? std::optional<std::string>{t.task->str()} : std::nullopt);
    toks.push_back(t.token ? std::optional<std::string>{t.token->str()} : std::nullopt);
  }
  p.add(arm, params::of(int_array(ms), int_array(shards), text_array(kinds), text_array(wfs),
                        text_array(tids), text_array(toks)));
}

caf::expected<void> arm_timers(connection& conn, const std::vector<timer_spec>& timers) {
  if (auto v = validate(timers); !v)
    return v;
  pipeline p{conn};
  add_arm_timers(p, timers);
  if (p.size() == 0)
    return {};
  if (auto r = p.run(); !r)
    return std::move(r.error());
  return {};
}

caf::expected<std::vector<fired_timer>> fire_due_timers(transaction& tx, const fire_options& opt) {
  if (opt.limit < 1 || opt.limit > 10000)
    return make_error(errc::invalid, "fire_options.limit: expected an integer 1 … 10000, got "
                                       + std::to_string(opt.limit));
  if (opt.horizon_hours < 1)
    return make_error(errc::invalid, "fire_options.horizon_hours: expected an integer >= 1, got "
                                       + std::to_string(opt.horizon_hours));
  // The fence goes with the clock: no round trip of its own.
  pipeline first{tx.conn()};
  first.add(transaction_now, params{});
  add_fence_check(first, opt.fence);
  auto now_s = first.run();
  if (!now_s)
    return std::move(now_s.error());
  auto now = now_s->front().i64(0, now_s->front().column_named("now_s"));
  auto window = hours_covering(now - int64_t{opt.horizon_hours} * 3600, now, opt.horizon_hours + 1);
  auto claimed = tx.conn().run(window ? within_hours(claim_due, *window) : claim_due,
                               params::of(opt.horizon_hours, shard_filter(opt.shards), opt.limit));
  if (!claimed)
    return std::move(claimed.error());
  if (claimed->rows() == 0)
    return std::vector<fired_timer>{};
  const claim_columns cc{*claimed};
  auto targets = tx.conn().run_n(
    claimed_targets,
    params::of(text_array(*claimed, cc.workflow), text_array(*claimed, cc.task)),
    claimed->rows());
  if (!targets)
    return std::move(targets.error());
  const target_columns tc{*targets};
  transition_plan plan;
  std::set<std::string> touched;
  std::vector<fired_timer> out;
  for (int i = 0; i < claimed->rows(); ++i)
    out.push_back(plan_one(*claimed, cc, *targets, tc, i, touched, plan));
  if (auto a = apply_transition(tx.conn(), plan); !a)
    return std::move(a.error());
  return out;
}

caf::expected<std::vector<fired_timer>> fire_due_timers(connection& conn, const fire_options& opt) {
  return perform_replanning(conn, [&](transaction& tx) { return fire_due_timers(tx, opt); });
}

const statement& timer_claim_statement() {
  return claim_due;
}

caf::expected<std::optional<int64_t>>
earliest_pending_timer(connection& conn, const std::vector<shard_id>& shards, int horizon_hours) {
  auto window = hours_around_now(-int64_t{horizon_hours} * 3600, earliest_ahead_s,
                                 horizon_hours + 3);
  auto r = conn.run01(window ? within_hours(earliest, *window) : earliest,
                      params::of(horizon_hours, shard_filter(shards)));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return std::optional<int64_t>{};
  return std::optional<int64_t>{(*r)->i64(0, (*r)->column_named("in_ms"))};
}

} // namespace nf::store
