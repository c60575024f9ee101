// apply_decisions(): what one evaluation per workflow writes, batched across
// workflows so that a commit carries many of them (DESIGN §3 fast paths).
#include <algorithm>
#include <set>

#include <boost/json/object.hpp>

#include "store/decisions.hpp"
#include "store/event_seq.hpp"
#include "store/json.hpp"
#include "store/payloads.hpp"
#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/queues.hpp"

namespace nf::store {

namespace {

// I4: the compare-and-set. Zero rows for a workflow = another evaluation
// committed first (or the row is gone): the whole write is stale, and the statement says so
// itself ("fail_if", migration 0018, SQLSTATE NF001 = errc::stale), naming each workflow it
// missed, so the transaction is aborted on the server even when its COMMIT is already in the
// same round trip (apply_decisions' `commit`). It also allocates the
// seqs of the decision's $8 events (I8): the row lock is the one the compare-and-set
// takes anyway, so the history costs no second update of the execution row. It heads the
// pipeline of the decision's writes, which need nothing back from it: they carry the
// snapshot's namespace, shard and priority, and the events read their seqs from the row.
constexpr statement cas{"decide.cas", R"(
WITH c AS (
UPDATE "WorkflowExecutions" w SET
  "version" = w."version" + 1,
  )" NF_ALLOCATE_SEQS("u.n") R"(,
  "status" = COALESCE(u.status::workflow_execution_status, w."status"),
  "output" = CASE WHEN u.output IS NULL AND u.output_ref IS NULL THEN w."output"
                  ELSE u.output END,
  "outputPayloadId" = CASE WHEN u.output IS NULL AND u.output_ref IS NULL THEN w."outputPayloadId"
                           ELSE u.output_ref END,
  "reasonForIncompletion" = COALESCE(u.reason, w."reasonForIncompletion"),
  "failedTaskRef" = COALESCE(u.failed_ref, w."failedTaskRef"),
  "variables" = CASE WHEN u.vars IS NULL THEN w."variables" ELSE w."variables" || u.vars END,
  "endedAt" = CASE WHEN u.status IS NULL THEN w."endedAt"
                   WHEN u.status IN ('RUNNING', 'PAUSED') THEN NULL
                   ELSE COALESCE(w."endedAt", now()) END,
  "updatedAt" = now()
  FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::jsonb[], $5::text[], $6::text[],
              $7::jsonb[], $8::integer[], $9::uuid[])
         AS u(id, v, status, output, reason, failed_ref, vars, n, output_ref)
 WHERE w."id" = u.id AND w."startedAt" = uuid_extract_timestamp(u.id) AND w."version" = u.v
   AND w."id" = ANY($1::uuid[]) /*started: w."startedAt" */
RETURNING w."id")
SELECT c."id" FROM c
 WHERE (SELECT "fail_if"('stale evaluation: another evaluation committed first for workflow '
                         || string_agg(m.id::text || ' (expected version ' || m.v || ')', ', ')
                         || '; roll back and requeue', 'NF001')
          FROM unnest($1::uuid[], $2::bigint[]) AS m(id, v)
         WHERE m.id NOT IN (SELECT c."id" FROM c)))", 0, 1};

// Lock order: queue rows before task rows. Only tasks still non-terminal.
constexpr statement unqueue{"decide.unqueue", R"(
DELETE FROM "TaskQueues" q
 USING (SELECT t."queueName", t."id"
          FROM unnest($1::uuid[], $2::text[], $3::integer[], $4::integer[]) AS u(wf, ref, iter, att)
         CROSS JOIN LATERAL (
           SELECT "queueName", "id" FROM "TaskExecutions"
            WHERE "workflowId" = u.wf AND "refName" = u.ref AND "iteration" = u.iter
              AND "attempt" = u.att AND "queueName" IS NOT NULL
              AND "status" IN ('SCHEDULED', 'IN_PROGRESS')
              /*prune: AND "workflowId" = ANY($1::uuid[]) */ OFFSET 0) t) x
 WHERE q."queueName" = x."queueName" AND q."taskId" = x."id")", 1};

// I1: the identity is the arbiter; a re-run evaluation inserts nothing twice,
// and a retry (attempt + 1) is a different identity. Only rows actually
// inserted get a queue row. A task inserted terminal was executed by this
// evaluation, so it is already seen. Only a retry (attempt > 0) looks up the attempt it
// retries: a first attempt would probe the identity index for nothing. In a small batch's
// variant the retried task's lookup is also bounded by the workflow ids, so it sets up only
// their partitions (the `prune:` comment, store/pg/pruning.hpp).
// A task leased in the decision (task_lease, $16–$19) comes with its id and is inserted
// IN_PROGRESS, its queue row already leased: the rows the lessor's claim and stamp would
// leave, without the two updates (the queue row never enters the dequeue index). A leased
// task not inserted (its identity there already, I1) fails the statement, before any COMMIT
// in its round trip: its event and timer would name a row that does not exist. Never
// expected under the compare-and-set.
constexpr statement insert_tasks{"decide.insert_tasks", R"(
WITH u AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::integer[], $5::integer[],
                       $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::jsonb[],
                       $12::text[], $13::boolean[], $14::smallint[], $15::smallint[],
                       $16::uuid[], $17::text[], $18::uuid[], $19::bigint[], $20::uuid[],
                       $21::uuid[], $22::text[], $23::integer[])
    AS u(wf, ns, ref, iter, att, type, def, queue, status, input, output, reason, enqueue,
         priority, shard, id, worker, token, lease_ms, input_ref, output_ref, cache_key,
         cache_ttl)),
i AS (
  INSERT INTO "TaskExecutions"
    ("id", "workflowId", "namespaceId", "refName", "iteration", "attempt", "taskType",
     "taskDefName", "queueName", "status", "input", "output", "reasonForIncompletion",
     "retriedTaskId", "startedAt", "endedAt", "deciderSeenAt", "workerId", "pollCount",
     "inputPayloadId", "outputPayloadId", "cacheKey", "cacheTtlSeconds")
  SELECT COALESCE(u.id, uuidv7()), u.wf, u.ns, u.ref, u.iter, u.att, u.type::task_execution_type,
         u.def, u.queue,
         u.status::task_execution_status, u.input, u.output, u.reason,
         CASE WHEN u.att > 0 THEN
           (SELECT p."id" FROM "TaskExecutions" p
             WHERE p."workflowId" = u.wf AND p."refName" = u.ref AND p."iteration" = u.iter
               AND p."attempt" = u.att - 1 /*prune: AND p."workflowId" = ANY($1::uuid[]) */) END,
         CASE WHEN u.status <> 'SCHEDULED' THEN now() END,
         CASE WHEN u.status NOT IN ('SCHEDULED', 'IN_PROGRESS') THEN now() END,
         CASE WHEN u.status NOT IN ('SCHEDULED', 'IN_PROGRESS') THEN now() END,
         u.worker, CASE WHEN u.worker IS NULL THEN 0 ELSE 1 END, u.input_ref, u.output_ref,
         u.cache_key, u.cache_ttl
    FROM u
  ON CONFLICT ("workflowId", "refName", "iteration", "attempt") DO NOTHING
  RETURNING "workflowId", "id", "refName", "iteration", "attempt", "taskType", "queueName",
            "workerId"),
q AS (
  INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard",
                            "leaseToken", "leaseExpiresAt", "leasedBy")
  SELECT i."queueName", i."id", i."workflowId", i."taskType", u.priority, u.shard, u.token,
         to_timestamp(u.lease_ms::double precision / 1000), u.worker
    FROM i JOIN u ON u.wf = i."workflowId" AND u.ref = i."refName" AND u.iter = i."iteration"
                 AND u.att = i."attempt"
   WHERE u.enqueue
  ON CONFLICT ("queueName", "taskId") DO NOTHING)
SELECT i."workflowId", i."id", i."refName", i."iteration", i."attempt", i."taskType",
       CASE WHEN u.enqueue THEN i."queueName" END AS "queueName", u.token IS NOT NULL AS leased
  FROM i JOIN u ON u.wf = i."workflowId" AND u.ref = i."refName" AND u.iter = i."iteration"
               AND u.att = i."attempt"
 WHERE (SELECT "fail_if"(CASE WHEN l.n <> k.n
                           THEN 'apply_decisions: ' || l.n || ' tasks leased in the decision, '
                                || k.n || ' inserted' END, 'XX000')
          FROM (SELECT count(*) AS n FROM u WHERE u.token IS NOT NULL) l,
               (SELECT count(*) AS n FROM i WHERE i."workerId" IS NOT NULL) k))", 1};

// A change names the status its evaluation saw ($9; NULL for a task the same write
// inserts). Outside the evaluation's claim only a lease (SCHEDULED -> IN_PROGRESS) and a
// lease handed back or given back by its worker's callback (IN_PROGRESS -> SCHEDULED,
// store/lease_hand_back.hpp, store/lease_postpone.hpp) change a task row; a change whose
// row moved so was decided on what is no longer true (a timeout of an attempt that was
// handed back, a poll timeout of a task just leased), and the statement fails the write as
// stale (NF001, as the compare-and-set does), naming the workflow, so it is evaluated again.
// A change leaves an ended task alone, but for one: an optional task that failed for good
// becomes COMPLETED_WITH_ERRORS, from the ended status its evaluation saw, keeping its end.
constexpr statement change_tasks{"decide.change_tasks", R"(
WITH u AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::integer[], $4::integer[], $5::text[],
                       $6::jsonb[], $7::text[], $8::uuid[], $9::text[])
    AS u(wf, ref, iter, att, status, output, reason, output_ref, from_st)),
c AS (
UPDATE "TaskExecutions" t SET
  "status" = u.status::task_execution_status,
  "output" = CASE WHEN u.output IS NULL AND u.output_ref IS NULL THEN t."output"
                  ELSE u.output END,
  "outputPayloadId" = CASE WHEN u.output IS NULL AND u.output_ref IS NULL THEN t."outputPayloadId"
                           ELSE u.output_ref END,
  "reasonForIncompletion" = COALESCE(u.reason, t."reasonForIncompletion"),
  "startedAt" = CASE WHEN u.status = 'SCHEDULED' THEN t."startedAt"
                     ELSE COALESCE(t."startedAt", now()) END,
  "endedAt" = CASE WHEN u.status IN ('SCHEDULED', 'IN_PROGRESS') THEN NULL
                   WHEN t."status" IN ('SCHEDULED', 'IN_PROGRESS') THEN now()
                   ELSE t."endedAt" END,
  "deciderSeenAt" = CASE WHEN u.status IN ('SCHEDULED', 'IN_PROGRESS') THEN t."deciderSeenAt"
                         ELSE now() END,
  "updatedAt" = now()
  FROM u
 WHERE t."workflowId" = u.wf AND t."refName" = u.ref AND t."iteration" = u.iter
   AND t."attempt" = u.att
   AND (t."status" IN ('SCHEDULED', 'IN_PROGRESS')
        OR (u.status = 'COMPLETED_WITH_ERRORS' AND u.from_st IS NOT NULL))
   AND (u.from_st IS NULL OR t."status" = u.from_st::task_execution_status)
   AND t."workflowId" = ANY($1::uuid[])
RETURNING t."workflowId", t."refName", t."iteration", t."attempt")
SELECT count(*) FROM c
 WHERE (SELECT "fail_if"('stale evaluation: a task changed under the evaluation of workflow '
                         || string_agg(DISTINCT m.wf::text, ', ')
                         || '; roll back and requeue', 'NF001')
          FROM u m
         WHERE m.from_st IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM c
                            WHERE c."workflowId" = m.wf AND c."refName" = m.ref
                              AND c."iteration" = m.iter AND c."attempt" = m.att)))", 1};

// docs/schema.md §4.5: no timer of a task fires before the task was scheduled,
// which prunes every older partition.
constexpr statement cancel_timers{"decide.cancel_timers", R"(
DELETE FROM "Timers" tm
 USING (SELECT t."id", t."scheduledAt", u.kind
          FROM unnest($1::uuid[], $2::text[], $3::integer[], $4::integer[], $5::text[])
            AS u(wf, ref, iter, att, kind)
         CROSS JOIN LATERAL (
           SELECT "id", "scheduledAt" FROM "TaskExecutions"
            WHERE "workflowId" = u.wf AND "refName" = u.ref AND "iteration" = u.iter
              AND "attempt" = u.att /*prune: AND "workflowId" = ANY($1::uuid[]) */ OFFSET 0) t) x
 WHERE tm."taskId" = x."id" AND tm."kind" = x.kind::timer_kind AND tm."claimedAt" IS NULL
   AND tm."fireAt" >= x."scheduledAt")", 1};

// Deadlines from the server's clock. A pending timer of the same kind for the
// same task absorbs the arm (a re-run evaluation arms nothing twice).
constexpr statement arm_timers{"decide.arm_timers", R"(
WITH x AS (
  SELECT u.*, t."id" AS task, t."scheduledAt"
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::bigint[],
                $7::smallint[]) AS u(wf, kind, ref, iter, att, fire_ms, shard)
    LEFT JOIN LATERAL (
      SELECT "id", "scheduledAt" FROM "TaskExecutions"
       WHERE u.ref IS NOT NULL AND "workflowId" = u.wf AND "refName" = u.ref
         AND "iteration" = u.iter AND "attempt" = u.att
         /*prune: AND "workflowId" = ANY($1::uuid[]) */ OFFSET 0) t ON true)
INSERT INTO "Timers" ("fireAt", "shard", "kind", "workflowId", "workflowStartedAt", "taskId")
SELECT GREATEST(to_timestamp(x.fire_ms::double precision / 1000), now()), x.shard,
       x.kind::timer_kind, x.wf,
       uuid_extract_timestamp(x.wf), x.task
  FROM x
 WHERE (x.kind = 'workflowTimeout' OR x.task IS NOT NULL)
   AND NOT EXISTS (
     SELECT 1 FROM "Timers" p
      WHERE x.task IS NOT NULL AND p."taskId" = x.task AND p."kind" = x.kind::timer_kind
        AND p."claimedAt" IS NULL AND p."fireAt" >= x."scheduledAt")
RETURNING (extract(epoch FROM "fireAt") * 1000)::bigint AS fire_at_ms)", 1};

// I3: exactly the ids the evaluation read as unprocessed, never `"endedAt" <= t`. A task's
// id is a uuidv7, never the id of another workflow's task, so the rows of both arrays are
// exactly the pairs. No join with the pairs: a generic plan would join them by a nested loop
// over the rows both arrays find, quadratic in a fork's tasks. Its variants spell out $1's
// ANY and name $1 nowhere else: they are prepared with its type (statement::typed_as).
constexpr statement mark_seen{"decide.mark_seen", R"(
UPDATE "TaskExecutions" t SET "deciderSeenAt" = now()
 WHERE t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[])
   AND t."deciderSeenAt" IS NULL)", 1};

// Rows only while a webhook sink is enabled ("outbox_published_at"() is NULL then, migration
// 0013): with none an event has nowhere to go, and its row would be written published and
// never read (docs/schema.md, OutboxEvents). Evaluated once per statement, not per row.
constexpr statement insert_outbox{"decide.outbox", R"(
INSERT INTO "OutboxEvents" ("shard", "namespaceId", "workflowId", "eventType", "payload",
                            "publishedAt")
SELECT u.*, NULL::timestamptz
  FROM unnest($1::smallint[], $2::uuid[], $3::uuid[], $4::text[], $5::jsonb[])
    AS u(shard, ns, wf, et, payload)
 WHERE (SELECT "outbox_published_at"()) IS NULL)"};

// Only rows this transaction claimed (and so holds locked): see decision_write::dequeue.
constexpr statement dequeue{"decide.dequeue", R"(
DELETE FROM "DecideQueues" WHERE "workflowId" = ANY($1::uuid[]))"};

std::optional<std::string> opt(const std::optional<json_text>& x) {
  if (x)
    return x->str();
  return std::nullopt;
}

/// Columns of identity-addressed batches: workflow, ref, iteration, attempt.
struct identity_columns {
  std::vector<std::string> wf, ref;
  std::vector<int64_t> iter, att;
  void add(const workflow_id& w, const flow::task_identity& id) {
    wf.push_back(w.str());
    ref.push_back(id.ref);
    iter.push_back(id.iteration);
    att.push_back(id.attempt);
  }
  bool empty() const { return wf.empty(); }
  params to_params() const {
    return params::of(text_array(wf), text_array(ref), int_array(iter), int_array(att));
  }
};

/// The leases of the tasks leased in the decision, per write (store/queues.hpp).
std::vector<std::vector<started_lease>> leases_of(const std::vector<decision_write>& writes) {
  std::vector<std::vector<started_lease>> out(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    const auto& w = writes[i];
    for (const auto& t : w.inserts)
      if (t.lease) {
        const auto& l = *t.lease;
        out[i].push_back(started_lease{w.id, w.ns, w.shard.value(), l.id, t.identity.ref,
                                       t.identity.attempt, t.identity.iteration, l.worker_id,
                                       l.token, l.expires_at_ms, l.start_to_close_seconds});
      }
  }
  return out;
}

/// Each write's history: the completions' events it was left, the decision's events, then the
/// TASK_STARTED of each task leased in it, all numbered by the compare-and-set (I8: one seq
/// allocation), the TASK_STARTED published as the lessor publishes its own
/// (event_write::outbox_shard).
std::vector<std::vector<event_write>> history_of(
  const std::vector<decision_write>& writes,
  const std::vector<std::vector<started_lease>>& leases) {
  std::vector<std::vector<event_write>> out(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    out[i] = writes[i].preceding;
    out[i].insert(out[i].end(), writes[i].events.begin(), writes[i].events.end());
    auto started = started_events(leases[i]);
    for (size_t k = 0; k < started.size(); ++k) {
      const auto& l = leases[i][k];
      auto& d = started[k];
      out[i].push_back(event_write{d.type, d.task,
                                   flow::task_identity{l.ref, l.iteration, l.attempt},
                                   std::move(d.payload), d.shard});
    }
  }
  return out;
}

/// The compare-and-set for every write, as the pipeline's first statement; a workflow output
/// too large for its row is placed in `payloads`.
void add_compare_and_set(pipeline& p, const std::vector<decision_write>& writes,
                         const std::vector<std::vector<event_write>>& history,
                         payload_writes& payloads) {
  std::vector<std::string> ids;
  std::vector<int64_t> versions, event_counts;
  std::vector<std::optional<std::string>> statuses, outputs, reasons, failed_refs, vars,
    output_refs;
  for (size_t i = 0; i < writes.size(); ++i) {
    const auto& w = writes[i];
    ids.push_back(w.id.str());
    versions.push_back(w.expected_version);
    event_counts.push_back(static_cast<int64_t>(history[i].size()));
    statuses.push_back(w.status ? std::optional<std::string>{std::string{to_string(*w.status)}}
                                : std::nullopt);
    auto output = payloads.place(w.id, w.output);
    outputs.push_back(output.inline_text());
    output_refs.push_back(output.payload_id);
    reasons.push_back(w.reason_for_incompletion);
    failed_refs.push_back(w.failed_task_ref);
    vars.push_back(opt(w.variables));
  }
  p.add(cas, params::of(text_array(ids), int_array(versions), text_array(statuses),
                        text_array(outputs), text_array(reasons), text_array(failed_refs),
                        text_array(vars), int_array(event_counts), text_array(output_refs)));
}

} // namespace

bool is_queued(const decision_write& w, const task_insert& t) {
  // A task this same write ends never enters a queue.
  bool ended_here = std::any_of(w.changes.begin(), w.changes.end(), [&](const auto& c) {
    return c.identity == t.identity && flow::is_terminal(c.status);
  });
  return !t.queue.empty() && t.start_delay_ms <= 0 && t.status == flow::task_status::scheduled
         && !ended_here;
}

caf::expected<apply_result> apply_decisions(transaction& tx,
                                            const std::vector<decision_write>& writes,
                                            bool commit) {
  apply_result out;
  if (writes.empty())
    return out;
  {
    std::set<std::string> seen_ids;
    for (const auto& w : writes)
      if (!seen_ids.insert(w.id.str()).second)
        return make_error(errc::invalid, "workflow " + w.id.str()
                                           + " appears twice in one apply_decisions batch");
  }
  for (const auto& w : writes)
    if (w.ns.empty())
      return make_error(errc::invalid, "decision for workflow " + w.id.str()
                                         + ": no namespace (the snapshot's)");

  const auto leases = leases_of(writes);
  auto history = history_of(writes, leases);
  pipeline p{tx.conn()};
  payload_writes payloads;  // every input and output written below goes through it
  add_compare_and_set(p, writes, history, payloads);
  // Which pipeline results to read back (the index of the statement just added).
  int insert_at = -1, arm_at = -1;
  auto last = [&p] { return static_cast<int>(p.size()) - 1; };

  identity_columns ending;  // changes to a terminal status: their queue rows go
  for (const auto& w : writes)
    for (const auto& c : w.changes)
      if (flow::is_terminal(c.status))
        ending.add(w.id, c.identity);
  if (!ending.empty()) {
    p.add(unqueue, ending.to_params());
  }

  {
    identity_columns ids;
    std::vector<std::string> ns, types, defs, statuses;
    std::vector<std::optional<std::string>> queues, outputs, reasons, task_ids, workers, tokens,
      lease_ms, input_refs, output_refs, cache_keys, cache_ttls;
    std::vector<json_text> inputs;
    std::vector<std::string> enqueue;
    std::vector<int64_t> priorities, shards;
    const auto empty = json(boost::json::object{});
    for (const auto& w : writes) {
      for (const auto& t : w.inserts) {
        bool queued = is_queued(w, t);
        if (t.lease && !queued)
          return make_error(errc::internal, "decision for workflow " + w.id.str() + ": task "
                                              + t.identity.ref + " leased but not queued");
        ids.add(w.id, t.identity);
        ns.push_back(w.ns.str());
        types.emplace_back(flow::to_string(t.type));
        defs.push_back(t.task_def_name);
        queues.push_back(t.queue.empty() ? std::nullopt : std::optional<std::string>{t.queue});
        statuses.emplace_back(t.lease ? flow::to_string(flow::task_status::in_progress)
                                      : flow::to_string(t.status));
        auto some = [](const std::string& s) { return std::optional<std::string>{s}; };
        task_ids.push_back(t.lease ? some(t.lease->id.str())
                           : t.id  ? some(t.id->str())
                                   : std::nullopt);
        workers.push_back(t.lease ? some(t.lease->worker_id) : std::nullopt);
        tokens.push_back(t.lease ? some(t.lease->token.str()) : std::nullopt);
        lease_ms.push_back(t.lease ? some(std::to_string(t.lease->expires_at_ms)) : std::nullopt);
        // An input out of line leaves the row's NOT NULL column its default, '{}'.
        auto input = payloads.place(w.id, t.input ? *t.input : empty);
        inputs.push_back(input.inline_json.value_or(empty));
        input_refs.push_back(input.payload_id);
        auto output = payloads.place(w.id, t.output);
        outputs.push_back(output.inline_text());
        output_refs.push_back(output.payload_id);
        reasons.push_back(t.reason_for_incompletion);
        enqueue.emplace_back(queued ? "t" : "f");
        const bool cached = !t.cache_key.empty() && t.cache_ttl_seconds > 0;
        cache_keys.push_back(cached ? some(t.cache_key) : std::nullopt);
        cache_ttls.push_back(cached ? some(std::to_string(t.cache_ttl_seconds)) : std::nullopt);
        priorities.push_back(w.priority);
        shards.push_back(w.shard.value());
      }
    }
    if (!ids.empty()) {
      p.add(insert_tasks,
            params::of(text_array(ids.wf), text_array(ns), text_array(ids.ref), int_array(ids.iter),
                       int_array(ids.att), text_array(types), text_array(defs), text_array(queues),
                       text_array(statuses), json_array(inputs), text_array(outputs),
                       text_array(reasons), text_array(enqueue), int_array(priorities),
                       int_array(shards), text_array(task_ids), text_array(workers),
                       text_array(tokens), text_array(lease_ms), text_array(input_refs),
                       text_array(output_refs), text_array(cache_keys),
                       text_array(cache_ttls)));
      insert_at = last();
    }
  }

  {
    identity_columns ids;
    std::vector<std::string> statuses;
    std::vector<std::optional<std::string>> outputs, reasons, output_refs, froms;
    for (const auto& w : writes)
      for (const auto& c : w.changes) {
        ids.add(w.id, c.identity);
        statuses.emplace_back(flow::to_string(c.status));
        froms.push_back(c.from ? std::optional<std::string>{flow::to_string(*c.from)} : std::nullopt);
        auto output = payloads.place(w.id, c.output);
        outputs.push_back(output.inline_text());
        output_refs.push_back(output.payload_id);
        reasons.push_back(c.reason_for_incompletion);
      }
    if (!ids.empty()) {
      p.add(change_tasks, params::of(text_array(ids.wf), text_array(ids.ref), int_array(ids.iter),
                                     int_array(ids.att), text_array(statuses),
                                     text_array(outputs), text_array(reasons),
                                     text_array(output_refs), text_array(froms)));
    }
  }

  payloads.add_to(p);

  {
    identity_columns ids;
    std::vector<std::string> kinds;
    for (const auto& w : writes)
      for (const auto& c : w.cancel)
        if (c.kind != timer_kind::workflow_timeout) {
          ids.add(w.id, c.task);
          kinds.emplace_back(to_sql(c.kind));
        }
    if (!ids.empty()) {
      p.add(cancel_timers, params::of(text_array(ids.wf), text_array(ids.ref), int_array(ids.iter),
                                      int_array(ids.att), text_array(kinds)));
    }
  }

  {
    std::vector<std::string> wf, kinds;
    std::vector<std::optional<std::string>> refs, iters, atts;
    std::vector<int64_t> fire_at, shards;
    for (const auto& w : writes)
      for (const auto& a : w.arm) {
        // The start armed the workflow's timeout; its first evaluation need not again.
        if (a.kind == timer_kind::workflow_timeout && w.expected_version == 0)
          continue;
        wf.push_back(w.id.str());
        kinds.emplace_back(to_sql(a.kind));
        refs.push_back(a.task ? std::optional<std::string>{a.task->ref} : std::nullopt);
        iters.push_back(a.task ? std::optional<std::string>{std::to_string(a.task->iteration)}
                               : std::nullopt);
        atts.push_back(a.task ? std::optional<std::string>{std::to_string(a.task->attempt)}
                              : std::nullopt);
        fire_at.push_back(a.fire_at_ms);
        shards.push_back(w.shard.value());
      }
    if (!wf.empty()) {
      p.add(arm_timers, params::of(text_array(wf), text_array(kinds), text_array(refs),
                                   text_array(iters), text_array(atts), int_array(fire_at),
                                   int_array(shards)));
      arm_at = last();
    }
  }

  {
    std::vector<std::string> wf, ids;
    for (const auto& w : writes)
      for (const auto& t : w.seen) {
        wf.push_back(w.id.str());
        ids.push_back(t.str());
      }
    if (!wf.empty()) {
      p.add(mark_seen, params::of(text_array(wf), text_array(ids)));
    }
  }

  {
    std::vector<numbered_events> batch;
    for (size_t i = 0; i < writes.size(); ++i)
      if (!history[i].empty())
        // The compare-and-set has its counts already: the events move to their insert.
        batch.push_back({writes[i].id, writes[i].ns, std::move(history[i])});
    insert_numbered_events(p, batch);
  }

  {
    std::vector<int64_t> shards;
    std::vector<std::string> ns, wf, types;
    std::vector<json_text> payloads;
    const auto empty = json(boost::json::object{});
    for (const auto& w : writes) {
      for (const auto& o : w.outbox) {
        shards.push_back(w.shard.value());
        ns.push_back(w.ns.str());
        wf.push_back(w.id.str());
        types.push_back(o.type);
        payloads.push_back(o.payload ? *o.payload : empty);
      }
    }
    if (!wf.empty()) {
      p.add(insert_outbox, params::of(int_array(shards), text_array(ns), text_array(wf),
                                      text_array(types), json_array(payloads)));
    }
  }

  // The start-to-close timer of each task leased in the decision guards its lease's token,
  // as the lessor's does (store/queues.cpp).
  std::vector<started_lease> all_leases;
  for (const auto& l : leases)
    all_leases.insert(all_leases.end(), l.begin(), l.end());
  add_start_to_close_timers(p, all_leases);

  {
    std::vector<std::string> ids;
    for (const auto& w : writes)
      if (w.dequeue)
        ids.push_back(w.id.str());
    if (!ids.empty()) {
      p.add(dequeue, params::of(text_array(ids)));
    }
  }

  // A missed compare-and-set fails its own statement, the first (`stale`), and a leased task
  // not inserted fails the insert: nothing is left to check before the COMMIT.
  auto rs = commit ? tx.run_and_commit(p) : p.run();
  if (!rs)
    return std::move(rs.error());

  if (insert_at >= 0) {
    const auto& r = (*rs)[static_cast<size_t>(insert_at)];
    std::set<std::string> queues;
    const int workflow = r.column_named("workflowId"), id = r.column_named("id"),
              ref = r.column_named("refName"), iteration = r.column_named("iteration"),
              attempt = r.column_named("attempt"), type = r.column_named("taskType"),
              queue = r.column_named("queueName"), leased_column = r.column_named("leased");
    for (int row = 0; row < r.rows(); ++row) {
      inserted_task t;
      t.workflow = workflow_id{r.str(row, workflow)};
      t.id = task_id{r.str(row, id)};
      t.identity = {r.str(row, ref), r.i32(row, iteration), r.i32(row, attempt)};
      t.type = flow::parse_task_type(r.text(row, type)).value_or(flow::task_type::simple);
      t.queue = r.opt_str(row, queue).value_or("");
      const bool leased = r.boolean(row, leased_column);
      // A leased row needs no lessor: its queue is hinted only for rows left unleased.
      if (!t.queue.empty() && !leased)
        queues.insert(t.queue);
      out.inserted.push_back(std::move(t));
    }
    out.queues.assign(queues.begin(), queues.end());
  }
  if (arm_at >= 0) {
    const auto& r = (*rs)[static_cast<size_t>(arm_at)];
    const int fire_at_ms = r.column_named("fire_at_ms");
    for (int row = 0; row < r.rows(); ++row) {
      auto at = r.i64(row, fire_at_ms);
      if (!out.earliest_timer_ms || at < *out.earliest_timer_ms)
        out.earliest_timer_ms = at;
    }
  }
  return out;
}

} // namespace nf::store
