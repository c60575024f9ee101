-- 0030_task_to_domain: "WorkflowExecutions"."taskToDomain", Conductor's taskToDomain of the
-- start request (a task name, or "*" for every task, to the domain its executions are
-- queued in).
-- Decisions:
--   * Kept with the execution, not per task: every decision of the workflow (first attempts,
--     retries, reruns) queues a task by it, and a SUB_WORKFLOW's child starts with its
--     parent's mapping.
--   * NULL = no mapping (every task in its plain queue). A domain-routed task's queue is
--     "domain:queue" (proto/domains.hpp), polled only by workers that name the domain.
ALTER TABLE "WorkflowExecutions" ADD COLUMN "taskToDomain" JSONB;
