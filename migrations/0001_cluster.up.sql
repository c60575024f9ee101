-- 0001_cluster: cluster-wide tables that everything else refers to.
--   "ClusterSettings"  single row; "partitionCount" = P, the number of logical partitions.
--   "Nodes"            one row per nodeflow process (DESIGN §5).
--   "PartitionLeases"  who owns logical partition p, with a fencing epoch.
--   "Namespaces"       tenants; seeded with "default" = 00000000-0000-0000-0000-000000000001.
-- Decisions where the seed is silent:
--   * P lives in the database, not only in config: "shard" values are stored on rows, so a
--     node configured with a different P would claim the wrong rows. Nodes must refuse to
--     start when their config disagrees. Singleton enforced by a boolean PK that must be true.
--   * Lease rows are created on first acquisition (INSERT … ON CONFLICT DO UPDATE) and never
--     deleted; a trigger rejects a DELETE or an epoch that goes down, because epochs fence
--     stale owners and "only ever grow" (DESIGN §5).
--   * "rename_partition_indexes"(parent): gives every partition's inherited indexes the name
--     "<partition><parent index suffix>" (e.g. "TaskExecutions_p3_frontier_idx" for
--     "TaskExecutions_frontier_idx"), so EXPLAIN and pg_stat_user_indexes say which index was
--     used. Idempotent; the partition manager calls it after creating partitions. Nothing
--     depends on these names for correctness.
--   * No foreign key from PartitionLeases to Nodes: a lease outlives a crashed node's row
--     being cleaned up, and ownership is decided by "expiresAt", not by the node row.

CREATE TABLE "ClusterSettings" (
  "id"             BOOLEAN     NOT NULL DEFAULT true PRIMARY KEY CHECK ("id"),
  "partitionCount" SMALLINT    NOT NULL DEFAULT 16 CHECK ("partitionCount" > 0),
  "createdAt"      TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO "ClusterSettings" ("id") VALUES (true);

CREATE TABLE "Nodes" (
  "id"          UUID        NOT NULL PRIMARY KEY DEFAULT uuidv7(),
  "address"     TEXT        NOT NULL,
  "startedAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  "heartbeatAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "stoppedAt"   TIMESTAMPTZ
);

CREATE TABLE "PartitionLeases" (
  "partition"  SMALLINT    NOT NULL PRIMARY KEY CHECK ("partition" >= 0),
  "nodeId"     UUID        NOT NULL,
  "epoch"      BIGINT      NOT NULL DEFAULT 1 CHECK ("epoch" >= 1),
  "expiresAt"  TIMESTAMPTZ NOT NULL,
  "acquiredAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE FUNCTION "PartitionLeases_epoch_guard"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'PartitionLeases rows are never deleted (partition %): release by setting "expiresAt"', OLD."partition"
      USING ERRCODE = 'restrict_violation';
  END IF;
  IF NEW."epoch" < OLD."epoch" THEN
    RAISE EXCEPTION 'PartitionLeases epoch may only grow (partition %: % -> %)', OLD."partition", OLD."epoch", NEW."epoch"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "PartitionLeases_epoch_guard_trg"
  BEFORE UPDATE OR DELETE ON "PartitionLeases"
  FOR EACH ROW EXECUTE FUNCTION "PartitionLeases_epoch_guard"();

CREATE TABLE "Namespaces" (
  "id"        UUID        NOT NULL PRIMARY KEY DEFAULT uuidv7(),
  "name"      TEXT        NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  CONSTRAINT "Namespaces_name_key" UNIQUE ("name")
);
-- The system namespace: looked up by this id, never by its (editable) name (seed 003).
INSERT INTO "Namespaces" ("id", "name") VALUES ('00000000-0000-0000-0000-000000000001', 'default');

CREATE FUNCTION "rename_partition_indexes"(parent regclass) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT ci.relname AS child_index,
           ct.relname || substr(pi.relname, length(pt.relname) + 1) AS wanted
      FROM pg_index px
      JOIN pg_class pi ON pi.oid = px.indexrelid
      JOIN pg_class pt ON pt.oid = px.indrelid
      JOIN pg_inherits ih ON ih.inhparent = px.indexrelid
      JOIN pg_class ci ON ci.oid = ih.inhrelid
      JOIN pg_index cx ON cx.indexrelid = ci.oid
      JOIN pg_class ct ON ct.oid = cx.indrelid
     WHERE px.indrelid = parent
       AND left(pi.relname, length(pt.relname)) = pt.relname
  LOOP
    IF r.child_index <> r.wanted THEN
      EXECUTE format('ALTER INDEX %I RENAME TO %I', r.child_index, r.wanted);
    END IF;
  END LOOP;
END
$$;
