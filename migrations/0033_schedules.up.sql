-- 0033_schedules: workflow schedules (Conductor's scheduler): a cron expression in a time
-- zone that starts a workflow at each of its times.
-- Decisions:
--   * "nextRunAt" is the next tick not yet started: the scheduler of every node claims the
--     due rows with FOR UPDATE SKIP LOCKED and, in the same transaction, starts each due
--     tick's workflow with the idempotency key "schedule:<name>@<tick ms>" and moves
--     "nextRunAt" past it. Two nodes never start one tick twice: the row lock serialises
--     them, and a start that raced past it anyway finds the tick's key taken (I10).
--     NULL = no run left (past "scheduleEndTime").
--   * "startWorkflowRequest" is Conductor's StartWorkflowRequest as the API took it (checked
--     then); "workflowName" repeats its name for the list's filter.
--   * Times the API speaks in epoch milliseconds are TIMESTAMPTZ here, like every time.
--   * A schedule belongs to a namespace and goes with it (ON DELETE CASCADE): it names a
--     workflow definition of that namespace, which cannot outlive it either.
--   * "Schedules_due_idx" is partial: a paused schedule or one with no run left is never due,
--     so the claim and the earliest-tick read scan only what may fire.
CREATE TABLE "Schedules" (
  "namespaceId"          UUID        NOT NULL REFERENCES "Namespaces" ("id") ON DELETE CASCADE,
  "name"                 TEXT        NOT NULL CHECK ("name" ~ '^[A-Za-z0-9_.-]{1,128}$'),
  "cronExpression"       TEXT        NOT NULL,
  "zoneId"               TEXT        NOT NULL DEFAULT 'UTC',
  "workflowName"         TEXT        NOT NULL,
  "startWorkflowRequest" JSONB       NOT NULL,
  "paused"               BOOLEAN     NOT NULL DEFAULT false,
  "pausedReason"         TEXT,
  "runCatchup"           BOOLEAN     NOT NULL DEFAULT false,
  "scheduleStartTime"    TIMESTAMPTZ,
  "scheduleEndTime"      TIMESTAMPTZ,
  "description"          TEXT,
  "nextRunAt"            TIMESTAMPTZ,
  "lastRunAt"            TIMESTAMPTZ,
  "lastWorkflowId"       UUID,
  "createdBy"            TEXT        NOT NULL,
  "updatedBy"            TEXT        NOT NULL,
  "createdAt"            TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt"            TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "name")
);
CREATE INDEX "Schedules_due_idx" ON "Schedules" ("nextRunAt")
  WHERE NOT "paused" AND "nextRunAt" IS NOT NULL;
