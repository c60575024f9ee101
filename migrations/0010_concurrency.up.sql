-- 0010_concurrency: "TaskOutputCache" (task output cache, seed) and "RateLimitBuckets"
-- (per task definition rate limit).
-- Decisions where the seed is silent:
--   * Rate limit = a fixed-window counter per ("namespaceId","taskDefName"): at most
--     "rateLimitPerFrequency" leases per window of "rateLimitFrequencyInSeconds", the
--     Conductor semantics of those two fields. A fixed window is one row updated in the lease
--     transaction (row lock serialises lessors of the same definition); a token bucket would
--     need fractional refill state for no gain at these window sizes. The window restarts at
--     the first lease after the previous one ended (not aligned to the clock).
--   * "RateLimitBuckets" gets the queue tables' autovacuum/fillfactor treatment (seed): it is
--     updated on every lease of a rate-limited definition and none of its columns is indexed
--     beyond the PK, so those updates can be HOT.
--   * "TaskOutputCache"."expiresAt" is indexed for the hourly prune; a read must also test
--     "expiresAt" > now() because the prune lags.

CREATE TABLE "TaskOutputCache" (
  "namespaceId" UUID        NOT NULL,
  "taskDefName" TEXT        NOT NULL,
  "key"         TEXT        NOT NULL,
  "output"      JSONB       NOT NULL,
  "expiresAt"   TIMESTAMPTZ NOT NULL,
  "createdAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "taskDefName", "key")
);

CREATE INDEX "TaskOutputCache_expiresAt_idx" ON "TaskOutputCache" ("expiresAt");

CREATE TABLE "RateLimitBuckets" (
  "namespaceId" UUID        NOT NULL,
  "taskDefName" TEXT        NOT NULL,
  "windowStart" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "count"       INTEGER     NOT NULL DEFAULT 0 CHECK ("count" >= 0),
  "updatedAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "taskDefName")
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70);
