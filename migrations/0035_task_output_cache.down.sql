-- 0035_task_output_cache: drops the columns its up adds.
ALTER TABLE "TaskExecutions" DROP COLUMN "cacheTtlSeconds", DROP COLUMN "cacheKey";
