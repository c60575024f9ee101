#pragma once

// "Secrets": values sealed by engine/secrets/ under the node's master key, per namespace
// and name. This file stores and reads the sealed bytes (as hex) and never sees a plain
// value; the nonce and ciphertext are opaque here.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct sealed_secret {
  namespace_id ns;
  std::string name;
  std::string key_id;     ///< the master key that sealed it
  std::string nonce_hex;  ///< 24 bytes
  std::string sealed_hex; ///< ciphertext and tag
  int32_t version = 0;    ///< as read; ignored by put_secret
};

/// Stores a new value under `s.name`, or replaces it ("version" + 1). Returns the version.
caf::expected<int32_t> put_secret(connection& conn, const sealed_secret& s);

/// One secret as sealed; nullopt when the namespace has none of that name.
caf::expected<std::optional<sealed_secret>> read_secret(connection& conn, const namespace_id& ns,
                                                        const std::string& name);

struct secret_listing {
  std::string name;
  std::string key_id;
  int32_t version = 0;
  std::string created_at;
  std::string updated_at;
};

/// Names, versions and times of a namespace's secrets, by name; never the values.
caf::expected<std::vector<secret_listing>> list_secrets(connection& conn, const namespace_id& ns);

/// Returns whether a secret of that name was removed.
caf::expected<bool> remove_secret(connection& conn, const namespace_id& ns,
                                  const std::string& name);

/// Every secret of every namespace not sealed under `key_id` (what a rotation re-seals).
caf::expected<std::vector<sealed_secret>> secrets_not_under(connection& conn,
                                                            const std::string& key_id);

/// Replaces a secret's sealed bytes and key id if it is still the one read (same key id and
/// version: a put in between wins). Returns whether it was replaced.
caf::expected<bool> reseal_secret(connection& conn, const sealed_secret& was,
                                  const sealed_secret& now);

} // namespace nf::store
