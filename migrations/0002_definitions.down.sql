-- Undoes 0002_definitions (tables before their types).
DROP TABLE "WorkflowDefinitions";
DROP TABLE "TaskDefinitions";
DROP TYPE workflow_definition_timeout_policy;
DROP TYPE task_definition_timeout_policy;
DROP TYPE task_definition_retry_logic;
