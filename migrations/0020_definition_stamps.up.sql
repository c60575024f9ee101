-- 0020_definition_stamps: one counter per namespace that every definition write moves.
-- Decision where the seeds are silent (they say deciders cache definitions, not how a cache
-- learns of a change): every decide flush asked whether its namespaces' definitions had
-- changed by counting and summing all of their rows, a read that grows with the definitions a
-- namespace holds: 0.02 ms with two, 0.77 ms with 1,000 task and 3,000 workflow definitions,
-- in every flush, on the path of every start and completion (docs/perf/).
-- A row trigger on both definition tables bumps the namespace's "stamp" in the writing
-- transaction instead, so the flush reads one row per namespace. Writers of one namespace's
-- definitions queue on its stamp row until they commit; definitions are written rarely. A
-- namespace with no row has never had a definition (stamp 0). TRUNCATE bumps every stamp. A
-- namespace can be deleted once its definitions are (their keys refer to it); its stamp goes
-- with it.
CREATE TABLE "DefinitionStamps" (
  "namespaceId" UUID   PRIMARY KEY REFERENCES "Namespaces" ("id") ON DELETE CASCADE,
  "stamp"       BIGINT NOT NULL CHECK ("stamp" >= 1)
);

CREATE FUNCTION "DefinitionStamps_bump"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    UPDATE "DefinitionStamps" SET "stamp" = "stamp" + 1;
    RETURN NULL;
  END IF;
  -- The row's namespace before and after (both, for a definition moved to another one);
  -- DISTINCT: one upsert may not touch a row twice.
  INSERT INTO "DefinitionStamps" ("namespaceId", "stamp")
  SELECT DISTINCT v.ns, 1
    FROM (VALUES (CASE WHEN TG_OP <> 'INSERT' THEN OLD."namespaceId" END),
                 (CASE WHEN TG_OP <> 'DELETE' THEN NEW."namespaceId" END)) AS v(ns)
   WHERE v.ns IS NOT NULL
  ON CONFLICT ("namespaceId") DO UPDATE SET "stamp" = "DefinitionStamps"."stamp" + 1;
  RETURN NULL;
END
$$;

-- The same two triggers on each definition table: "<table>_stamp_trg" for its rows,
-- "<table>_truncate_stamp_trg" for TRUNCATE.
DO $$
DECLARE t TEXT;
BEGIN
  FOREACH t IN ARRAY ARRAY['TaskDefinitions', 'WorkflowDefinitions'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I '
                   'FOR EACH ROW EXECUTE FUNCTION "DefinitionStamps_bump"()',
                   t || '_stamp_trg', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION "DefinitionStamps_bump"()',
                   t || '_truncate_stamp_trg', t);
  END LOOP;
END
$$;

-- The namespaces that hold definitions already start at 1.
INSERT INTO "DefinitionStamps" ("namespaceId", "stamp")
SELECT "namespaceId", 1 FROM "TaskDefinitions"
UNION
SELECT "namespaceId", 1 FROM "WorkflowDefinitions";
