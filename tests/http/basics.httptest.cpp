#define CAF_SUITE http.basics

// The server itself, route by route where nothing of the engine is involved: health, the
// error shape of unknown routes and wrong methods, body limits and content types, a
// malformed request, and the OpenAPI document against the routes the server answers.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

struct fixture {
  test::e2e_fixture f{"http_basics", {{"http.max_body_bytes", "4096"}}};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_basics, fixture)

CAF_TEST(health answers live and ready) {
  auto live = http->get("/health/live");
  CAF_CHECK_EQUAL(live.status, 200u);
  CAF_CHECK_EQUAL(live.json().at("status").as_string(), "UP");
  auto ready = http->get("/health/ready");
  CAF_CHECK_EQUAL(ready.status, 200u);
  CAF_CHECK(ready.json().at("ready").as_bool());
  CAF_CHECK(ready.json().at("partitionsRunning").as_int64() > 0);
}

CAF_TEST(an unknown route is 404 and a wrong method 405 with Allow) {
  check_error(http->get("/api/no/such/route"), 404);
  auto r = http->request("DELETE", "/health/live");
  check_error(r, 405);
  CAF_CHECK_EQUAL(r.header("allow"), "GET");
}

CAF_TEST(HEAD answers the headers of GET without the body) {
  auto get = http->get("/health/live");
  auto head = http->request("HEAD", "/health/live");
  CAF_CHECK_EQUAL(head.status, 200u);
  CAF_CHECK(head.body.empty());
  CAF_CHECK_EQUAL(head.header("content-length"), std::to_string(get.body.size()));
  CAF_CHECK_EQUAL(head.header("content-type"), get.header("content-type"));
  // The connection serves the next request: no body was left on it.
  CAF_CHECK_EQUAL(http->get("/health/ready").status, 200u);
  CAF_CHECK_EQUAL(http->request("HEAD", "/api/no/such/route").status, 404u);
  CAF_CHECK_EQUAL(http->request("HEAD", "/api/tasks/poll/x").status, 405u);
  CAF_CHECK_EQUAL(http->get("/health/live").status, 200u);
}

CAF_TEST(a body over the limit is 413 and writes nothing) {
  std::string big = "{\"ids\":[" + std::string(5000, ' ') + "]}";
  check_error(http->post("/api/deadletters/replay", big), 413);
  // The connection was closed after the 413; the next request gets a new one.
  CAF_CHECK_EQUAL(http->get("/health/live").status, 200u);
}

CAF_TEST(a body that is not JSON is 415 or 400 naming it) {
  check_error(http->request("POST", "/api/deadletters/replay", "<ids/>", "text/xml"), 415,
              "Content-Type");
  check_error(http->post("/api/deadletters/replay", "{\"ids\":"), 400, "body");
  check_error(http->post("/api/deadletters/replay", "{\"ids\":[1,\"x\"]}"), 400, "ids[1]");
  std::string deep(100, '[');
  deep += std::string(100, ']');
  check_error(http->post("/api/deadletters/replay", deep), 400, "body");
}

CAF_TEST(a query parameter out of range is 400 naming it) {
  check_error(http->get("/api/deadletters?limit=0"), 400, "limit");
  check_error(http->get("/api/deadletters?afterId=x"), 400, "afterId");
  auto ok = http->get("/api/deadletters?limit=5");
  CAF_CHECK_EQUAL(ok.status, 200u);
  CAF_CHECK(ok.json().at("deadLetters").is_array());
}

CAF_TEST(a query parameter a route does not take is 400 naming it and what the route takes) {
  auto unknown = http->get("/api/deadletters?limit=5&limt=6");
  check_error(unknown, 400, "limt");
  auto message = std::string{unknown.json().at("message").as_string()};
  CAF_CHECK(message.find("GET /api/deadletters") != std::string::npos);
  CAF_CHECK(message.find("it takes afterId, limit") != std::string::npos);
  auto none = http->get("/api/cluster?verbose=true");
  check_error(none, 400, "verbose");
  CAF_CHECK(none.json().at("message").as_string().find("it takes none") != std::string::npos);
  // Once given, a single-valued parameter given again is refused, not half read.
  auto twice = http->get("/api/deadletters?limit=5&limit=6");
  check_error(twice, 400, "limit");
  CAF_CHECK(twice.json().at("message").as_string().find("more than once") != std::string::npos);
  // A parameter that takes several values takes them.
  auto sizes = http->get("/api/tasks/queue/sizes?taskType=a&taskType=b");
  CAF_REQUIRE_EQUAL(sizes.status, 200u);
  CAF_CHECK_EQUAL(sizes.json().as_object().size(), 2u);
  // A POST with a stray parameter writes nothing.
  auto before = f.count(R"(SELECT count(*) FROM "WorkflowExecutions")");
  check_error(http->post("/api/workflow?prio=1", R"({"name":"nobody"})"), 400, "prio");
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "WorkflowExecutions")"), before);
}

CAF_TEST(a boolean query parameter is read in any case) {
  CAF_CHECK_EQUAL(http->get("/api/workflow/search?skipCache=True").status, 200u);
  CAF_CHECK_EQUAL(http->get("/api/workflow/search?skipCache=FALSE").status, 200u);
  check_error(http->get("/api/workflow/search?skipCache=yes"), 400, "skipCache");
}

CAF_TEST(a malformed request is 400 and the server keeps serving) {
  auto r = http->raw("GARBAGE\r\n\r\n");
  CAF_CHECK_EQUAL(r.status, 400u);
  CAF_CHECK_EQUAL(http->get("/health/live").status, 200u);
}

CAF_TEST(keep alive serves many requests on one connection) {
  for (int i = 0; i < 200; ++i)
    CAF_REQUIRE_EQUAL(http->get("/health/live").status, 200u);
}

CAF_TEST(the cluster route shows this node and its partitions) {
  auto r = http->get("/api/cluster");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto v = r.json();
  CAF_CHECK(v.at("node").at("partitions").is_array());
  CAF_CHECK(v.at("queues").is_array());
}

// Every documented operation is served (not 404/405), and the document names every route
// the server has: a route probed with every method the document does not list for it is
// 405 or 404, never served.
CAF_TEST(the OpenAPI document describes exactly the routes the server serves) {
  auto doc = http->get("/api/openapi.json");
  CAF_REQUIRE_EQUAL(doc.status, 200u);
  auto v = doc.json();
  CAF_CHECK_EQUAL(v.at("openapi").as_string(), "3.0.3");
  const auto& paths = v.at("paths").as_object();
  CAF_CHECK(paths.size() >= 6);
  const char* methods[] = {"get", "post", "put", "delete"};
  for (const auto& [pattern, item] : paths) {
    // A concrete path: every {param} replaced by a value no route treats as a literal.
    std::string path{pattern};
    for (size_t i; (i = path.find('{')) != std::string::npos;)
      path.replace(i, path.find('}', i) - i + 1, "x-probe");
    for (const char* m : methods) {
      std::string upper{m};
      for (auto& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      auto r = http->request(upper, path, upper == "GET" || upper == "DELETE" ? "" : "{}");
      auto what = upper + " " + path + " -> " + std::to_string(r.status);
      CAF_MESSAGE(what);
      bool no_route = r.status == 405
                      || (r.status == 404
                          && r.json().at("message").as_string().find("no route") != std::string::npos);
      if (item.as_object().contains(m))
        CAF_CHECK(!no_route); // documented, so served
      else
        CAF_CHECK(no_route);  // served, so documented
    }
  }
}

CAF_TEST_FIXTURE_SCOPE_END()
