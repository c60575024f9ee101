#include "engine/secrets/sealing.hpp"

#include <vector>

#include <sodium.h>

#include "proto/errors.hpp"

namespace nf::engine::secrets {

namespace {

std::string to_hex(const unsigned char* p, size_t n) {
  std::string out(2 * n + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), p, n);
  out.pop_back();
  return out;
}

bool from_hex(const std::string& hex, std::vector<unsigned char>& out) {
  out.resize(hex.size() / 2);
  size_t len = 0;
  if (sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &len, nullptr) != 0)
    return false;
  out.resize(len);
  return true;
}

std::string associated(const namespace_id& ns, const std::string& name) {
  return ns.str() + "/" + name;
}

} // namespace

caf::expected<store::sealed_secret> seal(const keyring& ring, const namespace_id& ns,
                                         const std::string& name, const std::string& value) {
  if (sodium_init() < 0)
    return nf::make_error(nf::errc::internal, "libsodium failed to initialise");
  unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
  randombytes_buf(nonce, sizeof nonce);
  std::vector<unsigned char> sealed(value.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES);
  unsigned long long len = 0;
  auto ad = associated(ns, name);
  crypto_aead_xchacha20poly1305_ietf_encrypt(
    sealed.data(), &len, reinterpret_cast<const unsigned char*>(value.data()), value.size(),
    reinterpret_cast<const unsigned char*>(ad.data()), ad.size(), nullptr, nonce,
    ring.current().bytes.data());
  store::sealed_secret s;
  s.ns = ns;
  s.name = name;
  s.key_id = ring.current().id;
  s.nonce_hex = to_hex(nonce, sizeof nonce);
  s.sealed_hex = to_hex(sealed.data(), static_cast<size_t>(len));
  return s;
}

caf::expected<std::string> unseal(const keyring& ring, const store::sealed_secret& s) {
  if (sodium_init() < 0)
    return nf::make_error(nf::errc::internal, "libsodium failed to initialise");
  const auto* key = ring.find(s.key_id);
  if (key == nullptr)
    return nf::make_error(nf::errc::invalid,
                          "secret " + s.name + ": sealed under key " + s.key_id
                            + ", which is neither secrets.master_key_file nor one of "
                              "secrets.previous_key_files");
  std::vector<unsigned char> nonce, sealed;
  if (!from_hex(s.nonce_hex, nonce) || nonce.size() != crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
      || !from_hex(s.sealed_hex, sealed)
      || sealed.size() < crypto_aead_xchacha20poly1305_ietf_ABYTES)
    return nf::make_error(nf::errc::internal, "secret " + s.name + ": stored bytes are damaged");
  std::string plain(sealed.size() - crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
  unsigned long long len = 0;
  auto ad = associated(s.ns, s.name);
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
        reinterpret_cast<unsigned char*>(plain.data()), &len, nullptr, sealed.data(),
        sealed.size(), reinterpret_cast<const unsigned char*>(ad.data()), ad.size(), nonce.data(),
        key->bytes.data())
      != 0)
    return nf::make_error(nf::errc::internal,
                          "secret " + s.name + ": does not authenticate under key " + s.key_id);
  plain.resize(static_cast<size_t>(len));
  return plain;
}

} // namespace nf::engine::secrets
