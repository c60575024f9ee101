-- 0024_audit_events: "AuditEvents", who did which administrative action, from where, on what.
-- Append-only by construction (seed 000, "The platform tables"): the repository has no UPDATE
-- and no DELETE for it, and the table refuses both, and TRUNCATE, whoever asks (a trigger
-- raises even for a superuser, who bypasses privileges but not triggers). Rows leave only
-- with a dropped monthly partition, which never rewrites a surviving row: 84 months by
-- default ("partitions.audit_months_retained"), against execution history's 12.
-- Decisions where the seed is silent:
--   * Range-partitioned monthly on "at", named "AuditEvents_yYYYYmMM" like the history, but
--     with NO DEFAULT partition: the partition manager adopts a DEFAULT's rows by DELETE, which
--     this table refuses. A month without a partition refuses the insert, and with it the
--     action it records (an administrative action that cannot be audited does not happen);
--     the migration creates the current month and the next three, maintenance keeps three
--     ahead as for the history.
--   * Row-level BEFORE UPDATE/DELETE triggers on the parent are cloned onto every partition;
--     a TRUNCATE trigger is not (statement triggers stay on the table they were made on), so
--     each partition gets its own, here and in the partition manager.
--   * "namespace" is the namespace's name when the action happened (names are editable, and
--     the question is asked years later); NULL for an action outside any namespace.
--   * "details" never holds secrets, password/token/key hashes or sealed values: the writer
--     names what goes in (store/audit.hpp), it never copies a request body.
--   * PK ("id","at"): a partitioned table's key must include the partition key. "id" comes
--     from uuidv7(), so it orders like "at" and is the reading cursor.

CREATE TABLE "AuditEvents" (
  "id"        UUID        NOT NULL DEFAULT uuidv7(),
  "at"        TIMESTAMPTZ NOT NULL DEFAULT now(),
  "actor"     TEXT        NOT NULL CHECK ("actor" <> ''),
  "origin"    TEXT        NOT NULL CHECK ("origin" <> ''),
  "namespace" TEXT,
  "action"    TEXT        NOT NULL CHECK ("action" <> ''),
  "target"    TEXT        NOT NULL,
  "details"   JSONB       NOT NULL DEFAULT '{}',
  PRIMARY KEY ("id", "at")
) PARTITION BY RANGE ("at");

CREATE INDEX "AuditEvents_action_idx" ON "AuditEvents" ("action", "at");

CREATE FUNCTION "AuditEvents_append_only"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'AuditEvents is append-only: % refused (rows leave only with a dropped partition)', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER "AuditEvents_no_update_trg"
  BEFORE UPDATE ON "AuditEvents"
  FOR EACH ROW EXECUTE FUNCTION "AuditEvents_append_only"();
CREATE TRIGGER "AuditEvents_no_delete_trg"
  BEFORE DELETE ON "AuditEvents"
  FOR EACH ROW EXECUTE FUNCTION "AuditEvents_append_only"();
CREATE TRIGGER "AuditEvents_no_truncate_trg"
  BEFORE TRUNCATE ON "AuditEvents"
  FOR EACH STATEMENT EXECUTE FUNCTION "AuditEvents_append_only"();

DO $$
DECLARE
  m    timestamptz := date_trunc('month', now(), 'UTC');
  lo   timestamptz;
  hi   timestamptz;
  part text;
BEGIN
  FOR i IN 0..3 LOOP
    lo := (m AT TIME ZONE 'UTC' + make_interval(months => i)) AT TIME ZONE 'UTC';
    hi := (m AT TIME ZONE 'UTC' + make_interval(months => i + 1)) AT TIME ZONE 'UTC';
    part := 'AuditEvents_' || to_char(lo AT TIME ZONE 'UTC', '"y"YYYY"m"MM');
    EXECUTE format('CREATE TABLE %I PARTITION OF "AuditEvents" FOR VALUES FROM (%L) TO (%L)',
                   part, lo, hi);
    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION "AuditEvents_append_only"()',
                   part || '_no_truncate_trg', part);
  END LOOP;
END
$$;

-- Nobody edits the record through privileges either (the triggers hold even for the owner).
REVOKE UPDATE, DELETE, TRUNCATE ON "AuditEvents" FROM PUBLIC;

SELECT "rename_partition_indexes"('"AuditEvents"');
