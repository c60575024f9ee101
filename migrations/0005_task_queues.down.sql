-- Undoes 0005_task_queues (the BIGSERIAL sequence is owned by the table and goes with it).
DROP TABLE "TaskQueues";
