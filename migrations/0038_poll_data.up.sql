-- 0038_poll_data: when each worker last polled each task type (Conductor's poll data, read by
-- GET /api/tasks/queue/polldata). A node notes the polls it receives in memory and writes the
-- latest of each (namespace, task type, domain, worker) here once every few seconds, so the
-- table takes one statement per node per interval, not a write per poll. "domain" and
-- "workerId" are '' when the poll named none. Not partitioned: one row per worker and task
-- type; rows not refreshed for retention.poll_data_hours are pruned by maintenance.
CREATE TABLE "PollData" (
  "namespaceId" UUID        NOT NULL,
  "taskType"    TEXT        NOT NULL,
  "domain"      TEXT        NOT NULL DEFAULT '',
  "workerId"    TEXT        NOT NULL DEFAULT '',
  "lastPollAt"  TIMESTAMPTZ NOT NULL,
  PRIMARY KEY ("namespaceId", "taskType", "domain", "workerId")
);
CREATE INDEX "PollData_lastPollAt_idx" ON "PollData" ("lastPollAt");
