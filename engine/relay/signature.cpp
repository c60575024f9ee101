#include "engine/relay/signature.hpp"

#include <sodium.h>

namespace nf::engine {

std::string sign_delivery(const std::string& secret, int64_t timestamp_s,
                          const std::string& body) {
  auto ts = std::to_string(timestamp_s);
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char*>(secret.data()),
                              secret.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(ts.data()), ts.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>("."), 1);
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(body.data()),
                                body.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&st, mac);
  char hex[2 * sizeof mac + 1];
  sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
  return std::string{"sha256="} + hex;
}

} // namespace nf::engine
