#define CAF_SUITE http.tls

// HTTPS on the HTTP door (http.tls_cert_file, http.tls_key_file), with a self-signed
// certificate made here for 127.0.0.1: health, an authenticated call, the header limit and a
// live history stream over TLS; plain HTTP to the TLS port gets no HTTP answer and leaves the
// door serving; a silent client is dropped after the handshake timeout; a client that does not
// trust the certificate is refused; a start with a missing file, a key
// of another certificate or only one of the two settings fails, naming what is wrong, before
// the node says `http HOST:PORT`.

#include <caf/test/dsl.hpp>

#include <fstream>
#include <memory>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

constexpr const char* definitions = R"([
  {"name": "echo", "retryCount": 0, "responseTimeoutSeconds": 30},
  {"name": "tls_two", "version": 1, "tasks": [
    {"name": "echo", "taskReferenceName": "one", "inputParameters": {"n": 1}},
    {"name": "echo", "taskReferenceName": "two", "inputParameters": {"n": 2}}]}
])";

struct pem_pair {
  std::string certificate;
  std::string key;
};

std::string drain(BIO* bio) {
  char* data = nullptr;
  auto n = BIO_get_mem_data(bio, &data);
  std::string out{data, static_cast<size_t>(n)};
  BIO_free(bio);
  return out;
}

// A throwaway self-signed certificate for IP 127.0.0.1 (P-256, good for a day) and its key,
// made with OpenSSL's C API so the tests need no `openssl` command.
pem_pair make_certificate() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{EVP_EC_gen("P-256"), EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> cert{X509_new(), X509_free};
  CAF_REQUIRE(key && cert);
  X509_set_version(cert.get(), 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key.get());
  auto* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("nodeflow test"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
  auto* san = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, "IP:127.0.0.1");
  CAF_REQUIRE(san != nullptr);
  X509_add_ext(cert.get(), san, -1);
  X509_EXTENSION_free(san);
  CAF_REQUIRE(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0);
  pem_pair out;
  auto* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, cert.get());
  out.certificate = drain(cert_bio);
  auto* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  out.key = drain(key_bio);
  CAF_REQUIRE(!out.certificate.empty() && !out.key.empty());
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out{path};
  out << text;
  CAF_REQUIRE(out.good());
}

// Whether a `nodeflow serve` run printed `http HOST:PORT`.
bool said_http(const test::cli_run& r) {
  for (const auto& line : r.lines)
    if (line.rfind("http ", 0) == 0)
      return true;
  return false;
}

// A database and a certificate; the node is started by the fixture that needs one.
struct certificates {
  test::e2e_fixture f{"http_tls"};
  pem_pair pem = make_certificate();
  std::string cert_file = f.dir + "/node.crt";
  std::string key_file = f.dir + "/node.key";

  certificates() {
    write_file(cert_file, pem.certificate);
    write_file(key_file, pem.key);
  }

  test::settings_list tls_flags() const {
    return {{"http.tls_cert_file", cert_file}, {"http.tls_key_file", key_file}};
  }

  test::tls_trust trust() const { return {pem.certificate}; }
};

struct https_node : certificates {
  std::unique_ptr<test::http_client> https;

  https_node() {
    auto flags = tls_flags();
    flags.emplace_back("auth.enabled", "true");
    f.start_node(flags);
    f.use_key(f.create_key("admin"));
    CAF_REQUIRE(f.http_port != 0);
    https = std::make_unique<test::http_client>("127.0.0.1", f.http_port, 10s, trust());
  }

  /// An admin key's token, through `nodeflow keys create` and POST /api/token over TLS.
  std::string admin_token() {
    auto [id, secret] = f.create_key("admin");
    boost::json::object body{{"keyId", id}, {"keySecret", secret}};
    auto r = https->post("/api/token", boost::json::serialize(body));
    CAF_REQUIRE_EQUAL(r.status, 200u);
    return std::string{r.json().at("token").as_string()};
  }
};

bool log_has(const std::string& path, const std::string& what) {
  std::ifstream in{path};
  for (std::string line; std::getline(in, line);)
    if (line.find(what) != std::string::npos)
      return true;
  return false;
}

// The request failed below HTTP: no answer came back at all.
template <class F>
bool fails_without_answer(F&& request) {
  try {
    auto r = request();
    CAF_MESSAGE("an HTTP answer came back: " << r.status);
    return false;
  } catch (const std::exception& e) {
    CAF_MESSAGE("no HTTP answer: " << e.what());
    return true;
  }
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_tls, https_node)

CAF_TEST(health and an authenticated call answer over HTTPS) {
  auto live = https->get("/health/live");
  CAF_CHECK_EQUAL(live.status, 200u);
  CAF_CHECK_EQUAL(live.json().at("status").as_string(), "UP");
  CAF_CHECK(log_has(f.node_log, "http_listening host=127.0.0.1 port="
                                  + std::to_string(f.http_port) + " tls=on"));
  // Authentication works as over plain HTTP: 401 without a token, the answer with one.
  CAF_CHECK_EQUAL(https->get("/api/metadata/taskdefs").status, 401u);
  auto token = admin_token();
  f.define(definitions);
  auto defs = https->request("GET", "/api/metadata/taskdefs", {}, {}, {{"X-Authorization", token}});
  CAF_REQUIRE_EQUAL(defs.status, 200u);
  auto list = defs.json();
  CAF_REQUIRE(list.is_array());
  bool echo = false;
  for (const auto& d : list.as_array())
    echo = echo || d.at("name") == "echo";
  CAF_CHECK(echo);
  // The limits are the plain door's: headers over http's 16 KiB are 431.
  auto big = https->request("GET", "/health/live", {}, {}, {{"X-Padding", std::string(20000, 'x')}});
  CAF_CHECK_EQUAL(big.status, 431u);
  // Kept alive: a second request on the same connection, then a new connection.
  CAF_CHECK_EQUAL(https->get("/health/ready").status, 200u);
  test::http_client another{"127.0.0.1", f.http_port, 10s, trust()};
  CAF_CHECK_EQUAL(another.get("/health/live").status, 200u);
}

CAF_TEST(plain HTTP to the HTTPS port gets no HTTP answer and the door keeps serving) {
  // A client holding a TLS connection open before, during and after the bad ones.
  CAF_CHECK_EQUAL(https->get("/health/live").status, 200u);
  // A client that connects and never says anything holds up no one, and is dropped after the
  // handshake timeout (10 s).
  auto stalled_at = std::chrono::steady_clock::now();
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket stalled{ioc};
  stalled.connect({boost::asio::ip::make_address("127.0.0.1"), f.http_port});
  test::http_client plain{"127.0.0.1", f.http_port, 5s};
  CAF_CHECK(fails_without_answer([&] { return plain.get("/health/live"); }));
  CAF_CHECK(fails_without_answer(
    [&] { return plain.raw("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n"); }));
  // A client that trusts another certificate refuses this node's.
  test::http_client wrong_trust{"127.0.0.1", f.http_port, 5s, test::tls_trust{
                                                                 make_certificate().certificate}};
  CAF_CHECK(fails_without_answer([&] { return wrong_trust.get("/health/live"); }));
  CAF_CHECK_EQUAL(https->get("/health/live").status, 200u);
  test::http_client fresh{"127.0.0.1", f.http_port, 10s, trust()};
  CAF_CHECK_EQUAL(fresh.get("/health/live").status, 200u);
  CAF_CHECK(f.node->running());
  pollfd fd{stalled.native_handle(), POLLIN, 0};
  CAF_REQUIRE_EQUAL(::poll(&fd, 1, 20000), 1);
  char byte = 0;
  CAF_CHECK_EQUAL(::recv(stalled.native_handle(), &byte, 1, 0), 0); // closed, nothing sent
  auto waited = std::chrono::steady_clock::now() - stalled_at;
  CAF_CHECK(waited >= 9s && waited < 15s);
}

CAF_TEST(a history stream runs to its end over HTTPS) {
  auto token = admin_token();
  f.define(definitions);
  auto id = f.start("tls_two");
  test::sse_reader s{"127.0.0.1", f.http_port, "/api/workflow/" + id + "/events/stream",
                     {{"X-Authorization", token}}, trust()};
  CAF_REQUIRE_EQUAL(s.head().status, 200u);
  CAF_CHECK_EQUAL(s.head().header("content-type"), "text/event-stream");
  auto first = s.next(10s);
  CAF_REQUIRE(first);
  CAF_CHECK_EQUAL(first->type, "WORKFLOW_STARTED");
  CAF_CHECK_EQUAL(first->id, "1");
  // The stream waits while nothing happens, then follows the workers to the end.
  test::worker_pool workers{f.client_opts(), {"echo"}, 1, test::echo_handler()};
  std::string last_type;
  int64_t last_seq = 1;
  bool in_order = true;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!s.ended() && std::chrono::steady_clock::now() < deadline)
    if (auto ev = s.next(200ms)) {
      in_order = in_order && ev->id == std::to_string(last_seq + 1);
      last_seq = std::stoll(ev->id);
      last_type = ev->type;
    }
  CAF_CHECK(s.ended());
  CAF_CHECK(in_order);
  CAF_CHECK_EQUAL(last_type, "WORKFLOW_COMPLETED");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowEvents" WHERE "workflowId" = $1)",
                          store::params::of(id)),
                  last_seq);
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST_FIXTURE_SCOPE(http_tls_start, certificates)

CAF_TEST(a start with a bad TLS setup fails naming the setting and the file) {
  auto serve = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"serve",         "--dsn",       f.db.dsn(), "--port",
                                  std::to_string(test::free_port()), "--http-port", "-1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return f.run_cli(args);
  };
  auto missing_file = f.dir + "/no-such.crt";
  auto missing = serve({"--http.tls_cert_file", missing_file, "--http.tls_key_file", key_file});
  CAF_CHECK_NOT_EQUAL(missing.exit_code, 0);
  CAF_CHECK(!said_http(missing));
  CAF_CHECK(missing.log.find("http.tls_cert_file: cannot read " + missing_file)
            != std::string::npos);
  // A key of another certificate.
  auto other_key = f.dir + "/other.key";
  write_file(other_key, make_certificate().key);
  auto mismatch = serve({"--http.tls_cert_file", cert_file, "--http.tls_key_file", other_key});
  CAF_CHECK_NOT_EQUAL(mismatch.exit_code, 0);
  CAF_CHECK(!said_http(mismatch));
  CAF_CHECK(mismatch.log.find("http.tls_key_file: " + other_key
                              + " is not the private key of the certificate")
            != std::string::npos);
  // Not PEM at all.
  auto garbage = f.dir + "/garbage.crt";
  write_file(garbage, "not a certificate\n");
  auto not_pem = serve({"--http.tls_cert_file", garbage, "--http.tls_key_file", key_file});
  CAF_CHECK_NOT_EQUAL(not_pem.exit_code, 0);
  CAF_CHECK(not_pem.log.find("http.tls_cert_file: " + garbage) != std::string::npos);
  // Half a setup is refused, never served as plain HTTP.
  auto half = serve({"--http.tls_cert_file", cert_file});
  CAF_CHECK_NOT_EQUAL(half.exit_code, 0);
  CAF_CHECK(!said_http(half));
  CAF_CHECK(half.log.find("http.tls_key_file is empty but http.tls_cert_file is set")
            != std::string::npos);
  if (half.log.find("http.tls_key_file is empty") == std::string::npos)
    CAF_MESSAGE("its log:\n" << half.log);
}

CAF_TEST_FIXTURE_SCOPE_END()
