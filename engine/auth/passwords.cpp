#include "engine/auth/passwords.hpp"

#include <stdexcept>

#include <sodium.h>

namespace nf::engine::auth {

namespace {

// INTERACTIVE (2 passes, 64 MiB, ~50 ms) rather than MODERATE (256 MiB, ~0.7 s): a node
// that signs people in keeps running workflows, and 64 MiB per login in flight is a bound
// it can afford; a 12-character minimum carries the rest.
constexpr unsigned long long ops_limit = crypto_pwhash_OPSLIMIT_INTERACTIVE;
constexpr size_t mem_limit = crypto_pwhash_MEMLIMIT_INTERACTIVE;
constexpr size_t max_password_length = 4096;

void ensure_sodium() {
  static const int ready = sodium_init();
  if (ready < 0)
    throw std::runtime_error("libsodium failed to initialise");
}

} // namespace

std::optional<std::string> user_name_problem(const std::string& name) {
  auto rule = "lowercase letters, digits, '.', '_' and '-', 1 to 64 of them, starting with a "
              "letter or a digit";
  if (name.empty() || name.size() > 64)
    return std::string{"name: expected "} + rule;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
      return "name: '" + name + "' is not a user name (" + rule + ")";
  }
  return std::nullopt;
}

std::optional<std::string> password_problem(const std::string& password) {
  if (password.empty())
    return std::string{"password: empty"};
  if (password.size() < min_password_length)
    return "password: shorter than " + std::to_string(min_password_length) + " characters";
  if (password.size() > max_password_length)
    return "password: longer than " + std::to_string(max_password_length) + " characters";
  return std::nullopt;
}

std::string hash_password(const std::string& password) {
  ensure_sodium();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), ops_limit, mem_limit,
                            crypto_pwhash_ALG_ARGON2ID13)
      != 0)
    throw std::runtime_error("password hashing ran out of memory");
  return out;
}

bool password_matches(const std::string& password, const std::string& stored) {
  ensure_sodium();
  if (password.size() > max_password_length)
    return false;
  return crypto_pwhash_str_verify(stored.c_str(), password.data(), password.size()) == 0;
}

void wipe_password(std::string& password) {
  if (!password.empty())
    sodium_memzero(password.data(), password.size());
  password.clear();
}

} // namespace nf::engine::auth
