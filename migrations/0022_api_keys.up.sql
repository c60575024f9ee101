-- 0022_api_keys: the HTTP door's API keys and the secret its tokens are signed with.
-- Decisions:
--   * A key's secret is 256 random bits and never stored: "secretHash" is its BLAKE2b-256
--     (libsodium crypto_generichash). A slow password hash buys nothing against a secret
--     that cannot be guessed, and would cost every token exchange.
--   * A key is never deleted: revoking sets "revokedAt", so who held which key stays known.
--   * Every node signs and checks tokens with the same secret, so a token one node issued
--     is good on all of them. A node makes it on first use (INSERT … ON CONFLICT DO
--     NOTHING, then reads back the one that won): the schema needs no pgcrypto.
CREATE TYPE api_key_role AS ENUM ('admin', 'operator', 'worker', 'reader');

CREATE TABLE "ApiKeys" (
  "id"          UUID         NOT NULL PRIMARY KEY DEFAULT uuidv7(),
  "name"        TEXT         NOT NULL DEFAULT '',
  "role"        api_key_role NOT NULL,
  "namespaceId" UUID         NOT NULL REFERENCES "Namespaces" ("id"),
  "secretHash"  BYTEA        NOT NULL CHECK (octet_length("secretHash") = 32),
  "createdAt"   TIMESTAMPTZ  NOT NULL DEFAULT now(),
  "expiresAt"   TIMESTAMPTZ,
  "revokedAt"   TIMESTAMPTZ
);

CREATE TABLE "SigningKeys" (
  "name"      TEXT        NOT NULL PRIMARY KEY,
  "secret"    BYTEA       NOT NULL CHECK (octet_length("secret") >= 32),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
