-- Undoes 0027_conductor_task_types: nothing. Postgres cannot drop a value from an enum, and
-- the values stay harmless when no row uses them.
SELECT 1;
