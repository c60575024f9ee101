#include "store/workflow_removal.hpp"

#include "proto/errors.hpp"
#include "store/json.hpp"
#include "store/pg/transaction.hpp"
#include "store/request_ids.hpp"

namespace nf::store {

namespace {

// Every delete waits on the execution row's lock and runs only when that row was ended and
// is deleted (`gone`): a concurrent restart or retry either commits first (the row is then
// live and nothing is deleted) or finds the row gone. Each table is reached by its partition
// key: the execution by its id's timestamp (= "startedAt"), the task executions and payloads
// by the workflow's hash partition, the history from the start's month on.
constexpr statement remove{"workflow_removal.remove", R"(
WITH w AS (
  SELECT "id", "startedAt", "status"::text AS "status"
    FROM "WorkflowExecutions"
   WHERE "id" = $1 AND "startedAt" = uuid_extract_timestamp($1::uuid) AND "namespaceId" = $2
     FOR UPDATE),
gone AS (
  DELETE FROM "WorkflowExecutions" e
   WHERE e."id" = $1 AND e."startedAt" = uuid_extract_timestamp($1::uuid)
     AND EXISTS (SELECT 1 FROM w WHERE w."status" NOT IN ('RUNNING', 'PAUSED'))
  RETURNING e."id"),
tasks AS (
  DELETE FROM "TaskExecutions" t
   WHERE t."workflowId" = $1 AND EXISTS (SELECT 1 FROM gone)
  RETURNING t."id", t."queueName"),
queued AS (
  DELETE FROM "TaskQueues" q USING tasks
   WHERE q."queueName" = tasks."queueName" AND q."taskId" = tasks."id"
  RETURNING q."taskId"),
events AS (
  DELETE FROM "WorkflowEvents" v
   WHERE v."workflowId" = $1 AND v."at" >= uuid_extract_timestamp($1::uuid) - interval '1 day'
     AND EXISTS (SELECT 1 FROM gone)
  RETURNING v."seq"),
payloads AS (
  DELETE FROM "Payloads" p
   WHERE p."workflowId" = $1 AND EXISTS (SELECT 1 FROM gone)
  RETURNING p."id"),
decide AS (
  DELETE FROM "DecideQueues" d
   WHERE d."workflowId" = $1 AND EXISTS (SELECT 1 FROM gone)
  RETURNING d."workflowId"),
keys AS (
  DELETE FROM "IdempotencyKeys" k
   WHERE k."workflowStartedAt" = uuid_extract_timestamp($1::uuid) AND k."workflowId" = $1
     AND EXISTS (SELECT 1 FROM gone)
  RETURNING k."key")
SELECT (SELECT "status" FROM w) AS "status",
       (SELECT count(*) FROM gone) AS removed,
       (SELECT count(*) FROM tasks) AS tasks,
       (SELECT count(*) FROM queued) AS queued,
       (SELECT count(*) FROM events) AS events,
       (SELECT count(*) FROM payloads) AS payloads,
       (SELECT count(*) FROM decide) AS decide,
       (SELECT count(*) FROM keys) AS keys)"};

} // namespace

caf::expected<removed_workflow> remove_workflow(connection& conn, const workflow_id& id,
                                                const namespace_id& ns, audit_event audit,
                                                const std::string& request_id,
                                                const boost::json::object& answer) {
  return perform(conn, [&](transaction& tx) -> caf::expected<removed_workflow> {
    removed_workflow out;
    if (!request_id.empty()) {
      auto earlier = claim_request(tx.conn(), {ns, request_id, "command remove", id.str()},
                                   json(answer));
      if (!earlier)
        return std::move(earlier.error());
      if (*earlier) {
        out.earlier = std::move(*earlier);
        return out;
      }
    }
    auto r = tx.conn().run1(remove, params::of(id, ns));
    if (!r)
      return std::move(r.error());
    if (r->is_null(0, r->column_named("status")))
      return nf::make_error(nf::errc::not_found, "workflow " + id.str() + " not found");
    if (r->i64(0, r->column_named("removed")) == 0) {
      auto status = r->str(0, r->column_named("status"));
      return nf::make_error(nf::errc::invalid, "workflow " + id.str() + " is " + status
                                                 + ": only an ended workflow is removed "
                                                   "(terminate it first)");
    }
    out.tasks = r->i64(0, r->column_named("tasks"));
    out.events = r->i64(0, r->column_named("events"));
    out.payloads = r->i64(0, r->column_named("payloads"));
    audit.ns = ns;
    audit.details["status"] = r->str(0, r->column_named("status"));
    audit.details["tasks"] = out.tasks;
    audit.details["events"] = out.events;
    if (auto a = append_audit(tx.conn(), audit); !a)
      return std::move(a.error());
    return out;
  });
}

} // namespace nf::store
