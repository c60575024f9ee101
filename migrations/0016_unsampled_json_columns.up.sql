-- 0016_unsampled_json_columns: ANALYZE keeps no statistics of the JSON bodies.
-- Decision where the seed is silent: no query filters, joins or groups on an event's or an
-- outbox row's payload, or on a task's or an execution's input, output or variables; the
-- planner never reads their statistics. Computing them was most of what each autoanalyze of
-- the history and the outbox cost: every sampled JSON value detoasted and compared, ~1 s
-- for "OutboxEvents" after 20,000 workflows. ANALYZE holds a snapshot while it runs, and for
-- that second no index entry a lease or a completion left dead can be cleaned by the scans
-- that pass it: a lease claim then walked ~12,000 buffers instead of ~700, and W3 ran at
-- half its speed. Statistics target 0 skips the column. Set on every partition (ALTER on
-- the parent recurses); a partition made later gets it from store/partitions.cpp.
ALTER TABLE "OutboxEvents" ALTER COLUMN "payload" SET STATISTICS 0;
ALTER TABLE "WorkflowEvents" ALTER COLUMN "payload" SET STATISTICS 0;
ALTER TABLE "TaskExecutions" ALTER COLUMN "input" SET STATISTICS 0,
                             ALTER COLUMN "output" SET STATISTICS 0;
ALTER TABLE "WorkflowExecutions" ALTER COLUMN "input" SET STATISTICS 0,
                                 ALTER COLUMN "output" SET STATISTICS 0,
                                 ALTER COLUMN "variables" SET STATISTICS 0;
