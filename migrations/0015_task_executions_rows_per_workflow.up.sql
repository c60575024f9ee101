-- 0015_task_executions_rows_per_workflow: tells the planner that a workflow owns several
-- task rows, whatever ANALYZE last sampled.
-- Decision where the seed is silent: a completion's or a lease's read probes one task row by
-- its primary key ("workflowId", "id"). When the last ANALYZE saw one task row per workflow
-- (a history of one-task workflows), "workflowId" alone looks as selective as the whole key,
-- and a generic plan made then may probe the identity index ("workflowId", "refName", …) and
-- filter on "id": every task row of the workflow is read for each probe, 50 for a fan-out of
-- 50. With n_distinct fixed at a tenth of the rows (ten task rows per workflow) the key is
-- always the cheaper probe. Set on every partition (their statistics are what the planner
-- reads) and on the parent for reads it does not prune.
DO $$
BEGIN
  FOR i IN 0..15 LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN "workflowId" SET (n_distinct = -0.1)',
                   'TaskExecutions_p' || i);
  END LOOP;
END $$;
ALTER TABLE "TaskExecutions" ALTER COLUMN "workflowId" SET (n_distinct_inherited = -0.1);
