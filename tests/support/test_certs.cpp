#include "tests/support/test_certs.hpp"

#include <cstdio>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace nf::test {

namespace {

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using cert_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("test_certs: " + what);
}

key_ptr new_key() {
  key_ptr k{EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), &EVP_PKEY_free};
  if (!k)
    fail("cannot generate a P-256 key");
  return k;
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  auto* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr || X509_add_ext(cert, ext, -1) != 1)
    fail(std::string{"cannot add extension "} + value);
  X509_EXTENSION_free(ext);
}

// `issuer` null: self-signed with `key`.
cert_ptr make_cert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
                   long serial) {
  cert_ptr c{X509_new(), &X509_free};
  X509_set_version(c.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(c.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c.get()), 24 * 3600);
  X509_set_pubkey(c.get(), key);
  auto* name = X509_get_subject_name(c.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(c.get(), issuer ? X509_get_subject_name(issuer) : name);
  auto* signer = issuer ? issuer : c.get();
  if (issuer == nullptr) {
    add_ext(c.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(c.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_ext(c.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(c.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth");
    add_ext(c.get(), signer, NID_subject_alt_name, "IP:127.0.0.1");
  }
  if (X509_sign(c.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0)
    fail("cannot sign the certificate of " + cn);
  return c;
}

void write_cert(const std::string& path, X509* c) {
  auto* f = std::fopen(path.c_str(), "w");
  if (f == nullptr || PEM_write_X509(f, c) != 1)
    fail("cannot write " + path);
  std::fclose(f);
}

void write_key(const std::string& path, EVP_PKEY* k) {
  auto* f = std::fopen(path.c_str(), "w");
  if (f == nullptr || PEM_write_PrivateKey(f, k, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    fail("cannot write " + path);
  std::fclose(f);
}

} // namespace

struct test_ca::state {
  key_ptr key{nullptr, &EVP_PKEY_free};
  cert_ptr cert{nullptr, &X509_free};
  long next_serial = 2;
};

test_ca::test_ca(const std::string& dir, const std::string& name)
  : st_{std::make_unique<state>()}, dir_{dir}, name_{name},
    cert_file_{dir + "/" + name + "-ca.pem"} {
  st_->key = new_key();
  st_->cert = make_cert(name + " CA", st_->key.get(), nullptr, nullptr, 1);
  write_cert(cert_file_, st_->cert.get());
}

test_ca::~test_ca() = default;

pem_files test_ca::issue(const std::string& common_name) {
  auto key = new_key();
  auto cert = make_cert(common_name, key.get(), st_->cert.get(), st_->key.get(),
                        st_->next_serial++);
  pem_files out{dir_ + "/" + name_ + "-" + common_name + ".pem",
                dir_ + "/" + name_ + "-" + common_name + ".key"};
  write_cert(out.cert, cert.get());
  write_key(out.key, key.get());
  return out;
}

} // namespace nf::test
