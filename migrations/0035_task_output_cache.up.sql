-- 0035_task_output_cache: "TaskExecutions"."cacheKey" and "cacheTtlSeconds", the output cache
-- key a SIMPLE task was scheduled with (its cacheConfig, or its task definition's
-- cacheKey/cacheTtlSeconds) and how long its output is kept ("TaskOutputCache", 0010).
-- Decisions:
--   * Kept on the row, resolved once when the task is scheduled: the completion that writes the
--     output to the cache ("task.finish", store/task_transitions.cpp) needs the key and TTL in
--     the same statement, and the key's template may read values (variables, other outputs)
--     that change after the task was scheduled.
--   * NULL = not cached: every other task, and a task that completed from the cache.
ALTER TABLE "TaskExecutions" ADD COLUMN "cacheKey" TEXT,
                             ADD COLUMN "cacheTtlSeconds" INTEGER CHECK ("cacheTtlSeconds" > 0);
