-- 0017_task_executions_vacuum_thresholds: autovacuum visits a "TaskExecutions" partition once
-- it has thousands of dead rows, not tens.
-- Decision where the seed is silent (it tunes the queue tables, not this one): with the
-- default thresholds (50 rows + 20% of the table) every one of the sixteen partitions of a
-- young database is vacuumed and analysed in every autovacuum round (each 10 s under load).
-- Each of those 32 passes rewrites the partition's statistics, and a statistics change
-- invalidates every cached plan naming the partition: every generic plan naming
-- "TaskExecutions" (it names all sixteen), in every backend, is made again at its next use,
-- up to 32 times within the second a round lasts. The decide committers' flushes took 20–60 ms
-- instead of ~10 through that second, and the workflows started in it made W1lat's
-- p95-p99 (docs/perf/). A task row is updated twice within seconds of its
-- insert and then only read, so a partition's dead rows come in a burst after each task and
-- waiting for 5,000 of them costs little. On a large table the 20% still governs.
DO $$
BEGIN
  FOR i IN 0..15 LOOP
    EXECUTE format('ALTER TABLE %I SET (autovacuum_vacuum_threshold = 5000, '
                   'autovacuum_vacuum_insert_threshold = 5000, '
                   'autovacuum_analyze_threshold = 5000)', 'TaskExecutions_p' || i);
  END LOOP;
END $$;
