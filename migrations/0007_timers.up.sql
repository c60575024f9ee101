-- 0007_timers: "Timers", range-partitioned hourly on "fireAt" (retention 48 periods, seed),
-- with the seed's partial index ("fireAt") WHERE "claimedAt" IS NULL.
-- Decisions where the seed is silent:
--   * Kinds: the seed's five plus 'delay' — a start delay, retry backoff or worker callback
--     (callbackAfterSeconds) that must enqueue a "TaskQueues" row later. Keeping delayed work out
--     of "TaskQueues" keeps the dequeue index free of a "not before" predicate.
--   * "claimedAt" IS NULL means "pending". Cancelling sets "canceledAt" AND "claimedAt" (CHECK),
--     so a cancelled timer leaves both partial indexes at once instead of being scanned past
--     on every claim until its partition is dropped.
--   * Every kind but workflowTimeout targets a task ("taskId" NOT NULL, CHECK).
--   * "leaseToken": a startToClose timer (required, CHECK) names the lease it guards; the
--     re-check (I6) compares it with the queue row's current token, so a timer armed for an
--     earlier lease is a no-op.
--   * "shard" is the workflow's logical partition; the claim filters on it (no shard index,
--     as in the seed: due-and-unclaimed rows are few, so the filter is cheap).
--   * PK ("id","fireAt") because a partitioned table's PK must include the partition key.
--   * Partitions: "Timers_default" plus the current hour and the next 48, named
--     "Timers_yYYYYmMMdDDhHH" (UTC). Timers further out than the created partitions land in
--     "Timers_default" and are adopted when their hour is created (docs/schema.md).

CREATE TYPE timer_kind AS ENUM
  ('scheduleToStart', 'startToClose', 'taskTimeout', 'workflowTimeout', 'wait', 'delay');

CREATE TABLE "Timers" (
  "id"                BIGSERIAL   NOT NULL,
  "fireAt"            TIMESTAMPTZ NOT NULL,
  "shard"             SMALLINT    NOT NULL CHECK ("shard" >= 0),
  "kind"              timer_kind  NOT NULL,
  "workflowId"        UUID        NOT NULL,
  "workflowStartedAt" TIMESTAMPTZ NOT NULL,
  "taskId"            UUID,
  "leaseToken"        UUID,
  "createdAt"         TIMESTAMPTZ NOT NULL DEFAULT now(),
  "claimedAt"         TIMESTAMPTZ,
  "canceledAt"        TIMESTAMPTZ,
  PRIMARY KEY ("id", "fireAt"),
  CONSTRAINT "Timers_startedAt_ck" CHECK ("workflowStartedAt" = uuid_extract_timestamp("workflowId")),
  CONSTRAINT "Timers_canceled_ck" CHECK ("canceledAt" IS NULL OR "claimedAt" IS NOT NULL),
  CONSTRAINT "Timers_task_ck" CHECK ("kind" = 'workflowTimeout' OR "taskId" IS NOT NULL),
  CONSTRAINT "Timers_lease_ck" CHECK ("kind" <> 'startToClose' OR "leaseToken" IS NOT NULL)
) PARTITION BY RANGE ("fireAt");

-- Due, unclaimed timers. The poller range-scans the leading partition(s) only.
CREATE INDEX "Timers_due_idx" ON "Timers" ("fireAt") WHERE "claimedAt" IS NULL;

-- Cancel a task's pending deadlines when it finishes.
CREATE INDEX "Timers_task_idx" ON "Timers" ("taskId") WHERE "claimedAt" IS NULL AND "taskId" IS NOT NULL;

CREATE TABLE "Timers_default" PARTITION OF "Timers" DEFAULT;

DO $$
DECLARE
  h  timestamptz := date_trunc('hour', now(), 'UTC');
  lo timestamptz;
BEGIN
  FOR i IN 0..48 LOOP
    lo := h + make_interval(hours => i);
    EXECUTE format('CREATE TABLE %I PARTITION OF "Timers" FOR VALUES FROM (%L) TO (%L)',
                   'Timers_' || to_char(lo AT TIME ZONE 'UTC', '"y"YYYY"m"MM"d"DD"h"HH24'),
                   lo, lo + interval '1 hour');
  END LOOP;
END
$$;

SELECT "rename_partition_indexes"('"Timers"');
