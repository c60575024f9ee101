#define CAF_SUITE http.auth

// API keys and tokens on the HTTP door, with authentication on: `nodeflow keys` against the
// test database, POST /api/token, 401 without (or with bad) credentials in either header,
// and every route of the OpenAPI document tried with a token of each role: refused with 403
// by the door below its x-nodeflow-role, let through (anything but 401/403) at or above it.
// A revoked key's token stops within seconds; an expired key's at once; the secret is
// nowhere in the database.

#include <caf/test/dsl.hpp>

#include <map>
#include <set>
#include <thread>

#include <sys/wait.h>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/check_saying.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

using cli_run = test::cli_run;

using test::rank_of;
using test::roles;

struct fixture {
  test::e2e_fixture f{"http_auth"};
  std::unique_ptr<test::http_client> http;

  fixture() {
    f.start_node({{"auth.enabled", "true"}, {"auth.key_refresh_ms", "300"}});
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }

  cli_run nodeflow(std::vector<std::string> args) {
    return f.run_cli(std::move(args));
  }

  std::pair<std::string, std::string> create_key(const std::string& role,
                                                 std::vector<std::string> extra = {}) {
    return f.create_key(role, std::move(extra));
  }

  test::http_reply token_reply(const std::string& id, const std::string& secret) {
    boost::json::object body{{"keyId", id}, {"keySecret", secret}};
    return http->post("/api/token", boost::json::serialize(body));
  }

  std::string token_for(const std::string& id, const std::string& secret) {
    auto r = token_reply(id, secret);
    CAF_REQUIRE_EQUAL(r.status, 200u);
    auto v = r.json();
    CAF_REQUIRE(v.is_object() && v.as_object().at("token").is_string());
    return std::string{v.as_object().at("token").as_string()};
  }

  test::http_reply as(const std::string& token, const std::string& method,
                      const std::string& target, const std::string& body = {},
                      const std::string& content_type = "application/json") {
    return http->request(method, target, body, content_type, {{"X-Authorization", token}});
  }
};

std::string error_message(const test::http_reply& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("message"))
    return {};
  return std::string{v.as_object().at("message").as_string()};
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A path of the pattern with every `{name}` filled in; no such object exists, so an
// allowed request fails in its handler (400/404/409) or answers, and changes nothing.
std::string concrete(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{') {
      i = pattern.find('}', i);
      out += "probe";
    } else {
      out += pattern[i];
    }
  }
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_auth, fixture)

CAF_TEST(keys are made listed and revoked by the CLI and the secret is never stored) {
  auto [id, secret] = create_key("admin", {"--name", "ops", "--expires-in", "30d"});
  auto list = nodeflow({"keys", "list", "--dsn", f.db.dsn()});
  CAF_CHECK_EQUAL(list.exit_code, 0);
  bool listed = false;
  for (const auto& line : list.lines) {
    CAF_CHECK(line.find(secret) == std::string::npos);
    if (line.rfind(id, 0) == 0) {
      listed = true;
      CAF_CHECK(line.find(" admin default ") != std::string::npos);
      CAF_CHECK(line.find(" ops") != std::string::npos);
    }
  }
  CAF_CHECK(listed);
  // Neither the secret nor anything holding it is in any column of the keys' tables.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "ApiKeys" k
                              WHERE position($1 in row_to_json(k)::text) > 0)",
                          store::params::of(secret)),
                  0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "SigningKeys" s
                              WHERE position($1 in row_to_json(s)::text) > 0)",
                          store::params::of(secret)),
                  0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "ApiKeys" WHERE "id" = $1::uuid
                              AND "role" = 'admin' AND "expiresAt" > now() + interval '29 days')",
                          store::params::of(id)),
                  1);
  // Bad input names what is wrong.
  auto bad_role = nodeflow({"keys", "create", "--dsn", f.db.dsn(), "--role", "root"});
  CAF_CHECK_EQUAL(bad_role.exit_code, 1);
  CAF_CHECK(bad_role.log.find("role") != std::string::npos);
  auto bad_ns = nodeflow(
    {"keys", "create", "--dsn", f.db.dsn(), "--role", "reader", "--namespace", "nowhere"});
  CAF_CHECK_EQUAL(bad_ns.exit_code, 1);
  CAF_CHECK(bad_ns.log.find("namespace") != std::string::npos);
  auto bad_expiry = nodeflow(
    {"keys", "create", "--dsn", f.db.dsn(), "--role", "reader", "--expires-in", "soon"});
  CAF_CHECK_EQUAL(bad_expiry.exit_code, 2);
  auto revoke = nodeflow({"keys", "revoke", "--dsn", f.db.dsn(), id});
  CAF_CHECK_EQUAL(revoke.exit_code, 0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "ApiKeys" WHERE "id" = $1::uuid
                              AND "revokedAt" IS NOT NULL)",
                          store::params::of(id)),
                  1);
  auto unknown = nodeflow(
    {"keys", "revoke", "--dsn", f.db.dsn(), "00000000-0000-7000-8000-000000000000"});
  CAF_CHECK_EQUAL(unknown.exit_code, 1);
}

CAF_TEST(a token comes from a key and its secret only) {
  auto [id, secret] = create_key("reader");
  auto wrong = token_reply(id, std::string(64, '0'));
  CAF_CHECK_EQUAL(wrong.status, 401u);
  auto unknown = token_reply("00000000-0000-7000-8000-000000000000", secret);
  CAF_CHECK_EQUAL(unknown.status, 401u);
  auto missing = http->post("/api/token", boost::json::serialize(boost::json::object{{"keyId", id}}));
  CAF_CHECK_EQUAL(missing.status, 400u);
  auto ok = token_reply(id, secret);
  CAF_REQUIRE_EQUAL(ok.status, 200u);
  CAF_CHECK(ok.json().at("expiresAt").as_int64() > 0);
}

CAF_TEST(no or bad credentials are 401 in either header) {
  auto none = http->get("/api/metadata/taskdefs");
  CAF_CHECK_EQUAL(none.status, 401u);
  CAF_CHECK(!error_message(none).empty());
  auto bad = as("nf1.garbage", "GET", "/api/metadata/taskdefs");
  CAF_CHECK_EQUAL(bad.status, 401u);
  auto [id, secret] = create_key("reader");
  auto token = token_for(id, secret);
  // A token altered in its last digit no longer verifies.
  auto altered = token;
  altered.back() = altered.back() == '0' ? '1' : '0';
  CAF_CHECK_EQUAL(as(altered, "GET", "/api/metadata/taskdefs").status, 401u);
  auto bearer_bad = http->request("GET", "/api/metadata/taskdefs", {}, "application/json",
                                  {{"Authorization", "Bearer " + altered}});
  CAF_CHECK_EQUAL(bearer_bad.status, 401u);
  auto bearer = http->request("GET", "/api/metadata/taskdefs", {}, "application/json",
                              {{"Authorization", "Bearer " + token}});
  CAF_CHECK_EQUAL(bearer.status, 200u);
  CAF_CHECK_EQUAL(as(token, "GET", "/api/metadata/taskdefs").status, 200u);
  // Open routes need nothing.
  CAF_CHECK_EQUAL(http->get("/health/live").status, 200u);
  CAF_CHECK_EQUAL(http->get("/api/openapi.json").status, 200u);
}

CAF_TEST(every route is refused below its role and allowed at or above it) {
  std::map<std::string, std::string> token_of;
  for (const auto& role : roles) {
    auto [id, secret] = create_key(role);
    token_of[role] = token_for(id, secret);
  }
  auto doc = http->get("/api/openapi.json").json();
  CAF_REQUIRE(doc.is_object());
  size_t operations = 0;
  std::set<std::string> levels;
  for (const auto& [pattern, item] : doc.at("paths").as_object()) {
    for (const auto& [method, op] : item.as_object()) {
      const auto& o = op.as_object();
      CAF_REQUIRE(o.contains("x-nodeflow-role"));
      std::string needs{o.at("x-nodeflow-role").as_string()};
      levels.insert(needs);
      ++operations;
      auto target = concrete(std::string{pattern});
      std::string body, type = "application/json";
      if (o.contains("requestBody")) {
        const auto& content = o.at("requestBody").at("content").as_object();
        if (content.contains("application/json"))
          body = "{}";
        else
          body = "probe", type = "text/plain";
      }
      auto what = upper(std::string{method}) + " " + std::string{pattern};
      if (needs == "open") {
        auto r = http->request(upper(std::string{method}), target, body, type);
        CHECK_SAYING(r.status != 401 && r.status != 403, what << " is open: " << r.status);
        continue;
      }
      if (rank_of(needs) < 0)
        CAF_FAIL(what << ": unknown role " << needs);
      auto anonymous = http->request(upper(std::string{method}), target, body, type);
      CHECK_SAYING(anonymous.status == 401, what << " without credentials: "
                                                      << anonymous.status);
      for (const auto& role : roles) {
        auto r = as(token_of[role], upper(std::string{method}), target, body, type);
        if (rank_of(role) >= rank_of(needs)) {
          CHECK_SAYING(r.status != 401 && r.status != 403,
                            what << " as " << role << ": " << r.status << " " << r.body);
        } else {
          // The door's refusal, naming the role it needs: the handler never ran.
          CHECK_SAYING(r.status == 403, what << " as " << role << ": " << r.status);
          CHECK_SAYING(error_message(r).find("needs " + needs) != std::string::npos,
                            what << " as " << role << ": " << r.body);
        }
      }
    }
  }
  CAF_CHECK(operations > 30);
  CAF_CHECK_EQUAL(levels.size(), 5u); // open, reader, worker, operator, admin
  // A refused write leaves nothing behind.
  auto def = R"([{"name":"auth_probe_task","retryCount":0}])";
  CAF_CHECK_EQUAL(as(token_of["operator"], "POST", "/api/metadata/taskdefs", def).status, 403u);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskDefinitions" WHERE "name" = 'auth_probe_task')"),
                  0);
  CAF_CHECK_EQUAL(as(token_of["admin"], "POST", "/api/metadata/taskdefs", def).status, 200u);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "TaskDefinitions" WHERE "name" = 'auth_probe_task')"),
                  1);
}

CAF_TEST(a revoked key is refused within seconds and an expired one at once) {
  auto [id, secret] = create_key("worker");
  auto token = token_for(id, secret);
  CAF_CHECK_EQUAL(as(token, "GET", "/api/metadata/taskdefs").status, 200u);
  auto revoke = nodeflow({"keys", "revoke", "--dsn", f.db.dsn(), id});
  CAF_REQUIRE_EQUAL(revoke.exit_code, 0);
  auto revoked_at = std::chrono::steady_clock::now();
  CAF_CHECK(f.await([&] { return as(token, "GET", "/api/metadata/taskdefs").status == 401; },
                    5s));
  CAF_MESSAGE("refused "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - revoked_at)
                   .count()
              << " ms after the revocation");
  CAF_CHECK_EQUAL(token_reply(id, secret).status, 401u);

  auto [eid, esecret] = create_key("reader", {"--expires-in", "2s"});
  auto etoken = token_for(eid, esecret);
  CAF_CHECK_EQUAL(as(etoken, "GET", "/api/metadata/taskdefs").status, 200u);
  std::this_thread::sleep_for(2500ms);
  CAF_CHECK_EQUAL(as(etoken, "GET", "/api/metadata/taskdefs").status, 401u);
  CAF_CHECK_EQUAL(token_reply(eid, esecret).status, 401u);
}

CAF_TEST(auth off is refused unless both addresses are loopback) {
  auto r = nodeflow({"serve", "--dsn", f.db.dsn(), "--auth", "off", "--http.host", "0.0.0.0",
                     "--port", "0", "--http-port", "-1"});
  CAF_CHECK_EQUAL(r.exit_code, 2);
  CAF_CHECK(r.log.find("http.host") != std::string::npos);
  CAF_CHECK(r.log.find("loopback") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
