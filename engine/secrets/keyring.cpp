#include "engine/secrets/keyring.hpp"

#include <fstream>
#include <sstream>

#include <sodium.h>

#include "proto/errors.hpp"

namespace nf::engine::secrets {

namespace {

caf::error bad(const std::string& why) {
  return nf::make_error(nf::errc::invalid, why);
}

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string key_id(const std::array<unsigned char, 32>& key) {
  unsigned char hash[8];
  crypto_generichash(hash, sizeof hash, key.data(), key.size(), nullptr, 0);
  char hex[2 * sizeof hash + 1];
  sodium_bin2hex(hex, sizeof hex, hash, sizeof hash);
  return hex;
}

} // namespace

caf::expected<master_key> parse_key(const std::string& text, const std::string& source) {
  if (sodium_init() < 0)
    return nf::make_error(nf::errc::internal, "libsodium failed to initialise");
  master_key k;
  size_t len = 0;
  if (text.size() == 32) {
    std::copy(text.begin(), text.end(), k.bytes.begin()); // raw bytes: never trimmed
  } else {
    auto t = trimmed(text);
    bool ok = false;
    if (t.size() == 64)
      ok = sodium_hex2bin(k.bytes.data(), k.bytes.size(), t.data(), t.size(), nullptr, &len,
                          nullptr) == 0 && len == 32;
    else if (t.size() == 44)
      ok = sodium_base642bin(k.bytes.data(), k.bytes.size(), t.data(), t.size(), nullptr, &len,
                             nullptr, sodium_base64_VARIANT_ORIGINAL) == 0 && len == 32;
    if (!ok)
      return bad(source + ": expected a 32-byte key (32 raw bytes, 64 hex digits or 44 "
                          "base64 characters; make one with `nodeflow secrets keygen`)");
  }
  k.id = key_id(k.bytes);
  return k;
}

caf::expected<master_key> read_key_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return bad("secrets key file " + path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_key(ss.str(), "secrets key file " + path);
}

std::string generate_key_text() {
  if (sodium_init() < 0)
    return {};
  unsigned char key[32];
  randombytes_buf(key, sizeof key);
  char b64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_ORIGINAL)];
  sodium_bin2base64(b64, sizeof b64, key, sizeof key, sodium_base64_VARIANT_ORIGINAL);
  sodium_memzero(key, sizeof key);
  return std::string{b64} + "\n";
}

keyring::keyring(master_key current, std::vector<master_key> previous)
  : current_(std::move(current)), previous_(std::move(previous)) {
}

caf::expected<keyring> keyring::load(const std::string& current_file,
                                     const std::string& previous_files) {
  if (current_file.empty())
    return bad("secrets.master_key_file: not set (make a key with `nodeflow secrets keygen > "
               "FILE` and name the file in the config)");
  auto cur = read_key_file(current_file);
  if (!cur)
    return std::move(cur.error());
  std::vector<master_key> prev;
  std::stringstream list(previous_files);
  for (std::string item; std::getline(list, item, ',');) {
    item = trimmed(item);
    if (item.empty())
      continue;
    auto k = read_key_file(item);
    if (!k)
      return std::move(k.error());
    prev.push_back(std::move(*k));
  }
  return keyring{std::move(*cur), std::move(prev)};
}

const master_key* keyring::find(const std::string& id) const {
  if (current_.id == id)
    return &current_;
  for (const auto& k : previous_)
    if (k.id == id)
      return &k;
  return nullptr;
}

} // namespace nf::engine::secrets
