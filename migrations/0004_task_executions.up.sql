-- 0004_task_executions: "TaskExecutions", hash-partitioned 16 ways on "workflowId"
-- ("TaskExecutions_p0" … "_p15") so one workflow's tasks share a partition and the frontier
-- query touches one. The four indexes are exactly the seed's.
-- Decisions where the seed is silent:
--   * Terminal statuses: COMPLETED, COMPLETED_WITH_ERRORS, FAILED, FAILED_WITH_TERMINAL_ERROR,
--     TIMED_OUT, CANCELED, SKIPPED. Non-terminal: SCHEDULED, IN_PROGRESS. The frontier index
--     predicate lists the terminal ones; a query uses the index only if it repeats that list
--     (or says "status" IN ('SCHEDULED','IN_PROGRESS'), which the planner can also prove).
--   * "endedAt" IS NOT NULL exactly when the status is terminal (CHECK): the unprocessed index
--     keys on "endedAt", so a terminal row without "endedAt" would never wake the decider.
--   * "attempt" starts at 0; a retry is a new row with attempt + 1 (I1), "retriedTaskId" points
--     at the attempt it replaces. "iteration" is the DO_WHILE iteration (0 outside loops).
--   * "queueName" is NULL for system tasks that never go through TaskQueues.
--   * No foreign keys (hot table).

CREATE TYPE task_execution_type AS ENUM
  ('SIMPLE', 'SWITCH', 'FORK_JOIN', 'FORK_JOIN_DYNAMIC', 'JOIN', 'DO_WHILE', 'SUB_WORKFLOW',
   'WAIT', 'HTTP', 'SET_VARIABLE', 'TERMINATE', 'JSON_TRANSFORM');
CREATE TYPE task_execution_status AS ENUM
  ('SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED',
   'FAILED_WITH_TERMINAL_ERROR', 'TIMED_OUT', 'CANCELED', 'SKIPPED');

CREATE TABLE "TaskExecutions" (
  "id"                    UUID        NOT NULL DEFAULT uuidv7(),
  "workflowId"            UUID        NOT NULL,
  "namespaceId"           UUID        NOT NULL,
  "refName"               TEXT        NOT NULL,
  "iteration"             INTEGER     NOT NULL DEFAULT 0 CHECK ("iteration" >= 0),
  "attempt"               INTEGER     NOT NULL DEFAULT 0 CHECK ("attempt" >= 0),
  "taskType"              task_execution_type NOT NULL,
  "taskDefName"           TEXT        NOT NULL,
  "queueName"             TEXT,
  "status"                task_execution_status NOT NULL DEFAULT 'SCHEDULED',
  "input"                 JSONB       NOT NULL DEFAULT '{}',
  "output"                JSONB,
  "reasonForIncompletion" TEXT,
  "workerId"              TEXT,
  "pollCount"             INTEGER     NOT NULL DEFAULT 0 CHECK ("pollCount" >= 0),
  "retriedTaskId"         UUID,
  "subWorkflowId"         UUID,
  "scheduledAt"           TIMESTAMPTZ NOT NULL DEFAULT now(),
  "startedAt"             TIMESTAMPTZ,
  "endedAt"               TIMESTAMPTZ,
  "updatedAt"             TIMESTAMPTZ NOT NULL DEFAULT now(),
  "deciderSeenAt"         TIMESTAMPTZ,
  PRIMARY KEY ("workflowId", "id"),
  CONSTRAINT "TaskExecutions_endedAt_ck" CHECK (("endedAt" IS NULL) = ("status" IN ('SCHEDULED', 'IN_PROGRESS')))
) PARTITION BY HASH ("workflowId");

DO $$
BEGIN
  FOR r IN 0..15 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "TaskExecutions" FOR VALUES WITH (MODULUS 16, REMAINDER %s)',
                   'TaskExecutions_p' || r, r);
  END LOOP;
END
$$;

-- Task identity. What makes the decider safe to re-run.
CREATE UNIQUE INDEX "TaskExecutions_identity_idx"
  ON "TaskExecutions" ("workflowId", "refName", "iteration", "attempt");

-- The pending frontier. Partial, so its size tracks in-flight work rather than total history.
CREATE INDEX "TaskExecutions_frontier_idx"
  ON "TaskExecutions" ("workflowId")
  WHERE "status" NOT IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR',
                         'TIMED_OUT', 'CANCELED', 'SKIPPED');

-- Terminal tasks the decider has not yet reacted to. Holds a handful, not all history.
CREATE INDEX "TaskExecutions_unprocessed_idx"
  ON "TaskExecutions" ("workflowId")
  WHERE "endedAt" IS NOT NULL AND "deciderSeenAt" IS NULL;

-- Recent attempts per task definition — the retry-budget check.
CREATE INDEX "TaskExecutions_recent_by_def_idx"
  ON "TaskExecutions" ("namespaceId", "taskDefName", "scheduledAt" DESC);

SELECT "rename_partition_indexes"('"TaskExecutions"');
