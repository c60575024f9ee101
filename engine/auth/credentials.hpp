#pragma once

// API keys' secrets and the HTTP door's tokens (libsodium). A key's secret is 256 bits
// from the CSPRNG, shown once and stored only as its BLAKE2b-256 hash. A token is
//   nf1.<keyId>.<expiry, unix seconds>.<nonce, 16 hex>.<HMAC-SHA256, 64 hex>
// signed with the cluster's signing secret over everything before the last dot, so any
// node of the cluster checks it without the database; whether its key still holds (not
// revoked, not expired) is the caller's part. A user's token (POST /api/login) has
// `user:<userId>` in the key id's place: neither holds a dot, and a key id never starts so.

#include <cstdint>
#include <optional>
#include <string>

namespace nf::engine::auth {

/// 32 random bytes as 64 lowercase hex digits.
std::string new_secret_hex();

/// The hash stored for a secret (as presented: its hex text), 64 hex digits.
std::string hash_secret(const std::string& secret);

/// Constant-time comparison of a presented secret with a stored hash.
bool secret_matches(const std::string& secret, const std::string& stored_hash_hex);

/// A token for `key_id` good until `expires_unix_s`.
std::string sign_token(const std::string& signing_secret_hex, const std::string& key_id,
                       int64_t expires_unix_s);

/// What nodes of one cluster present to each other (a request one node forwards to
/// another): derived from the signing secret, so only a process that read it from the
/// database (a node) holds it, and every node of the cluster computes the same.
std::string node_credential(const std::string& signing_secret_hex);

struct token_claims {
  std::string key_id;
  int64_t expires_unix_s = 0;
};

/// The claims of a token whose signature holds; nullopt for anything else (malformed,
/// signed with another secret, altered). Expiry is not checked here.
std::optional<token_claims> check_token(const std::string& signing_secret_hex,
                                        const std::string& token);

} // namespace nf::engine::auth
