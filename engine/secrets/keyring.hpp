#pragma once

// Master keys for sealed secrets. A key file holds one 32-byte key: 32 raw bytes, 64 hex
// digits, or its standard base64 (44 characters), surrounding whitespace ignored
// (`nodeflow secrets keygen` writes base64). A key's id is the first 8 bytes of its
// BLAKE2b hash in hex: derived, so a key file needs no format of its own, and a value
// records which key sealed it without revealing anything of the key.
//
// The keyring is the current key (secrets.master_key_file), which seals, and the earlier
// ones (secrets.previous_key_files), which only unseal until `nodeflow secrets rotate` has
// re-sealed every value under the current key.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace nf::engine::secrets {

struct master_key {
  std::string id;
  std::array<unsigned char, 32> bytes{};
};

/// Reads a key from the text of a key file; the error names `source`.
caf::expected<master_key> parse_key(const std::string& text, const std::string& source);

/// Reads a key file.
caf::expected<master_key> read_key_file(const std::string& path);

/// A fresh random key, as `keygen` prints it (base64 and a newline).
std::string generate_key_text();

class keyring {
public:
  keyring() = default;
  keyring(master_key current, std::vector<master_key> previous);

  /// `current_file` and a comma-separated list of earlier key files (may be empty).
  static caf::expected<keyring> load(const std::string& current_file,
                                     const std::string& previous_files);

  const master_key& current() const { return current_; }
  /// The key with that id, current or earlier; nullptr when the ring has none.
  const master_key* find(const std::string& id) const;

private:
  master_key current_;
  std::vector<master_key> previous_;
};

} // namespace nf::engine::secrets
