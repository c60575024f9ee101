-- 0025_secrets: "Secrets" (values sealed under the node's master key) and a signing secret
-- per "WebhookSinks" row.
-- Decisions:
--   * A secret is keyed by namespace and name. "sealed" is the XChaCha20-Poly1305 ciphertext
--     (with its tag), "nonce" its random 24-byte nonce; the plain value is never stored.
--     "keyId" names the master key that sealed it (the first 8 bytes of its BLAKE2b hash, hex),
--     so a rotation can find every value still sealed under an older key.
--   * "version" counts puts of the same name (1 on the first); a rotation re-seals without
--     changing it, as the value is the same.
--   * "WebhookSinks"."signingSecret": the shared HMAC-SHA256 key the relay signs each
--     delivery with (the receiver holds it too, so it is kept as text). NULL = unsigned.

CREATE TABLE "Secrets" (
  "namespaceId" UUID        NOT NULL REFERENCES "Namespaces" ("id"),
  "name"        TEXT        NOT NULL CHECK ("name" ~ '^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$'),
  "keyId"       TEXT        NOT NULL,
  "nonce"       BYTEA       NOT NULL CHECK (octet_length("nonce") = 24),
  "sealed"      BYTEA       NOT NULL,
  "version"     INTEGER     NOT NULL DEFAULT 1 CHECK ("version" >= 1),
  "createdAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "name")
);

ALTER TABLE "WebhookSinks" ADD COLUMN "signingSecret" TEXT;
