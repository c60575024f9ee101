#include "store/lease_sweep.hpp"

#include <boost/json.hpp>

#include "flow/retry.hpp"
#include "store/json.hpp"
#include "proto/errors.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// §4.4's sweep scan (each partition a range scan on its lease index), but WITHOUT a lock:
// the queue rows come third in the lock order, so they are locked (and re-checked)
// by apply_transition after the "DecideQueues" and execution rows. It names "TaskQueues"
// alone: the sweep runs on every poll of the node's timer and nearly always finds nothing,
// and with the task rows read in the same statement its generic plan would name every
// "TaskExecutions" partition too, and be built again after a vacuum of any of them.
constexpr statement read_expired{"lease.read_expired", R"(
SELECT "queueName", "taskId", "workflowId", "leaseToken", "shard" FROM "TaskQueues"
 WHERE "leaseExpiresAt" < now() ORDER BY "leaseExpiresAt" LIMIT $1)"};

// When the next lease runs out, on its partial index (every partition's first entry).
constexpr statement next_expiry{"lease.next_expiry", R"(
SELECT (extract(epoch FROM min("leaseExpiresAt") - now()) * 1000)::bigint AS due_in_ms
  FROM "TaskQueues" WHERE "leaseExpiresAt" IS NOT NULL)"};

// The task rows of the expired leases, in their order; read only when there are some.
constexpr statement expired_tasks{"lease.expired_tasks", R"(
SELECT t."namespaceId", t."status"::text, t."refName", t."scheduledAt", t."attempt"
  FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS u(wf, tid, ord)
  LEFT JOIN LATERAL (
    SELECT x."namespaceId", x."status", x."refName", x."scheduledAt", x."attempt"
      FROM "TaskExecutions" x WHERE x."workflowId" = u.wf AND x."id" = u.tid) t
    ON true
 ORDER BY u.ord)"};

} // namespace

caf::expected<std::optional<int64_t>> next_lease_expiry(connection& conn) {
  auto r = conn.run(next_expiry);
  if (!r)
    return std::move(r.error());
  return r->opt_i64(0, r->column_named("due_in_ms"));
}

caf::expected<std::vector<swept_lease>> sweep_expired_leases(connection& conn, int limit) {
  if (limit < 1 || limit > 10000)
    return make_error(errc::invalid, "limit: expected an integer 1 … 10000, got "
                                       + std::to_string(limit));
  return perform_replanning(conn, [&](transaction& tx) -> caf::expected<std::vector<swept_lease>> {
    auto rows = tx.conn().run(read_expired, params::of(limit));
    if (!rows)
      return std::move(rows.error());
    if (rows->rows() == 0)
      return std::vector<swept_lease>{};
    const int queue = rows->column_named("queueName"), task = rows->column_named("taskId"),
              workflow = rows->column_named("workflowId"), token = rows->column_named("leaseToken"),
              shard = rows->column_named("shard");
    auto tasks = tx.conn().run_n(expired_tasks,
                                 params::of(text_array(*rows, workflow), text_array(*rows, task)),
                                 rows->rows());
    if (!tasks)
      return std::move(tasks.error());
    const int ns = tasks->column_named("namespaceId"), status = tasks->column_named("status"),
              ref = tasks->column_named("refName"),
              scheduled_at = tasks->column_named("scheduledAt"),
              attempt = tasks->column_named("attempt");
    transition_plan plan;
    std::vector<swept_lease> out;
    for (int i = 0; i < rows->rows(); ++i) {
      swept_lease s{rows->str(i, queue), workflow_id{rows->str(i, workflow)},
                    task_id{rows->str(i, task)}, static_cast<int16_t>(rows->i64(i, shard))};
      lease_token lease{rows->str(i, token)};
      plan.removals.push_back(queue_removal{s.queue, s.task, lease, true});
      if (!tasks->is_null(i, status)
          && flow::parse_task_status(tasks->text(i, status)) == flow::task_status::in_progress) {
        namespace_id task_ns{tasks->str(i, ns)};
        boost::json::object payload{{"timeout", "responseTimeout"},
                                    {"attempt", tasks->i64(i, attempt)}};
        plan.wakes.push_back(decider_wake{s.workflow, task_ns, s.shard, "leaseExpired"});
        plan.finishes.push_back(task_finish{s.workflow, s.task, flow::task_status::in_progress,
                                            flow::task_status::timed_out,
                                            std::nullopt,
                                            std::string{flow::response_timeout_reason},
                                            tasks->str(i, scheduled_at), std::nullopt});
        plan.events.push_back(event_draft{s.workflow, task_ns, s.shard, "TASK_TIMED_OUT", s.task,
                                          tasks->str(i, ref), json(payload)});
      } // else: a queue row whose task is not running is stale; it only goes away
      out.push_back(std::move(s));
    }
    if (auto a = apply_transition(tx.conn(), plan); !a)
      return std::move(a.error());
    return out;
  });
}

} // namespace nf::store
