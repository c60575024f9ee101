-- 0036_vector_task_types: the task types LLM_STORE_EMBEDDINGS and LLM_SEARCH_EMBEDDINGS, which
-- write and search "VectorDocuments" (0032). ADD VALUE appends them in the order of
-- flow/task_type.hpp. IF NOT EXISTS lets the migration run again after a down.
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'LLM_STORE_EMBEDDINGS';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'LLM_SEARCH_EMBEDDINGS';
