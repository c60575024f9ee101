-- Undoes 0003_workflow_executions (dropping the partitioned parent drops every partition,
-- including ones the partition manager created later).
DROP TABLE "IdempotencyKeys";
DROP TABLE "WorkflowExecutions";
DROP TYPE workflow_execution_status;
