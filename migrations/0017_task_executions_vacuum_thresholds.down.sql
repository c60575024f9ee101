-- Undoes 0017_task_executions_vacuum_thresholds: the default autovacuum thresholds again.
DO $$
BEGIN
  FOR i IN 0..15 LOOP
    EXECUTE format('ALTER TABLE %I RESET (autovacuum_vacuum_threshold, '
                   'autovacuum_vacuum_insert_threshold, autovacuum_analyze_threshold)',
                   'TaskExecutions_p' || i);
  END LOOP;
END $$;
