#pragma once

// Sealing a secret's value: XChaCha20-Poly1305 (libsodium's IETF AEAD) under the
// keyring's current key, a fresh random 24-byte nonce per value, and the namespace and
// name as associated data, so a sealed row copied under another name does not open.

#include <string>

#include <caf/expected.hpp>

#include "engine/secrets/keyring.hpp"
#include "store/secrets.hpp"

namespace nf::engine::secrets {

/// `value` sealed for (ns, name) under `ring.current()`.
caf::expected<store::sealed_secret> seal(const keyring& ring, const namespace_id& ns,
                                         const std::string& name, const std::string& value);

/// The plain value; an error (naming the secret, never its value) when the key that sealed
/// it is not in the ring or the bytes do not authenticate.
caf::expected<std::string> unseal(const keyring& ring, const store::sealed_secret& s);

} // namespace nf::engine::secrets
