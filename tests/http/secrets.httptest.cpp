#define CAF_SUITE http.secrets

// Secrets end to end, as an operator and a workflow author use them: a value sealed with
// `nodeflow secrets put` (from stdin), an HTTP task that sends it in a header, a worker
// whose output has a `secretOutputFields` field, a signed webhook. The receiving server
// gets the real value; every table, the node's log, every API answer and every webhook
// body hold neither secret.

#include <caf/test/dsl.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

#include <boost/json.hpp>

#include "engine/relay/signature.hpp"
#include "engine/secrets/keyring.hpp"
#include "engine/secrets/sealing.hpp"
#include "store/secrets.hpp"
#include "tests/e2e/e2e_fixture.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/http_test_server.hpp"

using namespace nf;
using namespace std::chrono_literals;

namespace {

const std::string api_token = "tok-5ecret-Az81-value";   // sent by the HTTP task
const std::string card_token = "card-9f3c-PAN-4111-xyz"; // returned by the worker
const std::string sink_key = "sink-signing-key";

using test::read_file;

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

struct fixture {
  test::e2e_fixture f{"http_secrets", {{"log.level", "debug"}}};
  test::http_test_server server;
  std::unique_ptr<test::http_client> http;
  std::string key_file;

  /// `nodeflow secrets ARGS`, stdin from `stdin_file` (if any); exit code, stdout in `out`.
  int cli(const std::string& args, std::string& out, const std::string& stdin_file = {}) {
    auto out_file = f.dir + "/cli.out";
    std::string cmd = std::string{NF_NODEFLOW_BIN} + " secrets " + args + " --dsn '"
                      + f.db.dsn() + "'" + (stdin_file.empty() ? "" : " < " + stdin_file)
                      + " > " + out_file + " 2>&1";
    int status = std::system(cmd.c_str());
    out = read_file(out_file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fixture() {
    key_file = f.dir + "/master.key";
    std::string out;
    CAF_REQUIRE_EQUAL(std::system((std::string{NF_NODEFLOW_BIN} + " secrets keygen > " + key_file)
                                    .c_str()),
                      0);
    auto value_file = f.dir + "/value";
    std::ofstream(value_file) << api_token << "\n";
    CAF_REQUIRE_EQUAL(cli("put API_TOKEN --secrets.master_key_file " + key_file, out, value_file),
                      0);
    CAF_CHECK(out.find("secret API_TOKEN version 1") == 0);
    std::remove(value_file.c_str());
    // The receiver of the HTTP task echoes what it got: the runner must not store it back.
    server.on_request([](const test::seen_request& r, size_t) {
      test::canned_reply c;
      if (r.target == "/call")
        c.body = boost::json::serialize(
          boost::json::object{{"echo", r.header("Authorization")}, {"ok", true}});
      return c;
    });
    f.sql(R"(INSERT INTO "WebhookSinks" ("namespaceId", "url", "maxAttempts", "timeoutMs",
                                          "signingSecret")
             VALUES ('00000000-0000-0000-0000-000000000001', $1, 5, 2000, $2))",
          store::params::of(server.url("/hook"), sink_key));
    f.start_node({{"secrets.master_key_file", key_file}});
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
    f.define(R"([{"name": "issue_card", "responseTimeoutSeconds": 30,
                  "secretOutputFields": ["cardToken"]},
      {"name": "secret_flow", "version": 1, "tasks": [
        {"name": "call", "taskReferenceName": "call", "type": "HTTP",
         "inputParameters": {"http_request": {"uri": "${workflow.input.url}", "method": "POST",
           "headers": {"Authorization": "Bearer ${secrets.API_TOKEN}"},
           "body": {"customer": "${workflow.input.customer}"}}}},
        {"name": "issue_card", "taskReferenceName": "card",
         "inputParameters": {"status": "${call.output.response.statusCode}"}}],
       "outputParameters": {"token": "${card.output.cardToken}",
                            "last4": "${card.output.last4}"}},
      {"name": "missing_secret", "version": 1, "tasks": [
        {"name": "call", "taskReferenceName": "call", "type": "HTTP",
         "inputParameters": {"http_request": {"uri": "${workflow.input.url}",
           "headers": {"X-Key": "${secrets.NOT_THERE}"}}}}]}])");
  }
};

std::vector<test::seen_request> seen_at(const test::http_test_server& s, const std::string& target) {
  std::vector<test::seen_request> out;
  for (auto& r : s.requests())
    if (r.target == target)
      out.push_back(r);
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_secrets, fixture)

CAF_TEST(a secret reaches its endpoint and no table or log or answer or webhook) {
  test::worker_pool workers{f.client_opts(), {"issue_card"}, 1, [](const msg::leased_task&) {
    return test::task_outcome::completed(R"({"cardToken": ")" + card_token
                                         + R"(", "last4": "4111"})");
  }};
  auto input = boost::json::serialize(
    boost::json::object{{"url", server.url("/call")}, {"customer", "c-1"}});
  auto id = f.start("secret_flow", input);
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  workers.stop();

  // The endpoint got the real value, in memory only.
  auto calls = seen_at(server, "/call");
  CAF_REQUIRE_EQUAL(calls.size(), 1u);
  CAF_CHECK_EQUAL(calls[0].header("Authorization"), "Bearer " + api_token);

  // Downstream references see the redaction (it is redacted at rest); the rest is intact.
  auto wf = http->get("/api/workflow/" + id + "?includeTasks=true");
  CAF_REQUIRE_EQUAL(wf.status, 200u);
  auto v = wf.json();
  CAF_CHECK_EQUAL(v.at("output").at("token").as_string(), "***");
  CAF_CHECK_EQUAL(v.at("output").at("last4").as_string(), "4111");
  bool saw_placeholder = false;
  for (const auto& t : v.at("tasks").as_array())
    if (t.at("referenceTaskName").as_string() == "call") {
      auto in = boost::json::serialize(t.at("inputData"));
      saw_placeholder = in.find("Bearer ${secrets.API_TOKEN}") != std::string::npos;
      auto out = boost::json::serialize(t.at("outputData"));
      CAF_CHECK(out.find("Bearer ***") != std::string::npos); // the echo, scrubbed
    }
  CAF_CHECK(saw_placeholder);

  // Every webhook is delivered, signed over its exact body.
  CAF_REQUIRE(f.await_count(R"(SELECT count(*) FROM "OutboxEvents" WHERE "publishedAt" IS NULL)",
                            0));
  auto hooks = seen_at(server, "/hook");
  CAF_REQUIRE(!hooks.empty());
  std::string hook_bodies;
  for (const auto& h : hooks) {
    auto ts = h.header("X-Nodeflow-Timestamp");
    CAF_REQUIRE(!ts.empty());
    CAF_CHECK_EQUAL(h.header("X-Nodeflow-Signature"),
                    engine::sign_delivery(sink_key, std::stoll(ts), h.body));
    hook_bodies += h.body;
  }

  // Every API answer.
  std::string answers = wf.body;
  answers += http->get("/api/workflow/" + id).body;
  answers += http->get("/api/workflow/" + id + "/events").body;
  answers += http->get("/api/workflow/search?query=workflowType%20%3D%20secret_flow").body;
  {
    test::sse_reader sse("127.0.0.1", f.http_port, "/api/workflow/" + id + "/events/stream");
    while (auto e = sse.next(2s))
      answers += e->data;
  }
  CAF_CHECK(answers.find("\"***\"") != std::string::npos);

  // Every row of every table, as text.
  auto rows = f.every_row();
  CAF_CHECK(rows.find("${secrets.API_TOKEN}") != std::string::npos); // the input's placeholder
  auto log = read_file(f.node_log);
  CAF_CHECK(log.find("http_task_done") != std::string::npos); // the debug log was written
  for (const auto* secret : {&api_token, &card_token}) {
    CAF_MESSAGE("checking " << (secret == &api_token ? "the sent secret" : "the output field"));
    CAF_CHECK_EQUAL(occurrences(rows, *secret), 0u);
    CAF_CHECK_EQUAL(occurrences(log, *secret), 0u);
    CAF_CHECK_EQUAL(occurrences(answers, *secret), 0u);
    CAF_CHECK_EQUAL(occurrences(hook_bodies, *secret), 0u);
  }
}

CAF_TEST(a missing secret fails the task naming the secret) {
  auto input = boost::json::serialize(boost::json::object{{"url", server.url("/call")}});
  auto id = f.start("missing_secret", input);
  CAF_REQUIRE_EQUAL(f.await_end(id), "FAILED");
  auto v = http->get("/api/workflow/" + id + "?includeTasks=true").json();
  auto reason = std::string{v.at("tasks").as_array().at(0).at("reasonForIncompletion").as_string()};
  CAF_CHECK(reason.find("secret NOT_THERE is not defined") != std::string::npos);
  CAF_CHECK(seen_at(server, "/call").empty()); // nothing was sent
}

CAF_TEST(list shows names and versions only and rotate re-seals under the new key) {
  std::string out;
  auto value_file = f.dir + "/value2";
  std::ofstream(value_file) << api_token << "-v2";
  CAF_REQUIRE_EQUAL(cli("put API_TOKEN --secrets.master_key_file " + key_file, out, value_file),
                    0);
  CAF_CHECK(out.find("version 2") != std::string::npos);
  CAF_REQUIRE_EQUAL(cli("list --secrets.master_key_file " + key_file, out), 0);
  CAF_CHECK(out.find("API_TOKEN  version 2") == 0);
  CAF_CHECK_EQUAL(occurrences(out, api_token), 0u);
  // A value is never an argument: put takes NAME only.
  CAF_CHECK_EQUAL(cli("put API_TOKEN extra --secrets.master_key_file " + key_file, out), 2);

  auto new_key = f.dir + "/master2.key";
  CAF_REQUIRE_EQUAL(std::system((std::string{NF_NODEFLOW_BIN} + " secrets keygen > " + new_key)
                                  .c_str()),
                    0);
  auto ring = engine::secrets::keyring::load(new_key, key_file);
  CAF_REQUIRE(ring);
  // Without the old key the value cannot be opened: rotate says so and fails.
  CAF_CHECK_EQUAL(cli("rotate --secrets.master_key_file " + new_key, out), 1);
  CAF_REQUIRE_EQUAL(cli("rotate --secrets.master_key_file " + new_key
                          + " --secrets.previous_key_files " + key_file,
                        out),
                    0);
  CAF_CHECK(out.find("re-sealed 1 secret(s) under key " + ring->current().id) == 0);
  auto sealed = store::read_secret(f.conn, nf::default_namespace, "API_TOKEN");
  CAF_REQUIRE(sealed && *sealed);
  CAF_CHECK_EQUAL((*sealed)->key_id, ring->current().id);
  CAF_CHECK_EQUAL((*sealed)->version, 2); // the same value: its version stays
  engine::secrets::keyring new_only{ring->current(), {}};
  auto plain = engine::secrets::unseal(new_only, **sealed);
  CAF_REQUIRE(plain);
  CAF_CHECK_EQUAL(*plain, api_token + "-v2");
  CAF_REQUIRE_EQUAL(cli("remove API_TOKEN", out), 0);
  CAF_CHECK_EQUAL(cli("remove API_TOKEN", out), 1);
}

CAF_TEST_FIXTURE_SCOPE_END()
