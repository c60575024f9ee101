-- Undoes 0011_outbox_by_shard: back to the seed's deliverable index.
DROP INDEX "OutboxEvents_deliverable_idx";

CREATE INDEX "OutboxEvents_deliverable_idx"
  ON "OutboxEvents" ("nextAttemptAt", "id")
  WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL;
