#pragma once

// Key material for the TLS suites, made at test time with OpenSSL's C API so no
// certificate is checked in and nothing beyond libssl is needed: a CA (self-signed,
// P-256) that issues node certificates good for both ends of a connection.

#include <memory>
#include <string>

namespace nf::test {

/// A certificate and its private key, written as PEM files.
struct pem_files {
  std::string cert;
  std::string key;
};

class test_ca {
public:
  /// Makes the CA `name` and writes its certificate to `dir`/`name`-ca.pem.
  test_ca(const std::string& dir, const std::string& name);
  ~test_ca();
  test_ca(const test_ca&) = delete;
  test_ca& operator=(const test_ca&) = delete;

  /// The CA's certificate (what a node trusts).
  const std::string& cert_file() const { return cert_file_; }

  /// A fresh key and a certificate for `common_name` (subjectAltName 127.0.0.1,
  /// serverAuth and clientAuth) signed by this CA, written next to the CA's.
  pem_files issue(const std::string& common_name);

private:
  struct state;
  std::unique_ptr<state> st_;
  std::string dir_;
  std::string name_;
  std::string cert_file_;
};

} // namespace nf::test
