#include "engine/auth/credentials.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include <sodium.h>

namespace nf::engine::auth {

namespace {

constexpr const char* token_prefix = "nf1.";

// sodium_init is idempotent and thread-safe; every entry point calls it first.
void ensure_sodium() {
  static const int ready = sodium_init();
  if (ready < 0)
    throw std::runtime_error("libsodium failed to initialise");
}

std::string to_hex(const unsigned char* data, size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), data, n);
  out.pop_back();
  return out;
}

std::optional<std::vector<unsigned char>> from_hex(const std::string& hex) {
  std::vector<unsigned char> out(hex.size() / 2 + 1);
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &len, &end) != 0
      || end != hex.data() + hex.size() || len * 2 != hex.size())
    return std::nullopt;
  out.resize(len);
  return out;
}

std::vector<unsigned char> hmac_key(const std::string& signing_secret_hex) {
  auto bin = from_hex(signing_secret_hex);
  if (!bin || bin->empty())
    throw std::invalid_argument("the signing secret is not hex");
  // HMAC-SHA256 takes a key of any length; hash it to the fixed size libsodium's API wants.
  std::vector<unsigned char> key(crypto_auth_hmacsha256_KEYBYTES);
  crypto_generichash(key.data(), key.size(), bin->data(), bin->size(), nullptr, 0);
  return key;
}

std::string mac_of(const std::vector<unsigned char>& key, const std::string& payload) {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(payload.data()),
                         payload.size(), key.data());
  return to_hex(mac, sizeof mac);
}

} // namespace

std::string new_secret_hex() {
  ensure_sodium();
  unsigned char bytes[32];
  randombytes_buf(bytes, sizeof bytes);
  auto out = to_hex(bytes, sizeof bytes);
  sodium_memzero(bytes, sizeof bytes);
  return out;
}

std::string hash_secret(const std::string& secret) {
  ensure_sodium();
  unsigned char h[32];
  crypto_generichash(h, sizeof h, reinterpret_cast<const unsigned char*>(secret.data()),
                     secret.size(), nullptr, 0);
  return to_hex(h, sizeof h);
}

bool secret_matches(const std::string& secret, const std::string& stored_hash_hex) {
  auto presented = hash_secret(secret);
  return presented.size() == stored_hash_hex.size()
         && sodium_memcmp(presented.data(), stored_hash_hex.data(), presented.size()) == 0;
}

std::string sign_token(const std::string& signing_secret_hex, const std::string& key_id,
                       int64_t expires_unix_s) {
  ensure_sodium();
  unsigned char nonce[8];
  randombytes_buf(nonce, sizeof nonce);
  auto payload = std::string{token_prefix} + key_id + "." + std::to_string(expires_unix_s) + "."
                 + to_hex(nonce, sizeof nonce);
  return payload + "." + mac_of(hmac_key(signing_secret_hex), payload);
}

std::string node_credential(const std::string& signing_secret_hex) {
  ensure_sodium();
  constexpr const char* purpose = "nfnode.forwarded-requests";
  return std::string{"nfnode."} + mac_of(hmac_key(signing_secret_hex), purpose);
}

std::optional<token_claims> check_token(const std::string& signing_secret_hex,
                                        const std::string& token) {
  ensure_sodium();
  if (token.size() > 512 || token.compare(0, std::strlen(token_prefix), token_prefix) != 0)
    return std::nullopt;
  auto last = token.rfind('.');
  if (last == std::string::npos || token.size() - last - 1 != crypto_auth_hmacsha256_BYTES * 2)
    return std::nullopt;
  auto payload = token.substr(0, last);
  auto presented = from_hex(token.substr(last + 1));
  if (!presented || presented->size() != crypto_auth_hmacsha256_BYTES)
    return std::nullopt;
  auto key = hmac_key(signing_secret_hex);
  if (crypto_auth_hmacsha256_verify(presented->data(),
                                    reinterpret_cast<const unsigned char*>(payload.data()),
                                    payload.size(), key.data())
      != 0)
    return std::nullopt;
  // payload: nf1.<keyId>.<expiry>.<nonce>; the key id holds no dot (a UUID).
  auto body = payload.substr(std::strlen(token_prefix));
  auto d1 = body.find('.');
  auto d2 = d1 == std::string::npos ? d1 : body.find('.', d1 + 1);
  if (d2 == std::string::npos)
    return std::nullopt;
  token_claims out;
  out.key_id = body.substr(0, d1);
  try {
    out.expires_unix_s = std::stoll(body.substr(d1 + 1, d2 - d1 - 1));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return out;
}

} // namespace nf::engine::auth
