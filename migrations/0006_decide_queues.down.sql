-- Undoes 0006_decide_queues.
DROP TABLE "DecideQueues";
