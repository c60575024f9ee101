#pragma once

// The HTTP door's API keys ("ApiKeys") and the cluster's token signing secret
// ("SigningKeys"), docs/schema.md. Secrets and hashes travel as lowercase hex; the
// secret of a key is never passed here, only its hash.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

struct new_api_key {
  std::string name;
  std::string role;           ///< admin, operator, worker or reader
  std::string namespace_name; ///< must name a row of "Namespaces"
  std::string secret_hash_hex;
  std::optional<int64_t> expires_in_s; ///< none: never expires
};

/// Inserts a key and answers its id; `invalid` naming the field when the role or the
/// namespace is unknown.
caf::expected<std::string> insert_api_key(connection& conn, const new_api_key& k);

struct api_key_row {
  std::string id;
  std::string name;
  std::string role;
  std::string namespace_name;
  std::string created_at; ///< ISO 8601
  std::optional<std::string> expires_at;
  std::optional<std::string> revoked_at;
};

/// Every key, oldest first, without its hash.
caf::expected<std::vector<api_key_row>> list_api_keys(connection& conn);

/// Revokes a key (idempotent: revoking it again keeps the first time); not_found when
/// there is no such key.
caf::expected<void> revoke_api_key(connection& conn, const std::string& id);

/// What a node needs to check credentials: the keys not revoked, with their hash and
/// expiry (milliseconds since the epoch).
struct usable_api_key {
  std::string id;
  std::string role;
  std::string namespace_name;
  std::string secret_hash_hex;
  std::optional<int64_t> expires_at_ms;
};
caf::expected<std::vector<usable_api_key>> usable_api_keys(connection& conn);

/// The signing secret called `name`: `candidate_hex` becomes it when there is none yet;
/// answers the one stored (another node's, when it came first).
caf::expected<std::string> signing_secret(connection& conn, const std::string& name,
                                          const std::string& candidate_hex);

} // namespace nf::store
