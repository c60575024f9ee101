-- Undoes 0019_timers_cancel_deletes: the column and its check come back, empty (the rows the
-- up deleted are not restored; the ones it left cancelled are claimed, as before).
ALTER TABLE "Timers" ADD COLUMN "canceledAt" TIMESTAMPTZ;
ALTER TABLE "Timers" ADD CONSTRAINT "Timers_canceled_ck"
  CHECK ("canceledAt" IS NULL OR "claimedAt" IS NOT NULL);
