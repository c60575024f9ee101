#include "store/lease_hand_back.hpp"

#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// The queue row first, then the task row, as the lease takes them (store/queues.cpp). The
// queue is found through the task row, as a heartbeat finds it.
constexpr statement hand_back{"lease.hand_back", R"(
WITH q AS (
  UPDATE "TaskQueues" tq SET "leaseToken" = NULL, "leaseExpiresAt" = NULL, "leasedBy" = NULL
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS u(wf, tid, tok)
    JOIN LATERAL (SELECT te."queueName" FROM "TaskExecutions" te
                   WHERE te."workflowId" = u.wf AND te."id" = u.tid OFFSET 0) t ON true
   WHERE tq."queueName" = t."queueName" AND tq."taskId" = u.tid AND tq."leaseToken" = u.tok
  RETURNING tq."workflowId", tq."taskId", tq."queueName")
UPDATE "TaskExecutions" t
   SET "status" = 'SCHEDULED', "startedAt" = NULL, "workerId" = NULL, "updatedAt" = now()
  FROM q
 WHERE t."workflowId" = q."workflowId" AND t."id" = q."taskId" AND t."status" = 'IN_PROGRESS'
RETURNING q."queueName")"};

} // namespace

caf::expected<std::vector<std::string>> hand_back_leases(connection& conn,
                                                         const std::vector<undelivered_lease>& ls) {
  std::vector<std::string> queues;
  if (ls.empty())
    return queues;
  auto r = conn.run(hand_back,
                    params::of(ids_array(ls, [](const auto& l) { return l.workflow; }),
                               ids_array(ls, [](const auto& l) { return l.task; }),
                               ids_array(ls, [](const auto& l) { return l.token; })));
  if (!r)
    return std::move(r.error());
  const int queue = r->column_named("queueName");
  for (int i = 0; i < r->rows(); ++i)
    queues.push_back(r->str(i, queue));
  return queues;
}

} // namespace nf::store
