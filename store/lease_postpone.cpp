#include "store/lease_postpone.hpp"

#include "proto/errors.hpp"
#include "store/pg/transaction.hpp"
#include "store/timers.hpp"

namespace nf::store {

namespace {

// The queue row first, then the task row, as a lease takes them (store/queues.cpp), found
// through the task row as a heartbeat finds it. The queue row goes: the delay timer inserts
// it again, and it fires only for a task SCHEDULED with no queue row.
constexpr statement postpone{"lease.postpone", R"(
WITH q AS (
  DELETE FROM "TaskQueues" tq
   USING (SELECT te."queueName" FROM "TaskExecutions" te
           WHERE te."workflowId" = $1 AND te."id" = $2 OFFSET 0) t
   WHERE tq."queueName" = t."queueName" AND tq."taskId" = $2 AND tq."leaseToken" = $3
  RETURNING tq."workflowId", tq."taskId", tq."shard")
UPDATE "TaskExecutions" x
   SET "status" = 'SCHEDULED', "startedAt" = NULL, "workerId" = NULL, "updatedAt" = now()
  FROM q
 WHERE x."workflowId" = q."workflowId" AND x."id" = q."taskId" AND x."status" = 'IN_PROGRESS'
RETURNING q."shard",
          (extract(epoch FROM now() + make_interval(secs => $4::bigint)) * 1000)::bigint
            AS due_ms)"};

// Only tasks with a pending delay timer: a SCHEDULED task may also be out of its queue while
// it waits for a concurrency slot, which this must not bypass.
constexpr statement queue_now{"lease.queue_delayed_now", R"(
INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "taskType", "priority", "shard")
SELECT te."queueName", te."id", te."workflowId", te."taskType", w."priority", w."shard"
  FROM "WorkflowExecutions" w
  JOIN "TaskExecutions" te ON te."workflowId" = w."id"
 WHERE w."id" = $1::uuid AND w."startedAt" = uuid_extract_timestamp($1::uuid)
   AND te."workflowId" = $1::uuid AND te."status" = 'SCHEDULED' AND te."queueName" IS NOT NULL
   AND EXISTS (SELECT 1 FROM "Timers" t
                WHERE t."taskId" = te."id" AND t."kind" = 'delay' AND t."claimedAt" IS NULL)
ON CONFLICT ("queueName", "taskId") DO NOTHING
RETURNING "queueName")"};

} // namespace

caf::expected<std::vector<std::string>> queue_delayed_now(connection& conn,
                                                          const workflow_id& workflow) {
  auto r = conn.run(queue_now, params::of(workflow));
  if (!r)
    return std::move(r.error());
  std::vector<std::string> queues;
  const int q = r->column_named("queueName");
  for (int row = 0; row < r->rows(); ++row)
    queues.push_back(r->str(row, q));
  return queues;
}

caf::expected<int64_t> postpone_lease(connection& conn, const postponed_lease& p) {
  if (p.after_seconds < 1 || p.after_seconds > max_callback_after_seconds)
    return make_error(errc::invalid, "callbackAfterSeconds: expected 1 … "
                                       + std::to_string(max_callback_after_seconds)
                                       + " seconds, got " + std::to_string(p.after_seconds));
  return perform(conn, [&](transaction& tx) -> caf::expected<int64_t> {
    auto r = tx.conn().run(postpone, params::of(p.workflow, p.task, p.token, p.after_seconds));
    if (!r)
      return std::move(r.error());
    if (r->rows() == 0)
      return make_error(errc::lease_lost, "lease lost");
    timer_spec back;
    back.kind = timer_kind::delay;
    back.workflow = p.workflow;
    back.shard = static_cast<int16_t>(r->i64(0, r->column_named("shard")));
    back.task = p.task;
    back.after_ms = p.after_seconds * 1000;
    if (auto a = arm_timers(tx.conn(), {back}); !a)
      return std::move(a.error());
    return r->i64(0, r->column_named("due_ms"));
  });
}

} // namespace nf::store
