-- 0019_timers_cancel_deletes: a cancelled timer is deleted, so "canceledAt" goes.
-- Decision where the seed is silent (it says deadlines are cancelled when a task finishes, not
-- how): cancelling used to set "canceledAt" and "claimedAt", a new version of the row that
-- carried its primary-key entry and its WAL and stayed in its hourly partition until the
-- partition was dropped, 48 hours on. Every task that finishes cancels its deadline, so the
-- partitions held mostly rows nobody reads, and the cancel was the costlier half of the
-- timers' share of a task (W2: 0.020-0.025 ms of ~0.25 ms of Postgres statement time per task,
-- 0.009-0.010 as a delete; docs/perf/). A deleted row leaves only a dead tuple
-- for vacuum. Nothing read "canceledAt": the history (WorkflowEvents) is the record of what
-- happened to a task, and a fired timer still keeps its row ("claimedAt" set) until its
-- partition is dropped. Rows already cancelled keep "claimedAt", so they stay out of both
-- partial indexes as before.
ALTER TABLE "Timers" DROP CONSTRAINT "Timers_canceled_ck";
ALTER TABLE "Timers" DROP COLUMN "canceledAt";
