#include "store/schedules.hpp"

#include "proto/errors.hpp"

namespace nf::store {

namespace {

// Every read names the same columns, times as epoch milliseconds.
#define NF_SCHEDULE_COLUMNS                                                                  \
  " s.\"namespaceId\"::text AS ns, s.\"name\", s.\"cronExpression\" AS cron,"                  \
  " s.\"zoneId\" AS zone, s.\"workflowName\" AS workflow_name,"                                \
  " s.\"startWorkflowRequest\"::text AS start_request, s.\"paused\","                          \
  " s.\"pausedReason\" AS paused_reason, s.\"runCatchup\" AS run_catchup,"                     \
  " floor(extract(epoch FROM s.\"scheduleStartTime\") * 1000)::int8 AS start_ms,"              \
  " floor(extract(epoch FROM s.\"scheduleEndTime\") * 1000)::int8 AS end_ms,"                  \
  " s.\"description\","                                                                       \
  " floor(extract(epoch FROM s.\"nextRunAt\") * 1000)::int8 AS next_run_ms,"                   \
  " floor(extract(epoch FROM s.\"lastRunAt\") * 1000)::int8 AS last_run_ms,"                   \
  " s.\"lastWorkflowId\"::text AS last_workflow_id,"                                           \
  " s.\"createdBy\" AS created_by, s.\"updatedBy\" AS updated_by,"                             \
  " floor(extract(epoch FROM s.\"createdAt\") * 1000)::int8 AS created_ms,"                    \
  " floor(extract(epoch FROM s.\"updatedAt\") * 1000)::int8 AS updated_ms"

// "created" reads the table as it was before the statement (a CTE shares its snapshot).
constexpr statement upsert_row{"schedules.save", R"(
WITH old AS (
  SELECT 1 AS one FROM "Schedules" o WHERE o."namespaceId" = $1::uuid AND o."name" = $2
)
INSERT INTO "Schedules" AS s ("namespaceId", "name", "cronExpression", "zoneId", "workflowName",
                              "startWorkflowRequest", "paused", "pausedReason", "runCatchup",
                              "scheduleStartTime", "scheduleEndTime", "description", "nextRunAt",
                              "createdBy", "updatedBy")
VALUES ($1::uuid, $2, $3, $4, $5, $6::jsonb, $7::bool, $8, $9::bool, $10::timestamptz,
        $11::timestamptz, $12, $13::timestamptz, $14, $14)
ON CONFLICT ("namespaceId", "name") DO UPDATE
   SET "cronExpression" = EXCLUDED."cronExpression", "zoneId" = EXCLUDED."zoneId",
       "workflowName" = EXCLUDED."workflowName",
       "startWorkflowRequest" = EXCLUDED."startWorkflowRequest", "paused" = EXCLUDED."paused",
       "pausedReason" = EXCLUDED."pausedReason", "runCatchup" = EXCLUDED."runCatchup",
       "scheduleStartTime" = EXCLUDED."scheduleStartTime",
       "scheduleEndTime" = EXCLUDED."scheduleEndTime", "description" = EXCLUDED."description",
       "nextRunAt" = EXCLUDED."nextRunAt", "updatedBy" = EXCLUDED."updatedBy",
       "updatedAt" = now()
RETURNING NOT EXISTS (SELECT 1 FROM old) AS created)"};

constexpr statement get_row{"schedules.get", "SELECT " NF_SCHEDULE_COLUMNS R"(
  FROM "Schedules" s
 WHERE s."namespaceId" = $1::uuid AND s."name" = $2)"};

constexpr statement get_row_locked{"schedules.get_locked", "SELECT " NF_SCHEDULE_COLUMNS R"(
  FROM "Schedules" s
 WHERE s."namespaceId" = $1::uuid AND s."name" = $2
   FOR UPDATE)"};

constexpr statement list_rows{"schedules.list", "SELECT " NF_SCHEDULE_COLUMNS R"(
  FROM "Schedules" s
 WHERE s."namespaceId" = $1::uuid AND ($2 = '' OR s."workflowName" = $2)
 ORDER BY s."name")"};

constexpr statement delete_row{"schedules.delete", R"(
DELETE FROM "Schedules"
 WHERE "namespaceId" = $1::uuid AND "name" = $2
RETURNING "name")"};

constexpr statement pause_row{"schedules.pause", R"(
UPDATE "Schedules"
   SET "paused" = $3::bool, "pausedReason" = $4,
       "nextRunAt" = CASE WHEN $3::bool THEN "nextRunAt" ELSE $5::timestamptz END,
       "updatedBy" = $6, "updatedAt" = now()
 WHERE "namespaceId" = $1::uuid AND "name" = $2
RETURNING "name")"};

// The due rows in tick order; a row another node holds is skipped, not waited for.
constexpr statement claim_rows{"schedules.claim_due", "SELECT " NF_SCHEDULE_COLUMNS R"(,
       floor(extract(epoch FROM clock_timestamp()) * 1000)::int8 AS now_ms
  FROM "Schedules" s
 WHERE NOT s."paused" AND s."nextRunAt" IS NOT NULL AND s."nextRunAt" <= clock_timestamp()
 ORDER BY s."nextRunAt"
 LIMIT $1
   FOR UPDATE SKIP LOCKED)"};

constexpr statement advance_row{"schedules.advance", R"(
UPDATE "Schedules"
   SET "nextRunAt" = $3::timestamptz,
       "lastRunAt" = coalesce($4::timestamptz, "lastRunAt"),
       "lastWorkflowId" = coalesce($5::uuid, "lastWorkflowId")
 WHERE "namespaceId" = $1::uuid AND "name" = $2)"};

constexpr statement horizon_row{"schedules.horizon", R"(
SELECT floor(extract(epoch FROM min(s."nextRunAt")) * 1000)::int8 AS earliest_ms,
       floor(extract(epoch FROM clock_timestamp()) * 1000)::int8 AS now_ms
  FROM "Schedules" s
 WHERE NOT s."paused" AND s."nextRunAt" IS NOT NULL)"};

#undef NF_SCHEDULE_COLUMNS

std::optional<std::string> ms_text(std::optional<int64_t> ms) {
  if (!ms)
    return std::nullopt;
  return timestamptz_text(*ms);
}

std::vector<schedule_row> rows_of(const result& r) {
  const int ns = r.column_named("ns"), name = r.column_named("name"),
            cron = r.column_named("cron"), zone = r.column_named("zone"),
            wf = r.column_named("workflow_name"), req = r.column_named("start_request"),
            paused = r.column_named("paused"), reason = r.column_named("paused_reason"),
            catchup = r.column_named("run_catchup"), start = r.column_named("start_ms"),
            end = r.column_named("end_ms"), desc = r.column_named("description"),
            next = r.column_named("next_run_ms"), last = r.column_named("last_run_ms"),
            last_wf = r.column_named("last_workflow_id"), cby = r.column_named("created_by"),
            uby = r.column_named("updated_by"), cms = r.column_named("created_ms"),
            ums = r.column_named("updated_ms");
  std::vector<schedule_row> out;
  for (int i = 0; i < r.rows(); ++i) {
    schedule_row s;
    s.ns = namespace_id{r.str(i, ns)};
    s.name = r.str(i, name);
    s.cron_expression = r.str(i, cron);
    s.zone_id = r.str(i, zone);
    s.workflow_name = r.str(i, wf);
    s.start_request_json = r.str(i, req);
    s.paused = r.boolean(i, paused);
    s.paused_reason = r.opt_str(i, reason);
    s.run_catchup = r.boolean(i, catchup);
    s.start_ms = r.opt_i64(i, start);
    s.end_ms = r.opt_i64(i, end);
    s.description = r.opt_str(i, desc);
    s.next_run_ms = r.opt_i64(i, next);
    s.last_run_ms = r.opt_i64(i, last);
    s.last_workflow_id = r.opt_str(i, last_wf);
    s.created_by = r.str(i, cby);
    s.updated_by = r.str(i, uby);
    s.created_ms = r.i64(i, cms);
    s.updated_ms = r.i64(i, ums);
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace

caf::expected<bool> save_schedule(connection& conn, const schedule_row& s) {
  auto json = json_from_text(s.start_request_json, "startWorkflowRequest");
  if (!json)
    return json.error();
  auto r = conn.run(upsert_row,
                    params::of(s.ns, s.name, s.cron_expression, s.zone_id, s.workflow_name, *json,
                               s.paused, s.paused_reason, s.run_catchup, ms_text(s.start_ms),
                               ms_text(s.end_ms), s.description, ms_text(s.next_run_ms),
                               s.updated_by));
  if (!r)
    return r.error();
  return r->boolean(0, r->column_named("created"));
}

caf::expected<std::optional<schedule_row>> get_schedule(connection& conn, const namespace_id& ns,
                                                        const std::string& name,
                                                        bool for_update) {
  auto r = conn.run(for_update ? get_row_locked : get_row, params::of(ns, name));
  if (!r)
    return r.error();
  auto rows = rows_of(*r);
  if (rows.empty())
    return std::optional<schedule_row>{};
  return std::optional<schedule_row>{std::move(rows.front())};
}

caf::expected<std::vector<schedule_row>> list_schedules(connection& conn, const namespace_id& ns,
                                                        const std::string& workflow_name) {
  auto r = conn.run(list_rows, params::of(ns, workflow_name));
  if (!r)
    return r.error();
  return rows_of(*r);
}

caf::expected<bool> delete_schedule(connection& conn, const namespace_id& ns,
                                    const std::string& name) {
  auto r = conn.run(delete_row, params::of(ns, name));
  if (!r)
    return r.error();
  return r->rows() > 0;
}

caf::expected<bool> set_schedule_paused(connection& conn, const namespace_id& ns,
                                        const std::string& name, bool paused,
                                        const std::optional<std::string>& reason,
                                        std::optional<int64_t> next_run_ms,
                                        const std::string& updated_by) {
  auto r = conn.run(pause_row,
                    params::of(ns, name, paused, reason, ms_text(next_run_ms), updated_by));
  if (!r)
    return r.error();
  return r->rows() > 0;
}

caf::expected<std::vector<schedule_row>> claim_due_schedules(transaction& tx, int limit,
                                                            int64_t& now_ms) {
  auto r = tx.conn().run(claim_rows, params::of(static_cast<int64_t>(limit)));
  if (!r)
    return r.error();
  if (r->rows() > 0)
    now_ms = r->i64(0, r->column_named("now_ms"));
  return rows_of(*r);
}

caf::expected<void> advance_schedule(transaction& tx, const namespace_id& ns,
                                     const std::string& name, std::optional<int64_t> next_run_ms,
                                     std::optional<int64_t> last_run_ms,
                                     const std::optional<std::string>& last_workflow_id) {
  auto r = tx.conn().run(advance_row, params::of(ns, name, ms_text(next_run_ms),
                                                 ms_text(last_run_ms), last_workflow_id));
  if (!r)
    return r.error();
  return {};
}

caf::expected<schedule_horizon> schedule_horizon_of(connection& conn) {
  auto r = conn.run(horizon_row);
  if (!r)
    return r.error();
  schedule_horizon h;
  h.earliest_ms = r->opt_i64(0, r->column_named("earliest_ms"));
  h.now_ms = r->i64(0, r->column_named("now_ms"));
  return h;
}

} // namespace nf::store
