-- Undoes 0010_concurrency.
DROP TABLE "RateLimitBuckets";
DROP TABLE "TaskOutputCache";
