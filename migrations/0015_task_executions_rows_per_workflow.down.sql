-- Undoes 0015_task_executions_rows_per_workflow: ANALYZE's own estimate of "workflowId" again.
DO $$
BEGIN
  FOR i IN 0..15 LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN "workflowId" RESET (n_distinct)',
                   'TaskExecutions_p' || i);
  END LOOP;
END $$;
ALTER TABLE "TaskExecutions" ALTER COLUMN "workflowId" RESET (n_distinct_inherited);
