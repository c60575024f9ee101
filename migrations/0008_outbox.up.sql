-- 0008_outbox: "OutboxEvents" (transactional outbox, I7) and "WebhookSinks" (where the relay
-- delivers). The two OutboxEvents indexes are exactly the seed's.
-- Decisions where the seed is silent:
--   * "eventId" (uuidv7) is the stable id consumers dedupe on; "id" (BIGSERIAL) is only the
--     table's key and claim order. "eventId" has no unique index: uuidv7() does not repeat, and
--     an extra index on a queue-like table costs on every insert and update.
--   * "shard" = the workflow's logical partition: each relay claims its own shards (filter on
--     the deliverable index, as in the seed). "workflowId" is NULL for events not tied to a
--     workflow (e.g. definition changes). "eventType" is free text, matched against
--     "WebhookSinks"."eventTypes".
--   * "nextAttemptAt" defaults to now(): a new event is deliverable at once.
--   * Same autovacuum/fillfactor treatment as the other queue tables (every row is updated
--     once or more, then deleted by retention).
--   * "WebhookSinks"."eventTypes" NULL = every type; "maxAttempts" and "timeoutMs" must be > 0
--     (0 would mean "never deliver" / "always time out").

CREATE TABLE "OutboxEvents" (
  "id"             BIGSERIAL   NOT NULL PRIMARY KEY,
  "eventId"        UUID        NOT NULL DEFAULT uuidv7(),
  "shard"          SMALLINT    NOT NULL CHECK ("shard" >= 0),
  "namespaceId"    UUID        NOT NULL,
  "workflowId"     UUID,
  "eventType"      TEXT        NOT NULL,
  "payload"        JSONB       NOT NULL DEFAULT '{}',
  "createdAt"      TIMESTAMPTZ NOT NULL DEFAULT now(),
  "attempts"       INTEGER     NOT NULL DEFAULT 0 CHECK ("attempts" >= 0),
  "nextAttemptAt"  TIMESTAMPTZ NOT NULL DEFAULT now(),
  "lastError"      TEXT,
  "publishedAt"    TIMESTAMPTZ,
  "deadLetteredAt" TIMESTAMPTZ
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70);

-- The relay's hot path: deliverable events only. Dead-lettered and published rows leave the
-- index entirely.
CREATE INDEX "OutboxEvents_deliverable_idx"
  ON "OutboxEvents" ("nextAttemptAt", "id")
  WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL;

CREATE INDEX "OutboxEvents_deadletter_idx"
  ON "OutboxEvents" ("deadLetteredAt") WHERE "deadLetteredAt" IS NOT NULL;

CREATE TABLE "WebhookSinks" (
  "id"          UUID        NOT NULL PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID        NOT NULL REFERENCES "Namespaces" ("id"),
  "url"         TEXT        NOT NULL,
  "eventTypes"  TEXT[],
  "maxAttempts" INTEGER     NOT NULL DEFAULT 10   CHECK ("maxAttempts" > 0),
  "timeoutMs"   INTEGER     NOT NULL DEFAULT 5000 CHECK ("timeoutMs" > 0),
  "enabled"     BOOLEAN     NOT NULL DEFAULT true,
  "createdAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt"   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX "WebhookSinks_namespace_idx" ON "WebhookSinks" ("namespaceId");
