#pragma once

// Bench-only SQL, kept apart from store/ on purpose: the SQL-only ceiling on
// its own scratch schema ("nodeflow_bench", never an engine table), read-only
// metric and history queries against the engine's tables, and the W4 history
// generator. None of it is linked into nodeflow; the engine's own statements
// live in store/.

namespace nf::bench::sql {

// ---------------------------------------------------------------- ceiling
// A task lifecycle as the engine needs it at least — a queue row inserted, leased with
// FOR UPDATE SKIP LOCKED, deleted, and a decide row upserted — in three transactions
// (enqueue; lease; complete), each carrying 1 or 100 lifecycles.
inline constexpr const char* ceiling_setup = R"(
DROP SCHEMA IF EXISTS nodeflow_bench CASCADE;
CREATE SCHEMA nodeflow_bench;
CREATE TABLE nodeflow_bench.queue (
  "queueName"      TEXT        NOT NULL,
  "id"             BIGSERIAL   NOT NULL,
  "workflowId"     UUID        NOT NULL,
  "enqueuedAt"     TIMESTAMPTZ NOT NULL DEFAULT now(),
  "leaseToken"     UUID,
  "leaseExpiresAt" TIMESTAMPTZ,
  PRIMARY KEY ("queueName", "id")
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01);
CREATE INDEX ON nodeflow_bench.queue ("queueName", "id") WHERE "leaseExpiresAt" IS NULL;
CREATE TABLE nodeflow_bench.decide (
  "workflowId" UUID        NOT NULL PRIMARY KEY,
  "shard"      SMALLINT    NOT NULL,
  "enqueuedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "reason"     TEXT
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01);
)";
inline constexpr const char* ceiling_drop = "DROP SCHEMA IF EXISTS nodeflow_bench CASCADE";
inline constexpr const char* ceiling_enqueue = R"(
INSERT INTO nodeflow_bench.queue ("queueName", "workflowId")
SELECT 'bench', gen_random_uuid() FROM generate_series(1, $1::int))";
inline constexpr const char* ceiling_lease = R"(
UPDATE nodeflow_bench.queue q SET "leaseToken" = gen_random_uuid(),
       "leaseExpiresAt" = now() + interval '5 minutes'
WHERE ("queueName", "id") IN (
  SELECT "queueName", "id" FROM nodeflow_bench.queue
  WHERE "queueName" = 'bench' AND "leaseExpiresAt" IS NULL
  ORDER BY "id" LIMIT $1::int FOR UPDATE SKIP LOCKED)
RETURNING q."id", q."leaseToken")";
inline constexpr const char* ceiling_complete = R"(
WITH done AS (
  DELETE FROM nodeflow_bench.queue q
  USING unnest($1::bigint[], $2::uuid[]) AS l(id, token)
  WHERE q."queueName" = 'bench' AND q."id" = l.id AND q."leaseToken" = l.token
  RETURNING q."workflowId")
INSERT INTO nodeflow_bench.decide ("workflowId", "shard", "reason")
SELECT "workflowId", 0, 'task' FROM done
ON CONFLICT ("workflowId") DO UPDATE SET "reason" = EXCLUDED."reason", "enqueuedAt" = now())";

// ---------------------------------------------------------------- metrics
inline constexpr const char* xacts = R"(
SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())";
inline constexpr const char* wal_bytes = "SELECT wal_bytes::bigint FROM pg_stat_wal";
// Rows written per engine table (partitions summed into their parent).
inline constexpr const char* rows_written = R"(
SELECT coalesce(p.relname, c.relname)::text AS t, sum(s.n_tup_ins)::bigint,
       sum(s.n_tup_upd)::bigint, sum(s.n_tup_del)::bigint
FROM pg_stat_user_tables s
JOIN pg_class c ON c.oid = s.relid
LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
LEFT JOIN pg_class p ON p.oid = i.inhparent
WHERE s.schemaname = 'public'
GROUP BY 1)";
inline constexpr const char* statements_enable =
  "CREATE EXTENSION IF NOT EXISTS pg_stat_statements";
inline constexpr const char* statements_reset = "SELECT pg_stat_statements_reset()";
inline constexpr const char* statements_top = R"(
SELECT calls, round(total_exec_time::numeric, 1)::text, rows, round(total_plan_time::numeric, 1)::text,
       round((shared_blks_hit + shared_blks_read)::numeric / greatest(calls, 1), 1)::text,
       left(regexp_replace(query, '\s+', ' ', 'g'), 160)
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY total_exec_time + total_plan_time DESC LIMIT $1::int)";

// ---------------------------------------------------------------- engine reads
// How this run's executions stand, and when the last one ended (server clock).
inline constexpr const char* run_status = R"(
SELECT count(*) FILTER (WHERE "status" = 'COMPLETED'),
       count(*) FILTER (WHERE "status" IN ('RUNNING', 'PAUSED')),
       count(*),
       coalesce(extract(epoch FROM max("endedAt")) * 1e6, 0)::bigint
FROM "WorkflowExecutions"
WHERE "namespaceId" = '00000000-0000-0000-0000-000000000001' AND "workflowName" = $1)";
// How many of this run's executions ended in a window (unix microseconds, server clock).
inline constexpr const char* ended_between = R"(
SELECT count(*) FROM "WorkflowExecutions"
WHERE "namespaceId" = '00000000-0000-0000-0000-000000000001' AND "workflowName" = $1
  AND "status" = 'COMPLETED' AND "endedAt" >= to_timestamp($2::bigint / 1e6)
  AND "endedAt" < to_timestamp($3::bigint / 1e6))";
// The history facts the latencies need: when each task was scheduled and each
// workflow completed, as event sequence numbers (matched to commit times).
inline constexpr const char* run_events = R"(
SELECT "workflowId"::text, "seq", "eventType"::text, coalesce("refName", '')
FROM "WorkflowEvents"
WHERE "workflowId" = ANY($1::uuid[]) AND "eventType" IN ('TASK_SCHEDULED', 'WORKFLOW_COMPLETED'))";
inline constexpr const char* history_count = R"(
SELECT count(*) FROM "WorkflowExecutions"
WHERE "namespaceId" = '00000000-0000-0000-0000-000000000001' AND "workflowName" = 'bench_history')";

// ---------------------------------------------------------------- W4 history
// $1 finished one-task workflows, started over the last 25 days, each with its
// task and the five events the engine writes for it. Triggers are off in this
// session (session_replication_role = replica): history that is generated
// notifies nobody.
inline constexpr const char* history_chunk = R"(
WITH w AS (
  SELECT uuidv7(- (random() * interval '25 days')) AS id FROM generate_series(1, $1::int)
), x AS (
  INSERT INTO "WorkflowExecutions" ("id", "startedAt", "namespaceId", "workflowName",
    "workflowVersion", "status", "input", "output", "shard", "lastSeq", "endedAt",
    "updatedAt", "version")
  SELECT id, uuid_extract_timestamp(id), '00000000-0000-0000-0000-000000000001',
    'bench_history', 1, 'COMPLETED', '{"n": 1}', '{"n": 1}',
    (abs(hashtext(id::text)) % 16)::smallint, 5,
    uuid_extract_timestamp(id) + interval '12 ms', uuid_extract_timestamp(id) + interval '12 ms', 2
  FROM w
  RETURNING "id", "startedAt"
), t AS (
  INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "taskType",
    "taskDefName", "queueName", "status", "input", "output", "workerId", "pollCount",
    "scheduledAt", "startedAt", "endedAt", "updatedAt", "deciderSeenAt")
  SELECT "id", '00000000-0000-0000-0000-000000000001', 'work', 'SIMPLE', 'bench_history_task',
    'bench_history', 'COMPLETED', '{"n": 1}', '{"n": 1}', 'bench-history', 1,
    "startedAt", "startedAt" + interval '3 ms', "startedAt" + interval '8 ms',
    "startedAt" + interval '8 ms', "startedAt" + interval '12 ms'
  FROM x
  RETURNING "workflowId", "id", "scheduledAt"
)
INSERT INTO "WorkflowEvents" ("workflowId", "seq", "at", "namespaceId", "eventType", "taskId",
  "refName", "payload")
SELECT t."workflowId", e.seq, t."scheduledAt" + e.ms * interval '1 ms',
  '00000000-0000-0000-0000-000000000001', e.type::workflow_event_type,
  CASE WHEN e.ref THEN t."id" END, CASE WHEN e.ref THEN 'work' END, '{}'
FROM t CROSS JOIN (VALUES (1, 0, 'WORKFLOW_STARTED', false), (2, 0, 'TASK_SCHEDULED', true),
  (3, 3, 'TASK_STARTED', true), (4, 8, 'TASK_COMPLETED', true),
  (5, 12, 'WORKFLOW_COMPLETED', false)) AS e(seq, ms, type, ref))";

} // namespace nf::bench::sql
