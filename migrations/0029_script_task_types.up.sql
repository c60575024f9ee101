-- 0029_script_task_types: the task types INLINE, LAMBDA and JSON_JQ_TRANSFORM, which the
-- script runner executes in sandbox processes. ADD VALUE appends them in this order, the
-- order of flow/task_type.hpp. IF NOT EXISTS lets the migration run again after a down.
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'INLINE';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'LAMBDA';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'JSON_JQ_TRANSFORM';
