#include "store/workflow_edits.hpp"

#include "proto/errors.hpp"
#include "store/pg/pipeline.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

namespace {

// I4: the compare-and-set, and the new state of the execution.
constexpr statement edit_cas{"edit.cas", R"(
UPDATE "WorkflowExecutions" SET
  "version" = "version" + 1,
  "status" = $3::workflow_execution_status,
  "output" = NULL, "outputPayloadId" = NULL, "reasonForIncompletion" = NULL,
  "failedTaskRef" = NULL,
  "endedAt" = CASE WHEN $3 IN ('RUNNING', 'PAUSED') THEN NULL ELSE COALESCE("endedAt", now()) END,
  "input" = COALESCE($4::jsonb, "input"),
  "variables" = COALESCE($5::jsonb, "variables"),
  "updatedAt" = now()
 WHERE "id" = $1 AND "startedAt" = uuid_extract_timestamp($1::uuid) AND "version" = $2
RETURNING "id")"};

// Queue rows before task rows (the global lock order).
constexpr statement edit_unqueue{"edit.unqueue", R"(
DELETE FROM "TaskQueues" q
 USING (SELECT t."queueName", t."id"
          FROM unnest($2::text[], $3::integer[], $4::integer[]) AS u(ref, iter, att)
          JOIN "TaskExecutions" t
            ON t."workflowId" = $1 AND t."refName" = u.ref AND t."iteration" = u.iter
           AND t."attempt" = u.att AND t."queueName" IS NOT NULL) x
 WHERE q."queueName" = x."queueName" AND q."taskId" = x."id")"};

// An optimisation (the firing re-check is the correctness, I6); SKIP LOCKED as in
// task_transitions: a timer being fired waits for rows this transaction holds.
constexpr statement edit_cancel_timers{"edit.cancel_timers", R"(
DELETE FROM "Timers" tm
 USING (SELECT c."id", c."fireAt"
          FROM unnest($2::text[], $3::integer[], $4::integer[]) AS u(ref, iter, att)
          JOIN "TaskExecutions" t
            ON t."workflowId" = $1 AND t."refName" = u.ref AND t."iteration" = u.iter
           AND t."attempt" = u.att
          JOIN "Timers" c ON c."taskId" = t."id" AND c."claimedAt" IS NULL
           AND c."fireAt" >= t."scheduledAt"
           FOR UPDATE OF c SKIP LOCKED) x
 WHERE tm."id" = x."id" AND tm."fireAt" = x."fireAt")"};

constexpr statement edit_delete{"edit.delete_tasks", R"(
DELETE FROM "TaskExecutions" t
 USING unnest($2::text[], $3::integer[], $4::integer[]) AS u(ref, iter, att)
 WHERE t."workflowId" = $1 AND t."refName" = u.ref AND t."iteration" = u.iter
   AND t."attempt" = u.att)"};

constexpr statement edit_reopen{"edit.reopen_tasks", R"(
UPDATE "TaskExecutions" t SET
  "status" = u.status::task_execution_status,
  "endedAt" = CASE WHEN u.status IN ('SCHEDULED', 'IN_PROGRESS') THEN NULL
                   ELSE COALESCE(t."endedAt", now()) END,
  "deciderSeenAt" = CASE WHEN u.status IN ('SCHEDULED', 'IN_PROGRESS') THEN NULL
                         ELSE t."deciderSeenAt" END,
  "reasonForIncompletion" = NULL,
  "updatedAt" = now()
  FROM unnest($2::text[], $3::integer[], $4::integer[], $5::text[]) AS u(ref, iter, att, status)
 WHERE t."workflowId" = $1 AND t."refName" = u.ref AND t."iteration" = u.iter
   AND t."attempt" = u.att)"};

template <class Range, class Get>
params identity_params(const workflow_id& id, const Range& xs, Get get) {
  std::vector<std::string> refs;
  std::vector<int64_t> iters, atts;
  for (const auto& x : xs) {
    const flow::task_identity& t = get(x);
    refs.push_back(t.ref);
    iters.push_back(t.iteration);
    atts.push_back(t.attempt);
  }
  return params::of(id, text_array(refs), int_array(iters), int_array(atts));
}

} // namespace

caf::expected<void> apply_edit(transaction& tx, const edit_write& w) {
  auto& conn = tx.conn();
  auto cas = conn.run(edit_cas, params::of(w.id, w.expected_version,
                                           std::string{flow::to_string(w.status)}, w.input,
                                           w.variables));
  if (!cas)
    return std::move(cas.error());
  if (cas->rows() == 0)
    return make_error(errc::stale, "stale edit: another evaluation committed first for workflow "
                                     + w.id.str() + " (expected version "
                                     + std::to_string(w.expected_version) + ")");
  pipeline p{conn};
  auto same = [](const flow::task_identity& t) -> const flow::task_identity& { return t; };
  if (!w.remove.empty()) {
    p.add(edit_unqueue, identity_params(w.id, w.remove, same));
    p.add(edit_cancel_timers, identity_params(w.id, w.remove, same));
    p.add(edit_delete, identity_params(w.id, w.remove, same));
  }
  if (!w.reopen.empty()) {
    auto ps = identity_params(w.id, w.reopen,
                              [](const task_reopen& r) -> const flow::task_identity& {
                                return r.identity;
                              });
    std::vector<std::string> statuses;
    for (const auto& r : w.reopen)
      statuses.emplace_back(flow::to_string(r.status));
    ps.add(text_array(statuses));
    p.add(edit_reopen, std::move(ps));
  }
  if (p.size() == 0)
    return {};
  auto rs = p.run();
  if (!rs)
    return std::move(rs.error());
  return {};
}

} // namespace nf::store
