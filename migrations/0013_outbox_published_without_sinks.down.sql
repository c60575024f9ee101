-- Undoes 0013_outbox_published_without_sinks: new outbox rows are deliverable again until the
-- relay marks them published.
ALTER TABLE "OutboxEvents" ALTER COLUMN "publishedAt" DROP DEFAULT;
DROP FUNCTION "outbox_published_at"();
