#include "store/decisions.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <map>
#include <set>

#include "store/decide_queues.hpp"
#include "store/execution_columns.hpp"
#include "proto/errors.hpp"
#include "store/payloads.hpp"
#include "store/pg/pipeline.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// docs/schema.md §4.3: the pending rows of the caller's shards in ("shard", "enqueuedAt")
// order, read through "DecideQueues_shard_idx" until $2 are locked; they stay locked until
// the caller's transaction ends. Ordered by "enqueuedAt" across the shards, the claim
// would sort every pending row of its shards at each call, so a committer that fell behind
// would slow down further. The shards are taken from $3 up, then from the lowest,
// and each claim starts at the next of the caller's shards (add_claim): a shard's backlog
// keeps the others waiting for one claim of each shard at most. Within a shard the oldest
// rows go first.
constexpr statement claim{"decide.claim_batch", R"(
WITH c AS (
  SELECT * FROM (
    SELECT "workflowId", "workflowStartedAt", "namespaceId" FROM "DecideQueues"
     WHERE "shard" = ANY($1::smallint[]) AND "shard" >= $3::smallint
     ORDER BY "shard", "enqueuedAt" LIMIT $2 FOR UPDATE SKIP LOCKED) a
  UNION ALL
  SELECT * FROM (
    SELECT "workflowId", "workflowStartedAt", "namespaceId" FROM "DecideQueues"
     WHERE "shard" = ANY($1::smallint[]) AND "shard" < $3::smallint
     ORDER BY "shard", "enqueuedAt" LIMIT $2 FOR UPDATE SKIP LOCKED) b
  LIMIT $2)
SELECT "workflowId", (extract(epoch FROM "workflowStartedAt") * 1000)::bigint AS started_at_ms,
       "namespaceId"
  FROM c)"};

// By id alone the execution names its month (startedAt = uuid_extract_timestamp(id)).
constexpr statement select_executions{"decide.executions",
                                      "SELECT e.* FROM unnest($1::uuid[]) AS w(id) "
                                      "CROSS JOIN LATERAL (SELECT " NF_EXECUTION_COLUMNS R"(
    FROM "WorkflowExecutions"
   WHERE "id" = w.id AND "startedAt" = uuid_extract_timestamp(w.id) AND "id" = ANY($1::uuid[])
     /*started: "startedAt" */) e)", 0, 1};

#define NF_TASK_COLUMNS                                                                        \
  "\"workflowId\", \"id\", \"refName\", \"iteration\", \"attempt\", \"taskType\", "                 \
  "\"taskDefName\", \"queueName\", \"status\", \"input\", \"output\", "                             \
  "\"inputPayloadId\", \"outputPayloadId\", "                                                     \
  "\"reasonForIncompletion\", \"workerId\", \"pollCount\", \"retriedTaskId\", \"subWorkflowId\", " \
  "(extract(epoch FROM \"scheduledAt\") * 1000)::bigint AS scheduled_at_ms, "                    \
  "(extract(epoch FROM \"startedAt\") * 1000)::bigint AS started_at_ms, "                        \
  "(extract(epoch FROM \"endedAt\") * 1000)::bigint AS ended_at_ms, "                            \
  "(extract(epoch FROM \"updatedAt\") * 1000)::bigint AS updated_at_ms, "                        \
  "(\"endedAt\" IS NOT NULL AND \"deciderSeenAt\" IS NULL) AS unprocessed"

// docs/schema.md §4.3: the lateral form prunes to each workflow's partition at
// run time (`= ANY($1)` over a parameter array would probe all 16). The array is
// a clause of the small batches' variants only: as a clause of every row's probe
// it would be sorted and searched again per row.
// Every row, not just the frontier: decide() reads earlier outputs. "unprocessed"
// is read in the same snapshot as the status, so it names exactly what this
// evaluation saw (I3).
constexpr statement select_tasks{"decide.tasks", "SELECT t.* FROM unnest($1::uuid[]) AS w(id) "
                                                 "CROSS JOIN LATERAL (SELECT " NF_TASK_COLUMNS
                                                 R"( FROM "TaskExecutions"
   WHERE "workflowId" = w.id /*prune: AND "workflowId" = ANY($1::uuid[]) */ ORDER BY "id") t)", 1};

// The same after a part of each workflow's rows the decider already knows (every task up to
// the id $2 it passes, all of them terminal when its last decision committed; the nil uuid:
// none): a range of the primary key ("workflowId", "id") past them, so a long sequence's
// earlier tasks are neither fetched nor sent again for each of its steps.
constexpr statement select_tasks_after{
  "decide.tasks_after",
  "SELECT t.* FROM unnest($1::uuid[], $2::uuid[]) AS w(id, after) CROSS JOIN LATERAL (SELECT "
  NF_TASK_COLUMNS R"( FROM "TaskExecutions"
   WHERE "workflowId" = w.id AND "id" > w.after /*prune: AND "workflowId" = ANY($1::uuid[]) */
   ORDER BY "id") t)", 1};

// The frontier: the predicate repeats the partial index's seven statuses
// verbatim, or the planner cannot prove the index applies. OFFSET 0 keeps the
// subquery a probe per workflow: flattened, it is a join the planner may hash.
constexpr statement select_frontier{
  "decide.frontier",
  "SELECT t.* FROM unnest($1::uuid[]) AS w(id) CROSS JOIN LATERAL (SELECT " NF_TASK_COLUMNS
  R"( FROM "TaskExecutions"
   WHERE "workflowId" = w.id /*prune: AND "workflowId" = ANY($1::uuid[]) */
     AND "status" NOT IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED',
                          'FAILED_WITH_TERMINAL_ERROR', 'TIMED_OUT', 'CANCELED', 'SKIPPED')
  OFFSET 0) t)", 1};

#undef NF_TASK_COLUMNS

// I2 (store/decide_queues.hpp).
constexpr statement requeue_stmt{"decide.requeue", NF_WAKE_DECIDERS(R"(
SELECT e."id", e."namespaceId", e."startedAt", e."shard", $2
  FROM unnest($1::uuid[]) AS u(id)
 CROSS JOIN LATERAL (
   SELECT "id", "namespaceId", "startedAt", "shard" FROM "WorkflowExecutions"
    WHERE "id" = u.id AND "startedAt" = uuid_extract_timestamp(u.id) AND "id" = ANY($1::uuid[])
      /*started: "startedAt" */) e)"), 0, 1};

std::vector<std::string> id_texts(const std::vector<workflow_id>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const auto& id : ids)
    out.push_back(id.str());
  return out;
}

template <class Enum, class Parse>
Enum label(std::string_view text, Parse parse) {
  auto v = parse(text);
  assert(v && "a database ENUM label flow does not know");
  return v.value_or(Enum{});
}

/// Where a result holds NF_TASK_COLUMNS, looked up by name once per result.
struct task_columns {
  explicit task_columns(const result& r)
    : workflow(r.column_named("workflowId")), id(r.column_named("id")),
      ref(r.column_named("refName")), iteration(r.column_named("iteration")),
      attempt(r.column_named("attempt")), type(r.column_named("taskType")),
      def(r.column_named("taskDefName")), queue(r.column_named("queueName")),
      status(r.column_named("status")), input(r.column_named("input")),
      output(r.column_named("output")), input_payload(r.column_named("inputPayloadId")),
      output_payload(r.column_named("outputPayloadId")),
      reason(r.column_named("reasonForIncompletion")),
      worker(r.column_named("workerId")), polls(r.column_named("pollCount")),
      retried(r.column_named("retriedTaskId")), sub_workflow(r.column_named("subWorkflowId")),
      scheduled_at_ms(r.column_named("scheduled_at_ms")),
      started_at_ms(r.column_named("started_at_ms")), ended_at_ms(r.column_named("ended_at_ms")),
      updated_at_ms(r.column_named("updated_at_ms")),
      unprocessed(r.column_named("unprocessed")) {}
  int workflow, id, ref, iteration, attempt, type, def, queue, status, input, output,
    input_payload, output_payload, reason,
    worker, polls, retried, sub_workflow, scheduled_at_ms, started_at_ms, ended_at_ms,
    updated_at_ms, unprocessed;
};

task_row task_of(const result& r, const task_columns& c, int row) {
  task_row t;
  t.id = task_id{r.str(row, c.id)};
  t.identity = {r.str(row, c.ref), r.i32(row, c.iteration), r.i32(row, c.attempt)};
  t.type = label<flow::task_type>(r.text(row, c.type), flow::parse_task_type);
  t.task_def_name = r.str(row, c.def);
  t.queue_name = r.opt_str(row, c.queue);
  t.status = label<flow::task_status>(r.text(row, c.status), flow::parse_task_status);
  t.input = r.str(row, c.input);
  t.output = r.opt_str(row, c.output);
  t.input_payload_id = r.opt_str(row, c.input_payload);
  t.output_payload_id = r.opt_str(row, c.output_payload);
  t.reason_for_incompletion = r.opt_str(row, c.reason);
  t.worker_id = r.opt_str(row, c.worker);
  t.poll_count = r.i32(row, c.polls);
  if (auto x = r.opt_str(row, c.retried))
    t.retried_task_id = task_id{*x};
  if (auto x = r.opt_str(row, c.sub_workflow))
    t.sub_workflow_id = workflow_id{*x};
  t.scheduled_at_ms = r.i64(row, c.scheduled_at_ms);
  t.started_at_ms = r.opt_i64(row, c.started_at_ms);
  t.ended_at_ms = r.opt_i64(row, c.ended_at_ms);
  t.updated_at_ms = r.i64(row, c.updated_at_ms);
  t.unprocessed = r.boolean(row, c.unprocessed);
  return t;
}

} // namespace

execution_columns::execution_columns(const result& r, int first)
  : id(r.column_named("id", first)), started_at_ms(r.column_named("started_at_ms", first)),
    ns(r.column_named("namespaceId", first)), workflow_name(r.column_named("workflowName", first)),
    workflow_version(r.column_named("workflowVersion", first)),
    status(r.column_named("status", first)), input(r.column_named("input", first)),
    variables(r.column_named("variables", first)), output(r.column_named("output", first)),
    reason(r.column_named("reasonForIncompletion", first)),
    failed_task_ref(r.column_named("failedTaskRef", first)),
    correlation_id(r.column_named("correlationId", first)),
    idempotency_key(r.column_named("idempotencyKey", first)),
    priority(r.column_named("priority", first)),
    parent_workflow_id(r.column_named("parentWorkflowId", first)),
    parent_task_id(r.column_named("parentTaskId", first)), shard(r.column_named("shard", first)),
    last_seq(r.column_named("lastSeq", first)), ended_at_ms(r.column_named("ended_at_ms", first)),
    version(r.column_named("version", first)),
    task_to_domain(r.column_named("taskToDomain", first)),
    output_payload_id(r.column_named("outputPayloadId", first)) {
}

workflow_snapshot execution_of(const result& r, const execution_columns& c, int row) {
  workflow_snapshot s;
  s.id = workflow_id{r.str(row, c.id)};
  s.started_at_ms = r.i64(row, c.started_at_ms);
  s.ns = namespace_id{r.str(row, c.ns)};
  s.workflow_name = r.str(row, c.workflow_name);
  s.workflow_version = r.i32(row, c.workflow_version);
  s.status = label<flow::workflow_status>(r.text(row, c.status), flow::parse_workflow_status);
  s.input = r.str(row, c.input);
  s.variables = r.str(row, c.variables);
  s.output = r.opt_str(row, c.output);
  s.reason_for_incompletion = r.opt_str(row, c.reason);
  s.failed_task_ref = r.opt_str(row, c.failed_task_ref);
  s.correlation_id = r.opt_str(row, c.correlation_id);
  s.idempotency_key = r.opt_str(row, c.idempotency_key);
  s.priority = static_cast<int16_t>(r.i64(row, c.priority));
  if (auto x = r.opt_str(row, c.parent_workflow_id))
    s.parent_workflow_id = workflow_id{*x};
  if (auto x = r.opt_str(row, c.parent_task_id))
    s.parent_task_id = task_id{*x};
  s.shard = shard_id{static_cast<int16_t>(r.i64(row, c.shard))};
  s.last_seq = r.i64(row, c.last_seq);
  s.ended_at_ms = r.opt_i64(row, c.ended_at_ms);
  s.version = r.i64(row, c.version);
  s.task_to_domain = r.opt_str(row, c.task_to_domain);
  s.output_payload_id = r.opt_str(row, c.output_payload_id);
  return s;
}

const statement& snapshot_tasks_statement() {
  return select_tasks;
}

const statement& snapshot_tasks_after_statement() {
  return select_tasks_after;
}

const statement& frontier_statement() {
  return select_frontier;
}

std::vector<task_id> workflow_snapshot::unprocessed() const {
  std::vector<task_id> out;
  for (const auto& t : tasks)
    if (t.unprocessed)
      out.push_back(t.id);
  return out;
}

void add_claim(pipeline& p, const std::vector<shard_id>& shards, int limit) {
  // Each claim starts at the next of the caller's shards (the claim's comment).
  static std::atomic<size_t> claims{0};
  int16_t first = 0;
  if (!shards.empty())
    first = shards[claims.fetch_add(1, std::memory_order_relaxed) % shards.size()].value();
  p.add(claim, params::of(shard_array(shards), int64_t{limit}, first));
}

std::vector<decide_claim> claims_of(const result& r) {
  std::vector<decide_claim> out;
  out.reserve(static_cast<size_t>(r.rows()));
  const int id = r.column_named("workflowId"), started = r.column_named("started_at_ms"),
            ns = r.column_named("namespaceId");
  for (int row = 0; row < r.rows(); ++row)
    out.push_back({workflow_id{r.str(row, id)}, r.i64(row, started), namespace_id{r.str(row, ns)}});
  return out;
}

caf::expected<std::vector<decide_claim>>
claim_decide_batch(transaction& tx, const std::vector<shard_id>& shards, int limit) {
  pipeline p{tx.conn()};
  add_claim(p, shards, limit);
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  return claims_of((*rs)[0]);
}

void add_snapshot_reads(pipeline& p, const std::vector<workflow_id>& ids,
                        const std::vector<std::optional<task_id>>& after) {
  auto arg = text_array(id_texts(ids));
  p.add(select_executions, params::of(arg));
  if (std::none_of(after.begin(), after.end(), [](const auto& a) { return a.has_value(); })) {
    p.add(select_tasks, params::of(arg));
    return;
  }
  static const std::string none = "00000000-0000-0000-0000-000000000000";
  std::vector<std::string> from;
  from.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    from.push_back(i < after.size() && after[i] ? after[i]->str() : none);
  p.add(select_tasks_after, params::of(arg, text_array(from)));
}

caf::expected<std::vector<workflow_snapshot>> load_snapshots(transaction& tx,
                                                             const std::vector<workflow_id>& ids) {
  if (ids.empty())
    return std::vector<workflow_snapshot>{};
  pipeline p{tx.conn()};
  add_snapshot_reads(p, ids);
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  auto snaps = snapshots_of((*rs)[0], (*rs)[1]);
  if (auto resolved = resolve_payloads(tx.conn(), snaps); !resolved)
    return std::move(resolved.error());
  return snaps;
}

std::vector<workflow_snapshot> snapshots_of(const result& ex, const result& ts) {
  std::vector<workflow_snapshot> out;
  std::map<std::string, size_t> index;
  const execution_columns ec{ex};
  for (int row = 0; row < ex.rows(); ++row) {
    out.push_back(execution_of(ex, ec, row));
    index.emplace(out.back().id.str(), out.size() - 1);
  }
  const task_columns tc{ts};
  for (int row = 0; row < ts.rows(); ++row)
    if (auto it = index.find(ts.str(row, tc.workflow)); it != index.end())
      out[it->second].tasks.push_back(task_of(ts, tc, row));
  return out;
}

caf::expected<std::vector<std::pair<workflow_id, task_row>>>
load_frontier(transaction& tx, const std::vector<workflow_id>& ids) {
  std::vector<std::pair<workflow_id, task_row>> out;
  if (ids.empty())
    return out;
  auto r = tx.conn().run(select_frontier, params::of(text_array(id_texts(ids))));
  if (!r)
    return std::move(r.error());
  const task_columns c{*r};
  for (int row = 0; row < r->rows(); ++row)
    out.emplace_back(workflow_id{r->str(row, c.workflow)}, task_of(*r, c, row));
  if (auto resolved = resolve_payloads(tx.conn(), out); !resolved)
    return std::move(resolved.error());
  return out;
}

caf::expected<void> requeue(connection& conn, const std::vector<workflow_id>& ids,
                            const std::string& reason) {
  // One statement must not touch a row twice (ON CONFLICT DO UPDATE refuses).
  std::set<std::string> unique;
  for (const auto& id : ids)
    unique.insert(id.str());
  if (unique.empty())
    return {};
  auto r = conn.run(requeue_stmt, params::of(text_array(std::vector<std::string>(
                                               unique.begin(), unique.end())),
                                             reason));
  if (!r)
    return std::move(r.error());
  return {};
}

} // namespace nf::store
