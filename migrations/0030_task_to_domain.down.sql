-- 0030_task_to_domain: drops "WorkflowExecutions"."taskToDomain".
ALTER TABLE "WorkflowExecutions" DROP COLUMN "taskToDomain";
