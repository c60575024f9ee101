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

} // namespace

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
