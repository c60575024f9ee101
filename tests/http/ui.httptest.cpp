#define CAF_SUITE http.ui

// What the web UI stands on: its files served from the binary (`/`, `/ui/...`) with their
// types, an ETag and a Content-Security-Policy, and nothing outside them; `http.ui_dir`
// serving a folder instead; and the routes made for it: who am I (/api/me), capped counts
// per status (/api/workflow/counts), the cluster's nodes and partitions (/api/cluster) and
// the node's metrics over time (/api/metrics/series).

#include <caf/test/dsl.hpp>

#include <filesystem>
#include <fstream>

#include <boost/json.hpp>

#include "net/web/ui_files.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

// A worker task nobody polls: its workflows stay RUNNING.
constexpr auto defs = R"([
  {"name": "ui_one", "version": 1, "tasks": [
    {"name": "ui_idle", "taskReferenceName": "idle", "type": "SIMPLE"}]},
  {"name": "ui_two", "version": 1, "tasks": [
    {"name": "ui_idle", "taskReferenceName": "idle", "type": "SIMPLE"}]}])";

struct fixture {
  test::e2e_fixture f{"http_ui"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }
  int64_t count_of(const boost::json::value& v, const char* status) {
    return v.at("counts").at(status).as_int64();
  }
};

std::string text_of(std::string_view path) {
  for (const auto& file : net::web::embedded_ui())
    if (file.path == path)
      return std::string{file.text};
  return {};
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_ui, fixture)

CAF_TEST(every file of ui is served with its type and the shell at the root) {
  const auto& files = net::web::embedded_ui();
  CAF_REQUIRE(!files.empty());
  CAF_REQUIRE(!text_of("/ui/index.html").empty());
  auto root = http->get("/");
  CAF_CHECK_EQUAL(root.status, 200u);
  CAF_CHECK_EQUAL(root.header("content-type"), "text/html; charset=utf-8");
  CAF_CHECK_EQUAL(root.body, text_of("/ui/index.html"));
  CAF_CHECK_EQUAL(root.header("content-security-policy"),
                  net::web::ui_files::content_security_policy());
  CAF_CHECK_EQUAL(root.header("x-content-type-options"), "nosniff");
  for (const auto& file : files) {
    auto r = http->get(std::string{file.path});
    CAF_CHECK_EQUAL(r.status, 200u);
    CAF_CHECK(r.body == file.text);
    auto type = r.header("content-type");
    if (file.path.size() > 3 && file.path.substr(file.path.size() - 3) == ".js")
      CAF_CHECK_EQUAL(type, "text/javascript; charset=utf-8");
    else if (file.path.size() > 4 && file.path.substr(file.path.size() - 4) == ".css")
      CAF_CHECK_EQUAL(type, "text/css; charset=utf-8");
  }
}

CAF_TEST(an unchanged file is 304 by its etag) {
  auto first = http->get("/ui/index.html");
  CAF_REQUIRE_EQUAL(first.status, 200u);
  auto etag = first.header("etag");
  CAF_REQUIRE(!etag.empty());
  auto again = http->request("GET", "/", {}, "application/json", {{"If-None-Match", etag}});
  CAF_CHECK_EQUAL(again.status, 304u);
  CAF_CHECK(again.body.empty());
  auto other = http->request("GET", "/", {}, "application/json", {{"If-None-Match", "\"x\""}});
  CAF_CHECK_EQUAL(other.status, 200u);
}

CAF_TEST(nothing outside the ui files is served) {
  check_error(http->get("/ui/no-such-file.js"), 404);
  check_error(http->get("/ui/../CMakeLists.txt"), 404);
  check_error(http->get("/ui/%2e%2e/CMakeLists.txt"), 404);
  check_error(http->get("/etc/passwd"), 404);
  check_error(http->post("/", "{}"), 404);
}

CAF_TEST(me answers the anonymous admin with authentication off) {
  auto r = http->get("/api/me");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK_EQUAL(r.json().at("auth").as_bool(), false);
  CAF_CHECK_EQUAL(r.json().at("role").as_string(), "admin");
  CAF_CHECK_EQUAL(r.json().at("namespace").as_string(), "default");
}

CAF_TEST(counts are per status under the filters and refuse a status filter) {
  f.define(defs);
  std::vector<std::string> ones;
  for (int i = 0; i < 3; ++i)
    ones.push_back(f.start("ui_one"));
  f.start("ui_two");
  auto all = http->get("/api/workflow/counts");
  CAF_REQUIRE_EQUAL(all.status, 200u);
  CAF_CHECK_EQUAL(count_of(all.json(), "RUNNING"), 4);
  CAF_CHECK_EQUAL(count_of(all.json(), "TERMINATED"), 0);
  CAF_CHECK_EQUAL(all.json().at("cap").as_int64(), 10000);
  CAF_CHECK_EQUAL(all.json().at("counts").as_object().size(), 6u);
  CAF_REQUIRE_EQUAL(http->del("/api/workflow/" + ones[0] + "?reason=ui").status, 200u);
  CAF_REQUIRE(f.await_end(ones[0]) == "TERMINATED");
  auto named = http->get("/api/workflow/counts?workflowType=ui_one").json();
  CAF_CHECK_EQUAL(count_of(named, "RUNNING"), 2);
  CAF_CHECK_EQUAL(count_of(named, "TERMINATED"), 1);
  auto future = http->get("/api/workflow/counts?query=startTime%20%3E%204102444800000").json();
  CAF_CHECK_EQUAL(count_of(future, "RUNNING"), 0);
  check_error(http->get("/api/workflow/counts?status=RUNNING"), 400, "status");
  check_error(http->get("/api/workflow/counts?query=status%20%3D%20RUNNING"), 400, "query");
}

CAF_TEST(cluster lists the nodes and who holds each partition) {
  auto r = http->get("/api/cluster");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  auto v = r.json();
  const auto& o = v.as_object();
  const auto& nodes = o.at("nodes").as_array();
  CAF_REQUIRE_EQUAL(nodes.size(), 1u);
  const auto& me = nodes[0].as_object();
  CAF_CHECK(me.at("alive").as_bool());
  CAF_CHECK(!me.at("stopped").as_bool());
  CAF_CHECK(me.at("heartbeatAgeMs").as_int64() < 10000);
  const auto& parts = o.at("partitions").as_array();
  CAF_REQUIRE(!parts.empty());
  CAF_CHECK_EQUAL(me.at("partitions").as_int64(), static_cast<int64_t>(parts.size()));
  for (const auto& p : parts) {
    CAF_CHECK_EQUAL(p.at("owner").as_string(), me.at("id").as_string());
    CAF_CHECK(p.at("leaseRemainingMs").as_int64() > 0);
    CAF_CHECK(p.at("epoch").as_int64() >= 1);
  }
}

CAF_TEST(cluster queues carry the oldest ready task and the polls parked here) {
  f.define(defs);
  f.start("ui_one");
  CAF_REQUIRE(f.await(
    [&] {
      auto v = http->get("/api/cluster").json();
      for (const auto& q : v.at("queues").as_array())
        if (q.at("name").as_string() == "ui_idle" && q.at("ready").as_int64() == 1)
          return true;
      return false;
    },
    10s));
  std::this_thread::sleep_for(300ms);
  auto v = http->get("/api/cluster").json();
  for (const auto& q : v.at("queues").as_array()) {
    if (q.at("name").as_string() != "ui_idle")
      continue;
    CAF_CHECK(q.at("oldestReadyAgeMs").as_int64() >= 250);
    CAF_CHECK_EQUAL(q.at("polling").as_int64(), 0);
  }
}

CAF_TEST(the metrics series has one point per interval) {
  auto r = http->get("/api/metrics/series");
  CAF_REQUIRE_EQUAL(r.status, 200u);
  CAF_CHECK_EQUAL(r.json().at("intervalMs").as_int64(), 5000);
  CAF_CHECK(r.json().at("samples").is_array());
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

struct dir_fixture {
  test::e2e_fixture f{"http_ui_dir"};
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_ui_dir, dir_fixture)

CAF_TEST(ui_dir serves a folder read at each request and refuses one without index) {
  auto folder = f.dir + "/ui-dev";
  std::filesystem::create_directories(folder + "/pages");
  std::ofstream{folder + "/index.html"} << "<p>one</p>";
  std::ofstream{folder + "/pages/x.js"} << "export default 1;";
  f.start_node({{"http.ui_dir", folder}});
  test::http_client http{"127.0.0.1", f.http_port};
  CAF_CHECK_EQUAL(http.get("/").body, "<p>one</p>");
  CAF_CHECK_EQUAL(http.get("/ui/pages/x.js").body, "export default 1;");
  std::ofstream{folder + "/index.html"} << "<p>two</p>";
  CAF_CHECK_EQUAL(http.get("/").body, "<p>two</p>");
  check_error(http.get("/ui/../index.html"), 404);
  CAF_CHECK(f.stop_node());
  auto run = f.run_cli({"serve", "--dsn", f.db.dsn(), "--port", "0", "--http-port", "-1",
                        "--http.ui_dir", f.dir + "/nowhere"});
  CAF_CHECK_EQUAL(run.exit_code, 1);
  CAF_CHECK(run.log.find("http.ui_dir") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
