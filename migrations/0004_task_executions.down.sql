-- Undoes 0004_task_executions (tables before their types; task_execution_type is also used by
-- "TaskQueues", whose migration 0005 is undone first).
DROP TABLE "TaskExecutions";
DROP TYPE task_execution_status;
DROP TYPE task_execution_type;
