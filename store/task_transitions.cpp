#include "store/task_transitions.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "store/decide_queues.hpp"
#include "store/event_seq.hpp"
#include "store/payloads.hpp"
#include "store/output_cache.hpp"
#include "store/pg/hour_window.hpp"
#include "store/pg/pipeline.hpp"

namespace nf::store {

namespace {

// I2 (store/decide_queues.hpp). Rows go in ascending workflow id so two batches lock in
// the same order.
constexpr statement wake_deciders{"decide_queue.wake", NF_WAKE_DECIDERS(R"(
SELECT u.wf, u.ns, uuid_extract_timestamp(u.wf), u.shard, u.reason
  FROM unnest($1::uuid[], $2::uuid[], $3::smallint[], $4::text[]) AS u(wf, ns, shard, reason)
 ORDER BY u.wf)")};

// I5: the token read is re-checked under the row lock; NULL token = still unleased.
constexpr statement remove_queue_rows{"task_queue.remove", R"(
DELETE FROM "TaskQueues" q
 USING unnest($1::text[], $2::uuid[], $3::uuid[], $4::bool[]) AS u(qn, tid, tok, expired_only)
 WHERE q."queueName" = u.qn AND q."taskId" = u.tid
   AND q."leaseToken" IS NOT DISTINCT FROM u.tok
   AND (NOT u.expired_only OR q."leaseExpiresAt" < now())
   AND q."queueName" = ANY($1::text[]) AND q."taskId" = ANY($2::uuid[])
RETURNING q."taskId")"};

// A delayed task enters its queue only if it is still SCHEDULED (read under this
// statement's fresh snapshot, after the locks above were taken).
constexpr statement enqueue_delayed{"task_queue.enqueue_delayed", R"(
INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard")
SELECT t."queueName", t."id", t."workflowId", t."taskType", COALESCE(w."priority", 0), u.shard
  FROM unnest($1::uuid[], $2::uuid[], $3::smallint[]) AS u(wf, tid, shard)
 CROSS JOIN LATERAL (
   SELECT te."queueName", te."id", te."workflowId", te."taskType" FROM "TaskExecutions" te
    WHERE te."workflowId" = u.wf AND te."id" = u.tid AND te."status" = 'SCHEDULED'
      AND te."queueName" IS NOT NULL
      /*prune: AND te."workflowId" = ANY($1::uuid[]) */ OFFSET 0) t
  LEFT JOIN LATERAL (
   SELECT we."priority" FROM "WorkflowExecutions" we
    WHERE we."id" = u.wf AND we."startedAt" = uuid_extract_timestamp(u.wf)
      AND we."id" = ANY($1::uuid[]) /*started: we."startedAt" */) w ON true
ON CONFLICT ("queueName", "taskId") DO NOTHING
RETURNING "taskId")", 1, 1};

// The status re-check (t."status" = u.from_st) runs on the latest row version.
// A reported output is stored with its task definition's "secretOutputFields" (top-level
// keys) replaced by "***": redacted at rest, so the history, the API, the outbox and the
// tasks and workflow output that reference it only ever see the redaction. One probe of the
// definition's key per finished task, only for an output that is an object. An output too
// large for the row comes as a reference ($8, store/payloads.hpp), its payload redacted the
// same way by the insert that stores it.
// A SIMPLE task scheduled with an output cache key ("cacheKey", set by decide.insert_tasks)
// that finishes COMPLETED writes its output, as stored (redacted), to "TaskOutputCache" for
// its TTL from now, replacing what the key held (docs/schema.md, TaskOutputCache). One row per
// key: an upsert cannot touch a row twice, so of two tasks of a batch with the same key one
// output wins; they lock the keys in key order, as any other batch does.
constexpr statement finish_tasks{"task.finish", R"(
WITH f AS (
UPDATE "TaskExecutions" t
   SET "status" = u.to_st::task_execution_status,
       "output" = CASE WHEN u.out IS NULL AND u.out_ref IS NULL THEN t."output"
                       WHEN u.out IS NULL THEN NULL
                       WHEN jsonb_typeof(u.out) <> 'object' THEN u.out
                       ELSE COALESCE((SELECT u.out || jsonb_object_agg(f, to_jsonb('***'::text))
                                        FROM "TaskDefinitions" d
                                       CROSS JOIN unnest(d."secretOutputFields") AS f
                                       WHERE d."namespaceId" = t."namespaceId"
                                         AND d."name" = t."taskDefName" AND u.out ? f),
                                     u.out) END,
       "outputPayloadId" = CASE WHEN u.out IS NULL AND u.out_ref IS NULL THEN t."outputPayloadId"
                                ELSE u.out_ref END,
       "reasonForIncompletion" = COALESCE(u.reason, t."reasonForIncompletion"),
       "endedAt" = now(), "updatedAt" = now(),
       "deciderSeenAt" = CASE WHEN u.seen THEN now() ELSE t."deciderSeenAt" END
  FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::text[],
              $7::boolean[], $8::uuid[])
       AS u(wf, tid, from_st, to_st, out, reason, seen, out_ref)
 WHERE t."workflowId" = u.wf AND t."id" = u.tid
   AND t."status" = u.from_st::task_execution_status
   AND t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[])
RETURNING t."id", t."namespaceId", t."taskDefName", t."status", t."output", t."cacheKey",
          t."cacheTtlSeconds"),
c AS (
  INSERT INTO "TaskOutputCache" ("namespaceId", "taskDefName", "key", "output", "expiresAt")
  SELECT DISTINCT ON (f."namespaceId", f."taskDefName", f."cacheKey")
         f."namespaceId", f."taskDefName", f."cacheKey", f."output",
         now() + make_interval(secs => f."cacheTtlSeconds")
    FROM f
   WHERE f."cacheKey" IS NOT NULL AND f."status" = 'COMPLETED'
     AND jsonb_typeof(f."output") = 'object' AND )" NF_OUTPUT_CACHEABLE(R"(f."output")") R"(
   ORDER BY f."namespaceId", f."taskDefName", f."cacheKey"
  ON CONFLICT ("namespaceId", "taskDefName", "key") DO UPDATE
    SET "output" = EXCLUDED."output", "expiresAt" = EXCLUDED."expiresAt", "createdAt" = now())
SELECT f."id" FROM f)", 1};

// An optimisation only (the firing re-check is the correctness, I6). A cancelled timer is
// deleted (migration 0019): no row version left behind for every finished task. SKIP
// LOCKED: a timer being fired right now is locked by its claimer, which waits for our
// "DecideQueues" row; waiting for it here would close that cycle. The bounds are what keeps
// this cheap: a generic plan sets up a scan of every partition its parameters and stable
// functions do not prune when the executor starts, and "Timers" has ~50 hourly partitions
// ahead and up to 48 behind (2.3-2.6 ms for a handful of tasks without them). From above:
// the latest deadline these tasks can have ($3 seconds after now()). From below: a minute
// ago, as a timer already due is the timer actor's to fire (a no-op by then); the
// schedule-time bound, a subquery, prunes only once the plan runs. The outer DELETE repeats
// the task filter so its side of the join is a probe of the task index too, never a scan of
// every hour.
constexpr statement cancel_timers{"timer.cancel_for_tasks", R"(
DELETE FROM "Timers" t
 USING (SELECT c."id", c."fireAt" FROM "Timers" c
         WHERE c."taskId" = ANY($1::uuid[]) AND c."claimedAt" IS NULL
           AND c."fireAt" >= (SELECT min(s) FROM unnest($2::timestamptz[]) s)
           AND c."fireAt" >= now() - interval '1 minute'
           AND c."fireAt" <= now() + make_interval(secs => $3::bigint)
         FOR UPDATE SKIP LOCKED) c
 WHERE t."id" = c."id" AND t."fireAt" = c."fireAt"
   AND t."taskId" = ANY($1::uuid[]) AND t."claimedAt" IS NULL
   AND t."fireAt" >= (SELECT min(s) FROM unnest($2::timestamptz[]) s)
   AND t."fireAt" >= now() - interval '1 minute'
   AND t."fireAt" <= now() + make_interval(secs => $3::bigint))"};

// The same cancel as the variant for the hours its tasks' timers can be in (add_finishes):
// its plan names those hours' partitions alone, so it is cheap to build again when autovacuum
// invalidates it, and only their vacuum does. The window is its only bound on "fireAt": a
// range on it, with bounds the planner does not know, looks selective on the due index, and
// a plan would walk every pending timer of the hour there. The ids locked first, as above,
// then the rows deleted by id: no join between the two scans for the planner to order by
// "fireAt". A due timer of a finished task goes too, where the timer actor would have fired
// it as a no-op.
constexpr statement cancel_timers_in_hours{"timer.cancel_for_tasks_in_hours", R"(
DELETE FROM "Timers" t
 WHERE t."id" = ANY(ARRAY(
         SELECT c."id" FROM "Timers" c
          WHERE c."taskId" = ANY($1::uuid[]) AND c."claimedAt" IS NULL /*hours: c."fireAt" */
          FOR UPDATE SKIP LOCKED))
   AND t."taskId" = ANY($1::uuid[]) AND t."claimedAt" IS NULL /*hours: t."fireAt" */)"};

// The cancel's window: from a minute ago (a timer due earlier is the timer actor's) to the
// tasks' latest deadline, by this process's clock (hours_around_now); wider than this, it
// runs as written. A timer outside the window is left to fire, a no-op (I6).
constexpr int cancel_max_hours = 4;

// A finish whose tasks' deadlines are unknown probes every partition ahead (ten years).
constexpr int64_t unknown_timers_within_s = 10LL * 366 * 24 * 3600;

// I8 and I7 in one statement. The seqs come from "lastSeq" under the execution row's lock,
// never from a clock (§4.1): one UPDATE for every workflow of the batch, whose ids arrive
// sorted, and every plan (index order, or the sorted array driving the join) locks the rows
// in ascending id order. Each event takes the seq `k` places after the workflow's old
// "lastSeq" and is given its outbox row in the same statement (while a webhook sink is
// enabled: store/decision_apply.cpp, decide.outbox), built from the same row as the event
// rather than joined back to the insert's RETURNING: the CTEs' row estimates are guesses, and
// that join would be planned as a nested loop, quadratic in the batch. "at" is the clock
// when the row is made, after the row lock, the same in both (as in store/events.cpp: it
// grows with "seq", and follows the commits that caused it). The
// statement returns the ids of the execution rows it found: a workflow missing from them has
// no row to append to. One statement, rather than an UPDATE whose result numbers the inserts,
// saves the caller a round trip. An event whose payload is stored out of line ($11,
// store/payloads.hpp) keeps '{}' and the reference in the history, and its outbox row the
// whole payload: a webhook receives what it always did.
constexpr statement append_events{"workflow_event.append", R"(
WITH s AS (
  UPDATE "WorkflowExecutions" w SET )" NF_ALLOCATE_SEQS("c.n") R"(, "updatedAt" = now()
    FROM unnest($1::uuid[], $2::bigint[]) AS c(id, n)
   WHERE w."id" = c.id AND w."startedAt" = uuid_extract_timestamp(c.id)
     AND w."id" = ANY($1::uuid[]) /*started: w."startedAt" */
  RETURNING w."id", w."lastSeq" - c.n AS base),
u AS (
  SELECT u.wf, s.base + u.k AS seq, u.ns, u.et, u.tid, u.ref, u.payload, u.shard, u.pid,
         clock_timestamp() AS at
    FROM unnest($3::uuid[], $4::bigint[], $5::uuid[], $6::text[], $7::uuid[], $8::text[],
                $9::jsonb[], $10::smallint[], $11::uuid[])
      AS u(wf, k, ns, et, tid, ref, payload, shard, pid)
    JOIN s ON s."id" = u.wf),
e AS (
  INSERT INTO "WorkflowEvents" ("workflowId", "seq", "at", "namespaceId", "eventType", "taskId",
                                "refName", "payload", "payloadId")
  SELECT wf, seq, at, ns, et::workflow_event_type, tid, ref,
         CASE WHEN pid IS NULL THEN payload ELSE '{}'::jsonb END, pid FROM u),
o AS (
  INSERT INTO "OutboxEvents" ("shard", "namespaceId", "workflowId", "eventType", "payload",
                              "publishedAt")
  SELECT shard, ns, wf, et,
         jsonb_build_object('workflowId', wf, 'seq', seq, 'at', at, 'taskId', tid,
                            'refName', ref, 'data', payload),
         NULL::timestamptz
    FROM u WHERE (SELECT "outbox_published_at"()) IS NULL)
SELECT "id" FROM s)", 0, 1};

// Locks execution rows as an UPDATE of them would (transition_plan::locked), without
// making a row version.
constexpr statement lock_executions{"workflow_execution.lock", R"(
SELECT w."id" FROM "WorkflowExecutions" w
 WHERE w."id" = ANY($1::uuid[]) /*started: w."startedAt" */
 ORDER BY w."id"
   FOR NO KEY UPDATE)", 0, 1};

caf::error stale(const char* what, size_t want, int64_t got) {
  return make_error(errc::stale, std::string{what} + ": plan expected " + std::to_string(want)
                                   + " rows, the locked rows gave " + std::to_string(got));
}


void add_wakes(pipeline& p, std::vector<decider_wake> wakes) {
  std::stable_sort(wakes.begin(), wakes.end(),
                   [](const auto& a, const auto& b) { return a.workflow < b.workflow; });
  // One row per workflow: an upsert cannot touch the same row twice in one statement.
  wakes.erase(std::unique(wakes.begin(), wakes.end(),
                          [](const auto& a, const auto& b) { return a.workflow == b.workflow; }),
              wakes.end());
  std::vector<std::string> wfs, nss, reasons;
  std::vector<int64_t> shards;
  for (const auto& w : wakes) {
    wfs.push_back(w.workflow.str());
    nss.push_back(w.ns.str());
    shards.push_back(w.shard);
    reasons.push_back(w.reason);
  }
  p.add(wake_deciders,
        params::of(text_array(wfs), text_array(nss), int_array(shards), text_array(reasons)));
}

void add_removals(pipeline& p, const std::vector<queue_removal>& removals) {
  std::vector<std::string> qns, tids, expired;
  std::vector<std::optional<std::string>> toks;
  for (const auto& r : removals) {
    qns.push_back(r.queue);
    tids.push_back(r.task.str());
    toks.push_back(r.token ? std::optional<std::string>{r.token->str()} : std::nullopt);
    expired.emplace_back(r.expired_only ? "t" : "f");
  }
  p.add(remove_queue_rows,
        params::of(text_array(qns), text_array(tids), text_array(toks), text_array(expired)));
}

void add_inserts(pipeline& p, const std::vector<queue_insert>& inserts) {
  std::vector<int64_t> shards;
  for (const auto& i : inserts)
    shards.push_back(i.shard);
  p.add(enqueue_delayed, params::of(ids_array(inserts, [](const auto& i) { return i.workflow; }),
                                    ids_array(inserts, [](const auto& i) { return i.task; }),
                                    int_array(shards)));
}

/// The status change, then the timer cancel (both per task), as the hour-window variant
/// when the tasks' deadlines are near enough. An output too large for its row goes to
/// "Payloads" in the same round trip.
void add_finishes(pipeline& p, const std::vector<task_finish>& finishes) {
  std::vector<std::string> from, to, sched;
  std::vector<std::optional<json_text>> outs;
  std::vector<std::optional<std::string>> reasons, out_refs;
  payload_writes payloads;
  std::vector<std::string> seen;
  int64_t within_s = 0;
  for (const auto& f : finishes) {
    seen.emplace_back(f.seen ? "t" : "f");
    from.emplace_back(flow::to_string(f.from));
    to.emplace_back(flow::to_string(f.to));
    auto out = payloads.place_reported(f.workflow, f.task, f.output);
    outs.push_back(out.inline_json);
    out_refs.push_back(out.payload_id);
    reasons.push_back(f.reason);
    sched.push_back(f.scheduled_at);
    within_s = std::max(within_s, f.timers_within_s.value_or(unknown_timers_within_s));
  }
  auto tids = ids_array(finishes, [](const auto& f) { return f.task; });
  p.add(finish_tasks, params::of(ids_array(finishes, [](const auto& f) { return f.workflow; }),
                                 tids, text_array(from), text_array(to), json_array(outs),
                                 text_array(reasons), text_array(seen), text_array(out_refs)));
  payloads.add_to(p);
  auto window = hours_around_now(-60, within_s, cancel_max_hours);
  if (window)
    p.add(within_hours(cancel_timers_in_hours, *window), params::of(tids));
  else
    p.add(cancel_timers, params::of(tids, text_array(sched), within_s));
}

} // namespace

const statement& timer_cancel_statement() {
  return cancel_timers;
}

array_literal shard_array(const std::vector<shard_id>& shards) {
  std::vector<int64_t> xs;
  xs.reserve(shards.size());
  for (auto s : shards)
    xs.push_back(s.value());
  return int_array(xs);
}

std::optional<array_literal> shard_filter(const std::vector<shard_id>& shards) {
  if (shards.empty())
    return std::nullopt;
  return shard_array(shards);
}

bool add_events(pipeline& p, const std::vector<event_draft>& events) {
  if (events.empty())
    return false;
  // Events per workflow, numbered as they come; the map's order (ascending id) is the order
  // the execution rows are locked in.
  std::map<std::string, int64_t> counts;
  std::vector<std::string> wfs, nss, types;
  std::vector<std::optional<std::string>> tids, refs, payload_ids;
  std::vector<int64_t> ks, shards;
  std::vector<json_text> payloads;
  payload_writes out_of_line;
  for (const auto& e : events) {
    wfs.push_back(e.workflow.str());
    ks.push_back(++counts[e.workflow.str()]);
    nss.push_back(e.ns.str());
    types.emplace_back(e.type);
    tids.push_back(e.task ? std::optional<std::string>{e.task->str()} : std::nullopt);
    refs.push_back(e.ref);
    payloads.push_back(e.payload);
    payload_ids.push_back(out_of_line.place(e.workflow, e.payload).payload_id);
    shards.push_back(e.shard);
  }
  std::vector<std::string> ids;
  std::vector<int64_t> ns;
  for (const auto& [wf, n] : counts) {
    ids.push_back(wf);
    ns.push_back(n);
  }
  p.add(append_events, params::of(text_array(ids), int_array(ns), text_array(wfs), int_array(ks),
                                  text_array(nss), text_array(types), text_array(tids),
                                  text_array(refs), json_array(payloads), int_array(shards),
                                  text_array(payload_ids)));
  out_of_line.add_to(p);
  return true;
}

caf::expected<void> events_written(const std::vector<event_draft>& events, const result& r) {
  std::set<std::string> found;
  const int id = r.column_named("id");
  for (int row = 0; row < r.rows(); ++row)
    found.insert(r.str(row, id));
  for (const auto& e : events)
    if (found.count(e.workflow.str()) == 0)
      return make_error(errc::not_found, "workflow " + e.workflow.str()
                                           + ": no execution row to append events to");
  return {};
}

transition_slots add_transition(pipeline& p, const transition_plan& plan) {
  // In lock order: "DecideQueues" (I2), the execution rows (seq allocation and events, I8),
  // the queue rows (the lease re-check, I5, and delayed enqueues), then the task rows and
  // their timers. The re-checks are read after it: a stale plan has written more than it
  // should, but the caller rolls all of it back.
  transition_slots at;
  if (!plan.wakes.empty())
    add_wakes(p, plan.wakes);
  at.events_at = p.size();
  at.appended = add_events(p, plan.events);
  at.locked_at = p.size();
  if (!plan.locked.empty())
    p.add(lock_executions, params::of(ids_array(plan.locked, [](const auto& id) { return id; })));
  at.removals_at = p.size();
  if (!plan.removals.empty())
    add_removals(p, plan.removals);
  at.inserts_at = p.size();
  if (!plan.inserts.empty())
    add_inserts(p, plan.inserts);
  at.finishes_at = p.size();
  if (!plan.finishes.empty())
    add_finishes(p, plan.finishes);
  return at;
}

caf::expected<void> transition_applied(const transition_plan& plan, const transition_slots& at,
                                       const std::vector<result>& rs) {
  if (at.appended)
    if (auto w = events_written(plan.events, rs[at.events_at]); !w)
      return w;
  if (!plan.locked.empty() && rs[at.locked_at].rows() != static_cast<int>(plan.locked.size()))
    return make_error(errc::not_found, "workflow_execution.lock: "
                                         + std::to_string(plan.locked.size())
                                         + " workflows, " + std::to_string(rs[at.locked_at].rows())
                                         + " execution rows");
  auto check = [&](size_t want, size_t i, const char* what) -> caf::expected<void> {
    if (want == 0 || rs[i].rows() == static_cast<int>(want))
      return {};
    return stale(what, want, rs[i].rows());
  };
  if (auto c = check(plan.removals.size(), at.removals_at, "task_queue.remove"); !c)
    return c;
  if (auto c = check(plan.inserts.size(), at.inserts_at, "task_queue.enqueue_delayed"); !c)
    return c;
  return check(plan.finishes.size(), at.finishes_at, "task.finish");
}

caf::expected<void> run_transition(pipeline& p, const transition_plan& plan,
                                   const transition_slots& at) {
  if (p.size() == 0)
    return {};
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  return transition_applied(plan, at, *rs);
}

caf::expected<void> apply_transition(connection& conn, const transition_plan& plan) {
  // One round trip.
  pipeline p{conn};
  auto at = add_transition(p, plan);
  return run_transition(p, plan, at);
}

} // namespace nf::store
