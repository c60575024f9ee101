-- 0005_task_queues: "TaskQueues", hash-partitioned 8 ways on "queueName" ("TaskQueues_p0" …
-- "_p7"). The highest-churn table; deliberately narrow. Indexes and per-partition autovacuum
-- settings are the seed's.
-- Decisions where the seed is silent:
--   * A row exists only while the task is runnable or leased: delayed work (start delay, retry
--     backoff) waits in a "delay" timer and is enqueued when due, so the dequeue index needs no
--     visibility-time predicate.
--   * "leaseToken" and "leaseExpiresAt" are set together or not at all (CHECK); "leasedBy" is the
--     worker id the poll presented. A completion must present the current "leaseToken" (I5).
--   * "priority" 0-99, higher dequeues first (Conductor semantics), copied from the workflow.
--   * "shard" is the workflow's logical partition (not the queue's owner, which is
--     hash(queueName) mod P) so per-workflow maintenance can find its rows.
--   * "taskType" is denormalised from "TaskExecutions", written once at enqueue, never updated.
--   * Note: a lease stamp changes "leaseExpiresAt", which both partial indexes reference, so it is
--     never a HOT update; fillfactor = 70 still keeps the new row version on the same page.

CREATE TABLE "TaskQueues" (
  "queueName"      TEXT        NOT NULL,
  "id"             BIGSERIAL   NOT NULL,
  "taskId"         UUID        NOT NULL,
  "workflowId"     UUID        NOT NULL,
  "taskType"       task_execution_type NOT NULL,
  "priority"       SMALLINT    NOT NULL DEFAULT 0 CHECK ("priority" BETWEEN 0 AND 99),
  "shard"          SMALLINT    NOT NULL CHECK ("shard" >= 0),
  "enqueuedAt"     TIMESTAMPTZ NOT NULL DEFAULT now(),
  "leaseToken"     UUID,
  "leaseExpiresAt" TIMESTAMPTZ,
  "leasedBy"       TEXT,
  PRIMARY KEY ("queueName", "id"),
  CONSTRAINT "TaskQueues_lease_ck" CHECK (("leaseToken" IS NULL) = ("leaseExpiresAt" IS NULL))
) PARTITION BY HASH ("queueName");

DO $$
BEGIN
  FOR r IN 0..7 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "TaskQueues" FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                   'TaskQueues_p' || r, r);
    EXECUTE format('ALTER TABLE %I SET (autovacuum_vacuum_scale_factor = 0.01, '
                   'autovacuum_vacuum_cost_limit = 2000, fillfactor = 70)', 'TaskQueues_p' || r);
  END LOOP;
END
$$;

-- The dequeue path. Partial on unleased rows, so leased work leaves the index entirely
-- rather than being scanned past on every poll.
CREATE INDEX "TaskQueues_dequeue_idx"
  ON "TaskQueues" ("queueName", "priority" DESC, "id")
  WHERE "leaseExpiresAt" IS NULL;

-- Drives the lease-expiry sweeper.
CREATE INDEX "TaskQueues_lease_idx"
  ON "TaskQueues" ("leaseExpiresAt") WHERE "leaseExpiresAt" IS NOT NULL;

-- ("queueName","taskId"), not ("taskId") — the partition key must be in it.
CREATE UNIQUE INDEX "TaskQueues_task_idx" ON "TaskQueues" ("queueName", "taskId");

SELECT "rename_partition_indexes"('"TaskQueues"');
