#define CAF_SUITE net.http_client
#include "caf/test/unit_test.hpp"

#include <chrono>

#include "net/http/client.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

http::request get(const std::string& url) {
  http::request r;
  r.method = "GET";
  r.url = url;
  r.connect_timeout = 20s; // a connection attempt to an unrouted address would sit here
  return r;
}

http::egress_policy policy(const std::string& allow, const std::string& deny) {
  std::string error;
  auto p = http::egress_policy::parse(allow, deny, error);
  CAF_REQUIRE_EQUAL(error, "");
  return *p;
}

} // namespace

CAF_TEST(the metadata address is refused without a connection and loopback is reached) {
  test::http_test_server server;
  http::beast_client client; // the default policy
  auto start = std::chrono::steady_clock::now();
  auto out = client.perform_all({get("http://169.254.169.254/latest/meta-data/"),
                                 get("http://metadata.google.internal/computeMetadata/v1/"),
                                 get(server.url("/ok"))});
  auto took = std::chrono::steady_clock::now() - start;
  CAF_CHECK(!out[0].resp);
  CAF_CHECK(out[0].refused);
  CAF_CHECK_EQUAL(out[0].error, "refused by egress.deny: 169.254.169.254 is in 169.254.0.0/16");
  CAF_CHECK(out[1].refused);
  CAF_CHECK_EQUAL(out[1].error, "refused by egress.deny: metadata.google.internal matches "
                                "metadata.google.internal");
  CAF_REQUIRE(out[2].resp);
  CAF_CHECK_EQUAL(out[2].resp->status, 200);
  CAF_CHECK(!out[2].refused);
  CAF_CHECK_LESS(took, 10s); // no connect timeout was waited out
  CAF_CHECK_EQUAL(server.requests().size(), 1u);
}

CAF_TEST(a name is judged by the addresses it resolves to) {
  test::http_test_server server;
  // "localhost" names nothing on the list; 127.0.0.1, which it resolves to, is.
  http::beast_client client{policy("*", "127.0.0.0/8, ::1")};
  auto url = "http://localhost:" + std::to_string(server.port()) + "/hook";
  auto out = client.perform(get(url));
  CAF_CHECK(!out.resp);
  CAF_CHECK(out.refused);
  CAF_CHECK(out.error.find("refused by egress.deny: localhost (") == 0);
  CAF_CHECK(server.requests().empty());
  // An ordinary failure is not a refusal: it may be retried.
  http::beast_client open_client{policy("*", "")};
  auto missing = open_client.perform(get("http://127.0.0.1:9/"));
  CAF_CHECK(!missing.resp);
  CAF_CHECK(!missing.refused);
}
