-- 0009_workflow_events: "WorkflowEvents", the gap-free per-workflow history (I8),
-- range-partitioned monthly on "at", and the NOTIFY trigger that feeds the live SSE stream.
-- Decisions where the seed is silent:
--   * PK ("workflowId","seq","at"): it is the seed's ("workflowId","seq") index, widened by the
--     partition key because a partitioned table's PK must include it. So the database does NOT
--     enforce seq uniqueness on its own; the allocator does: seq comes from
--     UPDATE "WorkflowExecutions" SET "lastSeq" = "lastSeq" + n … RETURNING under that row's
--     lock in the writing transaction, never from a clock.
--   * The trigger is AFTER INSERT … FOR EACH ROW on the partitioned parent (cloned onto every
--     partition, present and future). Never FOR EACH STATEMENT: NEW is unassigned there and
--     pg_notify silently sends an empty payload (the seed's finding).
--   * Payload is '<workflowId>:<seq>'; listeners fetch the rows themselves (NOTIFY payloads are
--     capped at 8000 bytes and are only a hint).
--   * Event types: the brief's set plus TASK_IN_PROGRESS (a worker reported progress or asked for
--     a callback without finishing). New values need their own notx migration.
--   * Partitions: "WorkflowEvents_default" plus the current month and the next two, named
--     "WorkflowEvents_yYYYYmMM" (UTC).

CREATE TYPE workflow_event_type AS ENUM (
  'WORKFLOW_STARTED', 'WORKFLOW_COMPLETED', 'WORKFLOW_FAILED', 'WORKFLOW_TIMED_OUT',
  'WORKFLOW_TERMINATED', 'WORKFLOW_PAUSED', 'WORKFLOW_RESUMED', 'WORKFLOW_RESTARTED',
  'WORKFLOW_RETRIED', 'WORKFLOW_RERUN',
  'TASK_SCHEDULED', 'TASK_STARTED', 'TASK_COMPLETED', 'TASK_FAILED', 'TASK_TIMED_OUT',
  'TASK_CANCELED', 'TASK_SKIPPED', 'TASK_RETRY_SCHEDULED', 'TASK_IN_PROGRESS',
  'SIGNAL_RECEIVED', 'VARIABLES_UPDATED', 'TIMER_FIRED');

CREATE TABLE "WorkflowEvents" (
  "workflowId"  UUID        NOT NULL,
  "seq"         BIGINT      NOT NULL CHECK ("seq" >= 1),
  "at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "namespaceId" UUID        NOT NULL,
  "eventType"   workflow_event_type NOT NULL,
  "taskId"      UUID,
  "refName"     TEXT,
  "payload"     JSONB       NOT NULL DEFAULT '{}',
  PRIMARY KEY ("workflowId", "seq", "at")
) PARTITION BY RANGE ("at");

CREATE TABLE "WorkflowEvents_default" PARTITION OF "WorkflowEvents" DEFAULT;

DO $$
DECLARE
  m  timestamptz := date_trunc('month', now(), 'UTC');
  lo timestamptz;
  hi timestamptz;
BEGIN
  FOR i IN 0..2 LOOP
    lo := (m AT TIME ZONE 'UTC' + make_interval(months => i)) AT TIME ZONE 'UTC';
    hi := (m AT TIME ZONE 'UTC' + make_interval(months => i + 1)) AT TIME ZONE 'UTC';
    EXECUTE format('CREATE TABLE %I PARTITION OF "WorkflowEvents" FOR VALUES FROM (%L) TO (%L)',
                   'WorkflowEvents_' || to_char(lo AT TIME ZONE 'UTC', '"y"YYYY"m"MM'), lo, hi);
  END LOOP;
END
$$;

CREATE FUNCTION "WorkflowEvents_notify"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_workflow_events', NEW."workflowId"::text || ':' || NEW."seq");
  RETURN NULL;
END
$$;

CREATE TRIGGER "WorkflowEvents_notify_trg"
  AFTER INSERT ON "WorkflowEvents"
  FOR EACH ROW EXECUTE FUNCTION "WorkflowEvents_notify"();

SELECT "rename_partition_indexes"('"WorkflowEvents"');
