-- Undoes 0016_unsampled_json_columns: the JSON bodies sampled at the default target again.
ALTER TABLE "OutboxEvents" ALTER COLUMN "payload" SET STATISTICS -1;
ALTER TABLE "WorkflowEvents" ALTER COLUMN "payload" SET STATISTICS -1;
ALTER TABLE "TaskExecutions" ALTER COLUMN "input" SET STATISTICS -1,
                             ALTER COLUMN "output" SET STATISTICS -1;
ALTER TABLE "WorkflowExecutions" ALTER COLUMN "input" SET STATISTICS -1,
                                 ALTER COLUMN "output" SET STATISTICS -1,
                                 ALTER COLUMN "variables" SET STATISTICS -1;
