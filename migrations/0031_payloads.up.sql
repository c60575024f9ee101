-- 0031_payloads: "Payloads", the task inputs and outputs and the workflow outputs too large to
-- keep in their rows, and the columns that reference them.
-- Decisions:
--   * A JSON value longer than `payloads.inline_max_bytes` (its text) is written to
--     "Payloads" and its row holds the reference: "TaskExecutions"."inputPayloadId" /
--     "outputPayloadId", "WorkflowExecutions"."outputPayloadId". The row's own column is then
--     '{}' ("input", NOT NULL) or NULL ("output"). A task row stays a few hundred bytes however
--     large its values: the decider, the lessor and the frontier read those rows all the time,
--     and a wide row is detoasted, copied and shipped on each read.
--   * The reference is a column beside the value, never a marker inside it: nothing a worker
--     or a start request writes can make nodeflow read another payload. Every write of these
--     values is placed by store/payloads.* (inline or here), and every read that hands one on
--     resolves the reference there, so no reader above store/ sees one.
--   * Keyed like the executions it belongs to: ("workflowId", "id"), hash-partitioned 16 ways
--     on "workflowId" exactly as "TaskExecutions" (a workflow's payloads hash to the partition
--     number of its tasks). Retention deletes the payloads of an execution month's
--     workflows with their task rows, before the month is dropped (store/schema/partitions.cpp).
--   * A value replaced (a task's output written again, a rerun) leaves its old payload
--     unreferenced until its workflow's month is dropped: rewrites of large values are rare,
--     and a delete in the hot statements would cost every write a probe of this table.
--   * "WorkflowEvents"."payloadId" does the same for an event whose payload is such a value
--     (the history keeps no copy; its webhook delivery, in "OutboxEvents", carries it whole).
--   * No foreign key (hot tables, partition drops). The body is never filtered on: statistics
--     target 0 (migration 0016's reasoning).
CREATE TABLE "Payloads" (
  "workflowId" UUID        NOT NULL,
  "id"         UUID        NOT NULL,
  "body"       JSONB       NOT NULL,
  "createdAt"  TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("workflowId", "id")
) PARTITION BY HASH ("workflowId");

DO $$
BEGIN
  FOR r IN 0..15 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "Payloads" FOR VALUES WITH (MODULUS 16, REMAINDER %s)',
                   'Payloads_p' || r, r);
  END LOOP;
END
$$;

ALTER TABLE "Payloads" ALTER COLUMN "body" SET STATISTICS 0;
SELECT "rename_partition_indexes"('"Payloads"');

ALTER TABLE "TaskExecutions" ADD COLUMN "inputPayloadId" UUID,
                             ADD COLUMN "outputPayloadId" UUID;
ALTER TABLE "WorkflowExecutions" ADD COLUMN "outputPayloadId" UUID;
-- An event carrying a value a client sent (a worker's IN_PROGRESS output, a task completed by
-- its reference name, a signal) over the threshold: the history row holds '{}' and this.
ALTER TABLE "WorkflowEvents" ADD COLUMN "payloadId" UUID;
