#include "store/task_history.hpp"

namespace nf::store {

namespace {

// $3 and $4 are the page's key; the first page passes a key past every row (9999-12-31 and
// the greatest uuid), so one statement, with its index condition, serves every page. The
// bound is microseconds added to the epoch, exact, as "scheduled_us" is.
constexpr statement recent{"tasks.recent_by_def", R"(
SELECT t."id", t."workflowId", t."refName", t."iteration", t."attempt",
       t."taskType"::text AS task_type, t."status"::text AS status,
       (extract(epoch FROM t."scheduledAt") * 1000000)::bigint AS scheduled_us,
       (extract(epoch FROM t."startedAt") * 1000)::bigint AS started_ms,
       (extract(epoch FROM t."endedAt") * 1000)::bigint AS ended_ms,
       t."workerId", t."reasonForIncompletion"
  FROM "TaskExecutions" t
 WHERE t."namespaceId" = $1 AND t."taskDefName" = $2
   AND t."scheduledAt" <= timestamptz 'epoch' + $3::bigint * interval '1 microsecond'
   AND (t."scheduledAt" < timestamptz 'epoch' + $3::bigint * interval '1 microsecond'
        OR t."id" < $4::uuid)
 ORDER BY t."scheduledAt" DESC, t."id" DESC
 LIMIT $5)"};

constexpr int64_t past_every_row_us = 253402300799999999; // 9999-12-31T23:59:59.999999Z
constexpr const char* greatest_uuid = "ffffffff-ffff-ffff-ffff-ffffffffffff";

} // namespace

caf::expected<std::vector<task_history_row>>
recent_task_executions(connection& conn, const namespace_id& ns, const std::string& task_def_name,
                       const std::optional<task_history_key>& before, int32_t limit) {
  auto r = conn.run(recent, params::of(ns, task_def_name,
                                       before ? before->scheduled_us : past_every_row_us,
                                       before ? before->id : std::string{greatest_uuid},
                                       limit));
  if (!r)
    return std::move(r.error());
  const int id = r->column_named("id"), wf = r->column_named("workflowId"),
            ref = r->column_named("refName"), iteration = r->column_named("iteration"),
            attempt = r->column_named("attempt"), type = r->column_named("task_type"),
            status = r->column_named("status"), scheduled = r->column_named("scheduled_us"),
            started = r->column_named("started_ms"), ended = r->column_named("ended_ms"),
            worker = r->column_named("workerId"),
            reason = r->column_named("reasonForIncompletion");
  std::vector<task_history_row> out;
  for (int i = 0; i < r->rows(); ++i) {
    task_history_row t;
    t.id = r->str(i, id);
    t.workflow_id = r->str(i, wf);
    t.ref = r->str(i, ref);
    t.iteration = r->i32(i, iteration);
    t.attempt = r->i32(i, attempt);
    t.task_type = r->str(i, type);
    t.status = r->str(i, status);
    t.scheduled_us = r->i64(i, scheduled);
    t.started_ms = r->opt_i64(i, started);
    t.ended_ms = r->opt_i64(i, ended);
    if (!r->is_null(i, worker))
      t.worker_id = r->str(i, worker);
    if (!r->is_null(i, reason))
      t.reason = r->str(i, reason);
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace nf::store
