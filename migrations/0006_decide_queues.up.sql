-- 0006_decide_queues: "DecideQueues", one pending evaluation per workflow.
-- As in the seed: the PK is the dedupe (many completions collapse into one evaluation), and
-- "reason" is written by ON CONFLICT DO UPDATE so the conflict takes a row lock (I2) — do not
-- drop it and do not switch the upsert to DO NOTHING.
-- Added (DESIGN §5): "shard" and the ("shard","enqueuedAt") index, so each decider claims the
-- rows of its own logical partitions with an index range scan; "workflowStartedAt" so the
-- decider reaches the execution row with partition pruning. Same autovacuum/fillfactor
-- treatment as "TaskQueues" (seed). The upsert leaves "enqueuedAt" alone: a re-enqueued
-- workflow keeps its place in line.

CREATE TABLE "DecideQueues" (
  "workflowId"        UUID        NOT NULL PRIMARY KEY,
  "namespaceId"       UUID        NOT NULL,
  "workflowStartedAt" TIMESTAMPTZ NOT NULL,
  "shard"             SMALLINT    NOT NULL CHECK ("shard" >= 0),
  "enqueuedAt"        TIMESTAMPTZ NOT NULL DEFAULT now(),
  "reason"            TEXT,
  CONSTRAINT "DecideQueues_startedAt_ck" CHECK ("workflowStartedAt" = uuid_extract_timestamp("workflowId"))
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70);

CREATE INDEX "DecideQueues_shard_idx" ON "DecideQueues" ("shard", "enqueuedAt");
