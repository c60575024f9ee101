-- The Conductor task types decide() runs besides the first twelve: NOOP, HUMAN, DECISION,
-- EXCLUSIVE_JOIN, DYNAMIC, START_WORKFLOW and EVENT (flow/task_type.hpp, same order).
-- ADD VALUE cannot run inside a transaction: this migration is notx.
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'NOOP';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'HUMAN';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'DECISION';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'EXCLUSIVE_JOIN';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'DYNAMIC';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'START_WORKFLOW';
ALTER TYPE task_execution_type ADD VALUE IF NOT EXISTS 'EVENT';
