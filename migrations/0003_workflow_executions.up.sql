-- 0003_workflow_executions: "WorkflowExecutions" (range-partitioned monthly on "startedAt")
-- and "IdempotencyKeys" (unpartitioned).
-- Decisions where the seed is silent:
--   * "startedAt" is not a clock reading: it is uuid_extract_timestamp("id") (ids are uuidv7()),
--     enforced by a CHECK. A lookup by id alone can then name its partition:
--       WHERE "id" = $1 AND "startedAt" = uuid_extract_timestamp($1)
--     (uuid_extract_timestamp is IMMUTABLE, so this prunes at plan time). It has no DEFAULT on
--     purpose: now() would violate the CHECK; the insert must pass uuid_extract_timestamp(id).
--     The CHECK also makes "id" unique on its own although the PK must include "startedAt".
--   * "lastSeq" is the WorkflowEvents.seq allocator (I8): UPDATE … SET "lastSeq" = "lastSeq" + n
--     … RETURNING "lastSeq" under this row's lock, in the transaction that writes the events.
--   * "endedAt" is set exactly when the status is terminal (CHECK), so a reader can trust it.
--   * "priority" (0-99, Conductor semantics, higher first) is copied onto TaskQueues rows.
--   * No foreign keys on this hot table (a FK takes KEY SHARE on the referenced row per insert).
--   * Partitions: "WorkflowExecutions_default" plus current month and the next two, named
--     "WorkflowExecutions_yYYYYmMM", bounds at UTC month starts (see docs/schema.md).

CREATE TYPE workflow_execution_status AS ENUM
  ('RUNNING', 'COMPLETED', 'FAILED', 'TIMED_OUT', 'TERMINATED', 'PAUSED');

CREATE TABLE "WorkflowExecutions" (
  "id"                      UUID        NOT NULL DEFAULT uuidv7(),
  "startedAt"               TIMESTAMPTZ NOT NULL,
  "namespaceId"             UUID        NOT NULL,
  "workflowName"            TEXT        NOT NULL,
  "workflowVersion"         INTEGER     NOT NULL CHECK ("workflowVersion" >= 1),
  "status"                  workflow_execution_status NOT NULL DEFAULT 'RUNNING',
  "input"                   JSONB       NOT NULL DEFAULT '{}',
  "output"                  JSONB,
  "variables"               JSONB       NOT NULL DEFAULT '{}',
  "reasonForIncompletion"   TEXT,
  "failedTaskRef"           TEXT,
  "correlationId"           TEXT,
  "idempotencyKey"          TEXT,
  "priority"                SMALLINT    NOT NULL DEFAULT 0 CHECK ("priority" BETWEEN 0 AND 99),
  "parentWorkflowId"        UUID,
  "parentWorkflowStartedAt" TIMESTAMPTZ,
  "parentTaskId"            UUID,
  "shard"                   SMALLINT    NOT NULL CHECK ("shard" >= 0),
  "lastSeq"                 BIGINT      NOT NULL DEFAULT 0 CHECK ("lastSeq" >= 0),
  "endedAt"                 TIMESTAMPTZ,
  "updatedAt"               TIMESTAMPTZ NOT NULL DEFAULT now(),
  "version"                 BIGINT      NOT NULL DEFAULT 0 CHECK ("version" >= 0),
  PRIMARY KEY ("id", "startedAt"),
  CONSTRAINT "WorkflowExecutions_startedAt_ck" CHECK ("startedAt" = uuid_extract_timestamp("id")),
  CONSTRAINT "WorkflowExecutions_endedAt_ck" CHECK (("endedAt" IS NULL) = ("status" IN ('RUNNING', 'PAUSED'))),
  CONSTRAINT "WorkflowExecutions_parent_ck" CHECK (
    ("parentWorkflowId" IS NULL) = ("parentWorkflowStartedAt" IS NULL)
    AND ("parentWorkflowId" IS NULL) = ("parentTaskId" IS NULL))
) PARTITION BY RANGE ("startedAt");

-- Search by namespace + status, newest first (keyset pagination on "startedAt" DESC).
CREATE INDEX "WorkflowExecutions_ns_status_idx"
  ON "WorkflowExecutions" ("namespaceId", "status", "startedAt" DESC);
-- Search by namespace + workflow name, newest first.
CREATE INDEX "WorkflowExecutions_ns_name_idx"
  ON "WorkflowExecutions" ("namespaceId", "workflowName", "startedAt" DESC);
-- Plain list of a namespace, newest first.
CREATE INDEX "WorkflowExecutions_ns_startedAt_idx"
  ON "WorkflowExecutions" ("namespaceId", "startedAt" DESC);
-- By correlation id; most executions have none, so they stay out of the index.
CREATE INDEX "WorkflowExecutions_correlation_idx"
  ON "WorkflowExecutions" ("namespaceId", "correlationId", "startedAt" DESC)
  WHERE "correlationId" IS NOT NULL;
-- Running/paused executions of a workflow name (Conductor's "running workflows"); sized by
-- in-flight work, not history.
CREATE INDEX "WorkflowExecutions_active_idx"
  ON "WorkflowExecutions" ("namespaceId", "workflowName", "startedAt" DESC)
  WHERE "status" IN ('RUNNING', 'PAUSED');

CREATE TABLE "WorkflowExecutions_default" PARTITION OF "WorkflowExecutions" DEFAULT;

DO $$
DECLARE
  m  timestamptz := date_trunc('month', now(), 'UTC');
  lo timestamptz;
  hi timestamptz;
BEGIN
  FOR i IN 0..2 LOOP
    lo := (m AT TIME ZONE 'UTC' + make_interval(months => i)) AT TIME ZONE 'UTC';
    hi := (m AT TIME ZONE 'UTC' + make_interval(months => i + 1)) AT TIME ZONE 'UTC';
    EXECUTE format('CREATE TABLE %I PARTITION OF "WorkflowExecutions" FOR VALUES FROM (%L) TO (%L)',
                   'WorkflowExecutions_' || to_char(lo AT TIME ZONE 'UTC', '"y"YYYY"m"MM'), lo, hi);
  END LOOP;
END
$$;

-- The idempotency trap: a UNIQUE index on the partitioned "WorkflowExecutions" must include the
-- partition key, so UNIQUE ("namespaceId","idempotencyKey","startedAt") is all Postgres allows
-- there — and it only says "unique per millisecond of start time": two starts with the same key
-- get different uuidv7 ids, hence different "startedAt", and both insert. The key therefore
-- lives in its own unpartitioned table whose PK is exactly the uniqueness we mean (I10).
-- Start: INSERT … ON CONFLICT ("namespaceId","key") DO NOTHING RETURNING; no row ⇒ read the winner.
CREATE TABLE "IdempotencyKeys" (
  "namespaceId"       UUID        NOT NULL,
  "key"               TEXT        NOT NULL,
  "workflowId"        UUID        NOT NULL,
  "workflowStartedAt" TIMESTAMPTZ NOT NULL,
  "createdAt"         TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "key"),
  CONSTRAINT "IdempotencyKeys_startedAt_ck" CHECK ("workflowStartedAt" = uuid_extract_timestamp("workflowId"))
);
-- Retention: when a month of executions is dropped, its keys go with it
-- (DELETE … WHERE "workflowStartedAt" < $partitionUpperBound).
CREATE INDEX "IdempotencyKeys_workflowStartedAt_idx" ON "IdempotencyKeys" ("workflowStartedAt");

SELECT "rename_partition_indexes"('"WorkflowExecutions"');
