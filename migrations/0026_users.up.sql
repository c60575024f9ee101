-- 0026_users: people who sign in to the HTTP door (the UI) with a name and a password.
-- Decisions:
--   * "passwordHash" is libsodium's crypto_pwhash_str output (argon2id, its parameters and
--     salt inside the text), so verifying needs nothing else and stronger parameters later
--     leave the older hashes valid. The password itself is never stored.
--   * A name is lowercase letters, digits, '.', '_' and '-' (1-64, starting with a letter or
--     a digit): one spelling per person, so "Alice" and "alice" cannot both exist and the
--     plain UNIQUE index is the case-insensitive one. Login folds the name it is given.
--   * A user is never deleted: disabling sets "disabledAt", like a key's "revokedAt".
--   * The role and the namespace are those of API keys: a user's token is worth a key's.
CREATE TABLE "Users" (
  "id"           UUID         NOT NULL PRIMARY KEY DEFAULT uuidv7(),
  "name"         TEXT         NOT NULL UNIQUE CHECK ("name" ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  "passwordHash" TEXT         NOT NULL CHECK ("passwordHash" LIKE '$argon2id$%'),
  "role"         api_key_role NOT NULL,
  "namespaceId"  UUID         NOT NULL REFERENCES "Namespaces" ("id"),
  "createdAt"    TIMESTAMPTZ  NOT NULL DEFAULT now(),
  "disabledAt"   TIMESTAMPTZ
);
