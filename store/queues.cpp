#include "store/queues.hpp"

#include <algorithm>
#include <numeric>

#include <boost/json.hpp>

#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/partition_fence.hpp"
#include "store/payloads.hpp"
#include "store/pg/pipeline.hpp"
#include "store/pg/transaction.hpp"
#include "store/queue_partitions.hpp"
#include "store/task_transitions.hpp"
#include "store/tasks.hpp"
#include "store/timers.hpp"

namespace nf::store {

namespace {

// Serialises lessors of one queue while it has a concurrency limit, so "count leased,
// then lease" cannot overshoot. Its own statement: the claim that follows takes a fresh
// snapshot and so counts every lease committed before this lock was granted.
constexpr statement lock_queue{"lease.lock_queue", R"(
SELECT pg_advisory_xact_lock(hashtextextended('nf.lease:' || $1::text, 0)))"};

constexpr statement count_leased{"lease.count_leased", R"(
SELECT count(*) AS leased FROM "TaskQueues"
 WHERE "queueName" = $1 AND "leaseExpiresAt" IS NOT NULL)"};

// §4.4. $5 = concurrency limit (NULL = none): the LIMIT leaves room for the leases
// already out (the CASE keeps the count from running when there is no limit). One claim
// serves the polls of one queue together (lease_in): $4 names the worker of each claimed
// row in claim order, and the rows come back in that order ("rn"), the first ones for the
// first poll; a claim per poll would walk the dead index entries at the head of the queue
// once per poll. It runs on the queue's own partition (on_queue_partition,
// store/queue_partitions.hpp), so that its plan reads the head of that one queue rather than
// sort every partition's backlog. The update finds the claimed rows by the tuple ids the
// lock returned (a TID scan) or by their ids (a skip scan of the primary key), whichever the
// statistics price lower, because each probe alone is a bad plan in some state of the
// statistics (store.explain_worker pins each); "tableoid" keeps the tuple ids to the
// partition they came from. A locked row is the version the statement's snapshot sees
// unless a transaction that committed after it updated the row, and nothing updates a
// queued row but a claim, which leases it (the lock's recheck then drops the row); were a
// writer to update one and leave it queued, the update would skip that row, and it would
// stay queued.
// It names "TaskQueues" alone, and the claimed rows' tasks are read by claimed_tasks only
// when it claimed some: most claims find nothing (the decisions lease to the polls that
// wait), and a statement that also read the task rows would name every "TaskExecutions"
// partition, its generic plan built again after a vacuum of any of them.
constexpr statement claim{"lease.claim_batch", R"(
WITH c AS (
  SELECT "queueName", "id", "priority", "ctid", "tableoid" FROM "TaskQueues"
   WHERE "queueName" = $1 AND "leaseExpiresAt" IS NULL
   ORDER BY "priority" DESC, "id"
   LIMIT CASE WHEN $5::int IS NULL THEN $2::int
              ELSE GREATEST(0, LEAST($2::int, $5::int - (
                     SELECT count(*) FROM "TaskQueues"
                      WHERE "queueName" = $1 AND "leaseExpiresAt" IS NOT NULL)))::int END
   FOR UPDATE SKIP LOCKED),
n AS MATERIALIZED (
  SELECT array_agg(c."id" ORDER BY c."priority" DESC, c."id") AS ids,
         array_agg(c."ctid") AS tids, min(c."tableoid") AS rel FROM c),
q AS (
  UPDATE "TaskQueues" q
     SET "leaseToken" = uuidv7(), "leaseExpiresAt" = now() + make_interval(secs => $3::int),
         "leasedBy" = ($4::text[])[array_position(n.ids, q."id")]
    FROM n
   WHERE q."ctid" = ANY((SELECT n.tids FROM n)::tid[]) AND q."id" = ANY(n.ids)
     AND q."tableoid" = n.rel
  RETURNING q."id", q."taskId", q."workflowId", q."taskType", q."shard",
            array_position(n.ids, q."id") AS rn, q."leaseToken", q."leaseExpiresAt")
SELECT q."id", q."taskId", q."workflowId", q."taskType"::text, q."shard", q."leaseToken",
       )" NF_EPOCH_MS("q.\"leaseExpiresAt\"") R"( AS lease_expires_at_ms, q.rn
  FROM q
 ORDER BY q.rn)"};

// The tasks of the claimed rows, in their order. The read takes no lock: the claimed queue
// rows are locked, and every writer that changes a queued task deletes its queue row
// first. It probes each task by its keys ("OFFSET 0" keeps the planner from turning the
// probes into a join): priced as sixteen partitions per row, the probes lose to hashing
// every task row there is until the table is large, and a generic plan made on a young
// database kept reading all of them at every lease.
constexpr statement claimed_tasks{"lease.claimed_tasks", R"(
SELECT t."status"::text, t."namespaceId", t."refName", t."iteration", t."attempt",
       t."taskDefName", t."input"::text, t."inputPayloadId", t."pollCount", t."output"::text,
       t."outputPayloadId"
  FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS u(wf, tid, ord)
  LEFT JOIN LATERAL (
    SELECT te."status", te."namespaceId", te."refName", te."iteration", te."attempt",
           te."taskDefName", te."input", te."inputPayloadId", te."pollCount", te."output",
           te."outputPayloadId"
      FROM "TaskExecutions" te WHERE te."workflowId" = u.wf AND te."id" = u.tid
    OFFSET 0) t
    ON true
 ORDER BY u.ord)"};

// A queue row whose task is gone or no longer SCHEDULED is stale: dropped, never leased.
constexpr statement drop_stale{"lease.drop_stale", R"(
DELETE FROM "TaskQueues" q USING unnest($1::text[], $2::bigint[]) AS u(qn, id)
 WHERE q."queueName" = u.qn AND q."id" = u.id
   AND q."queueName" = ANY($1::text[]) AND q."id" = ANY($2::bigint[]))"};

constexpr statement start_tasks{"lease.start_tasks", R"(
UPDATE "TaskExecutions" t
   SET "status" = 'IN_PROGRESS', "startedAt" = now(), "workerId" = u.worker,
       "pollCount" = t."pollCount" + 1, "updatedAt" = now()
  FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS u(wf, tid, worker)
 WHERE t."workflowId" = u.wf AND t."id" = u.tid AND t."status" = 'SCHEDULED'
   AND t."workflowId" = ANY($1::uuid[]) AND t."id" = ANY($2::uuid[])
RETURNING t."id")", 1};

constexpr statement policy{"lease.load_policy", R"(
SELECT "responseTimeoutSeconds", "timeoutSeconds", "concurrentExecLimit",
       "rateLimitPerFrequency", "rateLimitFrequencyInSeconds", "name",
       )" NF_TIMERS_WITHIN("\"TaskDefinitions\"") R"( AS timers_within_s
  FROM "TaskDefinitions" WHERE "namespaceId" = $1 AND "name" = $2)"};

// The definition a queue serves: its "queueName", else its name (flow::queue_of). Two
// definitions naming one queue share its concurrency limit; the first by name decides.
constexpr statement policy_by_queue{"lease.load_policy_by_queue", R"(
SELECT "responseTimeoutSeconds", "timeoutSeconds", "concurrentExecLimit",
       "rateLimitPerFrequency", "rateLimitFrequencyInSeconds", "name",
       )" NF_TIMERS_WITHIN("\"TaskDefinitions\"") R"( AS timers_within_s
  FROM "TaskDefinitions" WHERE "namespaceId" = $1 AND COALESCE("queueName", "name") = $2
 ORDER BY "name" LIMIT 1)"};

constexpr statement extend{"lease.heartbeat", R"(
UPDATE "TaskQueues" q SET "leaseExpiresAt" = now() + make_interval(secs => u.secs)
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[]) WITH ORDINALITY AS u(wf, tid, tok, secs, ord)
  JOIN LATERAL (SELECT te."queueName" FROM "TaskExecutions" te
                 WHERE te."workflowId" = u.wf AND te."id" = u.tid
                   /*prune: AND te."workflowId" = ANY($1::uuid[]) */ OFFSET 0) t ON true
 WHERE q."queueName" = t."queueName" AND q."taskId" = u.tid AND q."leaseToken" = u.tok
   AND q."taskId" = ANY($2::uuid[])
RETURNING u.ord, )" NF_EPOCH_MS("q.\"leaseExpiresAt\"") " AS lease_expires_at_ms", 1};

caf::error invalid(const std::string& field, const std::string& expected, int64_t got) {
  return make_error(errc::invalid, field + ": expected " + expected + ", got " + std::to_string(got));
}

caf::expected<void> validate(const lease_request& r, const std::string& at) {
  if (r.queue.empty())
    return make_error(errc::invalid, at + ".queue: expected a non-empty queue name");
  if (r.max_tasks < 1 || r.max_tasks > max_lease_tasks)
    return invalid(at + ".max_tasks", "an integer 1 … " + std::to_string(max_lease_tasks),
                   r.max_tasks);
  if (r.lease_seconds < 1)
    return invalid(at + ".lease_seconds", "an integer >= 1", r.lease_seconds);
  if (r.start_to_close_seconds < 0)
    return invalid(at + ".start_to_close_seconds", "an integer >= 0", r.start_to_close_seconds);
  if (r.concurrency_limit && *r.concurrency_limit < 1)
    return invalid(at + ".concurrency_limit", "an integer >= 1", *r.concurrency_limit);
  if (r.rate && r.rate->per_frequency < 1)
    return invalid(at + ".rate.per_frequency", "an integer >= 1", r.rate->per_frequency);
  if (r.rate && r.rate->frequency_seconds < 1)
    return invalid(at + ".rate.frequency_seconds", "an integer >= 1", r.rate->frequency_seconds);
  return {};
}

struct claimed_row {
  size_t request = 0;
  int64_t queue_row_id = 0;
  int16_t shard = 0;
  bool runnable = false; ///< the task row exists and is SCHEDULED
  namespace_id ns;
  leased_task task;
};

/// Whether requests `a` and `b` can share one claim: the same queue, the same lease, and no
/// limit that each request's claim applies on its own.
bool share_claim(const lease_request& a, const lease_request& b) {
  auto plain = [](const lease_request& r) { return !r.concurrency_limit && !r.rate; };
  return a.queue == b.queue && a.lease_seconds == b.lease_seconds && plain(a) && plain(b);
}

/// One claim for the requests `group` of one queue, within the limits; appends to `out`,
/// in claim order, the first max_tasks rows for the first request, and so on.
caf::expected<void> claim_queue(connection& conn, const std::vector<lease_request>& reqs,
                                const std::vector<size_t>& group,
                                std::vector<claimed_row>& out) {
  const auto& req = reqs[group.front()];
  int limit = 0;
  for (auto i : group)
    limit += reqs[i].max_tasks;
  // The claim counts leased rows against the limit itself unless the rate path did already.
  bool count_in_claim = req.concurrency_limit.has_value();
  if (req.concurrency_limit) {
    if (auto r = conn.run(lock_queue, params::of(req.queue)); !r)
      return std::move(r.error());
  }
  int granted = 0;
  if (req.rate) {
    if (req.concurrency_limit) {
      auto n = conn.run1(count_leased, params::of(req.queue));
      if (!n)
        return std::move(n.error());
      const int64_t leased = n->i64(0, n->column_named("leased"));
      limit = std::max<int>(0, std::min<int64_t>(limit, *req.concurrency_limit - leased));
      count_in_claim = false; // already applied
    }
    auto g = take_rate_grant(conn, *req.rate, limit);
    if (!g)
      return std::move(g.error());
    granted = limit = *g;
  }
  if (limit == 0)
    return {};
  // The worker of each row the claim may take, in claim order.
  std::vector<std::string> workers;
  std::vector<size_t> request_of;
  for (auto i : group)
    for (int k = 0; k < reqs[i].max_tasks && static_cast<int>(workers.size()) < limit; ++k) {
      workers.push_back(reqs[i].worker_id);
      request_of.push_back(i);
    }
  auto partition = queue_partition(conn, req.queue);
  if (!partition)
    return std::move(partition.error());
  auto rows = conn.run(on_queue_partition(claim, *partition),
                       params::of(req.queue, limit, req.lease_seconds, text_array(workers),
                                  count_in_claim ? req.concurrency_limit : std::nullopt));
  if (!rows)
    return std::move(rows.error());
  if (req.rate) {
    if (auto b = give_back_rate_grant(conn, *req.rate, granted - rows->rows()); !b)
      return std::move(b.error());
  }
  if (rows->rows() == 0)
    return {};
  const int id = rows->column_named("id"), task = rows->column_named("taskId"),
            workflow = rows->column_named("workflowId"), task_type = rows->column_named("taskType"),
            shard = rows->column_named("shard"), token = rows->column_named("leaseToken"),
            expires = rows->column_named("lease_expires_at_ms"),
            row_number = rows->column_named("rn");
  auto tasks = conn.run_n(claimed_tasks,
                          params::of(text_array(*rows, workflow), text_array(*rows, task)),
                          rows->rows());
  if (!tasks)
    return std::move(tasks.error());
  const int status = tasks->column_named("status"), ns = tasks->column_named("namespaceId"),
            ref = tasks->column_named("refName"), iteration = tasks->column_named("iteration"),
            attempt = tasks->column_named("attempt"), def = tasks->column_named("taskDefName"),
            input = tasks->column_named("input"),
            input_payload = tasks->column_named("inputPayloadId"),
            polls = tasks->column_named("pollCount"), output = tasks->column_named("output"),
            output_payload = tasks->column_named("outputPayloadId");
  // The inputs (and outputs so far) stored out of line, read in one more statement only when
  // a claim has any.
  std::vector<std::pair<std::string, std::string>> refs;
  for (int i = 0; i < tasks->rows(); ++i)
    for (int col : {input_payload, output_payload})
      if (auto ref = tasks->opt_str(i, col))
        refs.emplace_back(rows->str(i, workflow), *ref);
  auto bodies = read_payloads(conn, refs);
  if (!bodies)
    return std::move(bodies.error());
  for (int i = 0; i < rows->rows(); ++i) {
    claimed_row c;
    auto rn = rows->i64(i, row_number);
    if (rn < 1 || rn > static_cast<int64_t>(request_of.size()))
      return make_error(errc::internal, "lease.claim_batch: row number " + std::to_string(rn)
                                          + " outside the claim's " + std::to_string(limit));
    c.request = request_of[static_cast<size_t>(rn - 1)];
    c.queue_row_id = rows->i64(i, id);
    c.shard = static_cast<int16_t>(rows->i64(i, shard));
    c.runnable = !tasks->is_null(i, status) && tasks->text(i, status) == "SCHEDULED";
    auto& t = c.task;
    t.queue = req.queue;
    t.task = task_id{rows->str(i, task)};
    t.workflow = workflow_id{rows->str(i, workflow)};
    t.task_type = rows->str(i, task_type);
    t.token = lease_token{rows->str(i, token)};
    t.lease_expires_at_ms = rows->i64(i, expires);
    if (c.runnable) {
      c.ns = namespace_id{tasks->str(i, ns)};
      t.ref_name = tasks->str(i, ref);
      t.iteration = tasks->i32(i, iteration);
      t.attempt = tasks->i32(i, attempt);
      t.task_def_name = tasks->str(i, def);
      t.poll_count = tasks->i32(i, polls) + 1;  // start_tasks counts this lease
      auto ref = tasks->opt_str(i, input_payload);
      t.input = ref ? bodies->at(*ref) : tasks->str(i, input);
      auto out_ref = tasks->opt_str(i, output_payload);
      t.output = out_ref ? bodies->at(*out_ref) : tasks->opt_str(i, output).value_or("");
    }
    out.push_back(std::move(c));
  }
  return {};
}

caf::expected<std::vector<std::vector<leased_task>>>
lease_in(transaction& tx, const std::vector<lease_request>& reqs,
         std::vector<lease_facts>* facts, const partition_fence* fence) {
  auto& conn = tx.conn();
  // Queues in name order, so two batched leases take the queue locks in one order.
  std::vector<size_t> order(reqs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return reqs[a].queue < reqs[b].queue; });
  std::vector<claimed_row> claimed;
  for (size_t k = 0; k < order.size();) {
    std::vector<size_t> group{order[k++]};
    while (k < order.size() && share_claim(reqs[group.front()], reqs[order[k]]))
      group.push_back(order[k++]);
    if (auto r = claim_queue(conn, reqs, group, claimed); !r)
      return std::move(r.error());
  }
  std::vector<std::vector<leased_task>> out(reqs.size());
  std::vector<std::string> stale_queues;
  std::vector<int64_t> stale_ids;
  std::vector<const claimed_row*> good;
  for (const auto& c : claimed) {
    if (c.runnable) {
      good.push_back(&c);
    } else {
      stale_queues.push_back(c.task.queue);
      stale_ids.push_back(c.queue_row_id);
    }
  }
  if (!stale_ids.empty())
    if (auto r = conn.run(drop_stale, params::of(text_array(stale_queues), int_array(stale_ids))); !r)
      return std::move(r.error());
  if (good.empty())
    return out;
  // The execution rows are locked after the queue rows here (the claim must come first);
  // a decider cancelling one of these tasks meanwhile can deadlock with us, and `perform`
  // reruns whichever transaction Postgres picks.
  std::vector<started_lease> leases;
  std::vector<std::string> workers;
  for (const auto* c : good) {
    const auto& t = c->task;
    const auto& req = reqs[c->request];
    leases.push_back(started_lease{t.workflow, c->ns, c->shard, t.task, t.ref_name, t.attempt,
                                   t.iteration, req.worker_id, t.token, t.lease_expires_at_ms,
                                   req.start_to_close_seconds});
    workers.push_back(req.worker_id);
  }
  // The execution rows (seqs and events, I8) before the task rows, as everywhere.
  pipeline p{conn};
  auto events = started_events(leases);
  const bool appended = add_events(p, events);
  const size_t started_at = p.size();
  p.add(start_tasks,
        params::of(ids_array(good, [](const auto* c) { return c->task.workflow; }),
                   ids_array(good, [](const auto* c) { return c->task.task; }),
                   text_array(workers)));
  add_start_to_close_timers(p, leases);
  // Last in the round trip, before anything commits: a stale lessor's leases roll back.
  if (fence != nullptr)
    add_fence_check(p, *fence);
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  if (appended)
    if (auto w = events_written(events, (*rs)[0]); !w)
      return std::move(w.error());
  if ((*rs)[started_at].rows() != static_cast<int>(good.size()))
    return make_error(errc::internal, "lease.start_tasks: a claimed task left SCHEDULED under "
                                      "its locked queue row");
  for (const auto* c : good)
    out[c->request].push_back(c->task);
  if (facts != nullptr)
    for (const auto* c : good) {
      const auto& t = c->task;
      const auto& req = reqs[c->request];
      if (!req.timers_within_s)
        continue;
      auto leased_ms = t.lease_expires_at_ms - int64_t{req.lease_seconds} * 1000;
      facts->push_back(lease_facts{t.workflow, t.task, t.token, c->ns, c->shard, t.queue,
                                   flow::task_identity{t.ref_name, t.iteration, t.attempt},
                                   scheduled_bound_of_lease(leased_ms), req.timers_within_s,
                                   t.lease_expires_at_ms});
    }
  return out;
}

queue_policy read_policy(const result& row, const namespace_id& ns, const std::string& name) {
  queue_policy p;
  // 0: the definition sets none (a 0 would expire every lease at once); the lessor leases
  // for lessor.lease_seconds then, as it does a queue no definition serves.
  p.lease_seconds = std::max(0, row.i32(0, row.column_named("responseTimeoutSeconds")));
  p.start_to_close_seconds = row.i32(0, row.column_named("timeoutSeconds"));
  const int limit = row.column_named("concurrentExecLimit");
  if (!row.is_null(0, limit))
    p.concurrency_limit = row.i32(0, limit);
  const int per_frequency = row.i32(0, row.column_named("rateLimitPerFrequency"));
  if (per_frequency > 0)
    p.rate = rate_limit{ns, name, per_frequency,
                        row.i32(0, row.column_named("rateLimitFrequencyInSeconds"))};
  p.timers_within_s = row.i64(0, row.column_named("timers_within_s"));
  return p;
}

caf::expected<int64_t> lease_lost_or(const std::optional<int64_t>& x) {
  if (!x)
    return make_error(errc::lease_lost, "lease lost");
  return *x;
}

} // namespace

std::vector<event_draft> started_events(const std::vector<started_lease>& leases) {
  std::vector<event_draft> out;
  out.reserve(leases.size());
  for (const auto& l : leases) {
    boost::json::object payload{{"workerId", l.worker_id},
                                {"attempt", l.attempt},
                                {"iteration", l.iteration},
                                {"leaseExpiresAtMs", l.expires_at_ms}};
    out.push_back(event_draft{l.workflow, l.ns, l.shard, "TASK_STARTED", l.task, l.ref,
                              json(payload)});
  }
  return out;
}

void add_start_to_close_timers(pipeline& p, const std::vector<started_lease>& leases) {
  std::vector<timer_spec> timers;
  for (const auto& l : leases)
    if (l.start_to_close_seconds > 0)
      timers.push_back(timer_spec{timer_kind::start_to_close, l.workflow, l.shard, l.task,
                                  l.token, int64_t{l.start_to_close_seconds} * 1000});
  add_arm_timers(p, timers);
}

caf::expected<std::vector<std::vector<leased_task>>>
lease_batches(transaction& tx, const std::vector<lease_request>& reqs,
              std::vector<lease_facts>* facts, const partition_fence* fence) {
  for (size_t i = 0; i < reqs.size(); ++i)
    if (auto v = validate(reqs[i], "lease[" + std::to_string(i) + "]"); !v)
      return std::move(v.error());
  return lease_in(tx, reqs, facts, fence);
}

caf::expected<std::vector<std::vector<leased_task>>>
lease_batches(connection& conn, const std::vector<lease_request>& reqs,
              std::vector<lease_facts>* facts, const partition_fence* fence) {
  return perform(conn, [&](transaction& tx) {
    if (facts != nullptr)
      facts->clear();  // a retried transaction's leases are its own
    return lease_batches(tx, reqs, facts, fence);
  });
}

caf::expected<std::vector<leased_task>> lease_tasks(connection& conn, const lease_request& req) {
  auto r = lease_batches(conn, {req});
  if (!r)
    return std::move(r.error());
  return std::move(r->front());
}

caf::expected<queue_policy> load_queue_policy(connection& conn, const namespace_id& ns,
                                              const std::string& task_def_name) {
  auto r = conn.run01(policy, params::of(ns, task_def_name));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "task definition \"" + task_def_name + "\" not found");
  return read_policy(**r, ns, task_def_name);
}

caf::expected<queue_policy> load_queue_policy_for_queue(connection& conn, const namespace_id& ns,
                                                        const std::string& queue) {
  auto r = conn.run01(policy_by_queue, params::of(ns, queue));
  if (!r)
    return std::move(r.error());
  if (!*r)
    return make_error(errc::not_found, "no task definition serves queue \"" + queue + "\"");
  return read_policy(**r, ns, (*r)->str(0, (*r)->column_named("name")));
}

caf::expected<std::vector<std::optional<int64_t>>>
heartbeat_tasks(connection& conn, const std::vector<heartbeat_request>& reqs) {
  std::vector<int64_t> secs;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].extend_seconds < 1)
      return invalid("heartbeat[" + std::to_string(i) + "].extend_seconds", "an integer >= 1",
                     reqs[i].extend_seconds);
    secs.push_back(reqs[i].extend_seconds);
  }
  std::vector<std::optional<int64_t>> out(reqs.size());
  if (reqs.empty())
    return out;
  auto r = conn.run(extend, params::of(ids_array(reqs, [](const auto& h) { return h.workflow; }),
                                       ids_array(reqs, [](const auto& h) { return h.task; }),
                                       ids_array(reqs, [](const auto& h) { return h.token; }),
                                       int_array(secs)));
  if (!r)
    return std::move(r.error());
  const int ord = r->column_named("ord"), expires = r->column_named("lease_expires_at_ms");
  for (int i = 0; i < r->rows(); ++i)
    out[static_cast<size_t>(r->i64(i, ord) - 1)] = r->i64(i, expires);
  return out;
}

caf::expected<int64_t> heartbeat_task(connection& conn, const heartbeat_request& req) {
  auto r = heartbeat_tasks(conn, {req});
  if (!r)
    return std::move(r.error());
  return lease_lost_or(r->front());
}

} // namespace nf::store
