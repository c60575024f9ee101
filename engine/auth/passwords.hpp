#pragma once

// Users' passwords (libsodium crypto_pwhash_str: argon2id, a random salt, the parameters
// inside the stored text) and the rules for users' names and passwords. Hashing and
// verifying are slow on purpose (tens of milliseconds, 64 MiB): never call them on an I/O
// thread or an actor's.

#include <optional>
#include <string>

namespace nf::engine::auth {

/// The shortest password accepted.
constexpr size_t min_password_length = 12;

/// Why `name` is not a user name (lowercase letters, digits, '.', '_', '-'; 1-64, starting
/// with a letter or a digit); nullopt when it is one.
std::optional<std::string> user_name_problem(const std::string& name);

/// Why `password` is refused (empty, shorter than min_password_length, longer than 4096);
/// nullopt when it is accepted.
std::optional<std::string> password_problem(const std::string& password);

/// The text stored for a password ("$argon2id$..."). Throws std::runtime_error only when
/// the memory for the hash cannot be had.
std::string hash_password(const std::string& password);

/// Whether `password` is the one `stored` was made from; false for a malformed `stored`.
bool password_matches(const std::string& password, const std::string& stored);

/// Overwrites a password's bytes (sodium_memzero) before its string is let go.
void wipe_password(std::string& password);

} // namespace nf::engine::auth
