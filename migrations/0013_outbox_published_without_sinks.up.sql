-- 0013_outbox_published_without_sinks: an event written while no webhook sink is enabled is
-- stored already published.
-- Decision where the seed is silent: the outbox exists to deliver events to sinks (I7). With
-- no enabled sink an event has nowhere to go, and the relay's only work was to mark it
-- published, an update per event that also took it out of the deliverable index: a quarter
-- of the rows a W2 task wrote to "OutboxEvents", and the relay's statement ~8% of Postgres'
-- time per task (docs/perf/). "publishedAt" now defaults to now() when no
-- enabled sink exists at the inserting statement, else NULL (deliverable, as before). A sink
-- receives the events written after it was committed; the relay used to decide that by its
-- sink cache, up to 5 s late. The row itself is written as before (the stable "eventId",
-- retention), so nothing else changes.
-- The function is SQL, STABLE and argument-free, so the planner inlines it into each insert
-- as one uncorrelated subquery, evaluated once per statement, not once per row.
CREATE FUNCTION "outbox_published_at"() RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN EXISTS (SELECT 1 FROM "WebhookSinks" WHERE "enabled") THEN NULL
              ELSE now() END
$$;

ALTER TABLE "OutboxEvents" ALTER COLUMN "publishedAt" SET DEFAULT "outbox_published_at"();
