-- 0037_request_ids: the request ids of signals, operator commands and task updates. A client that
-- retries after `unavailable` cannot tell whether its first request committed; the row below is
-- written in the transaction of the effect, so a second request with the same id finds it,
-- applies nothing and gets the first one's answer. "kind" and "target" (what the request did, to
-- which workflow) let a reused id for another request be refused instead of answered wrongly.
-- Not partitioned: rows live a day (retention.request_ids_hours), pruned by maintenance in
-- bounded deletes by "createdAt".
CREATE TABLE "RequestIds" (
  "namespaceId" UUID        NOT NULL,
  "requestId"   TEXT        NOT NULL,
  "kind"        TEXT        NOT NULL,
  "target"      TEXT        NOT NULL,
  "answer"      JSONB       NOT NULL,
  "createdAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "requestId")
);
CREATE INDEX "RequestIds_createdAt_idx" ON "RequestIds" ("createdAt");
