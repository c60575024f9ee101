#define CAF_SUITE http.vectors

// Vector documents over the HTTP door and inside workflows: documents put one by one and in
// batches, searched by cosine (ties by id), deleted, an index dropped (audited); bad input
// is 400 naming the field. A workflow whose worker task computes embeddings stores them with
// LLM_STORE_EMBEDDINGS and finds the nearest with LLM_SEARCH_EMBEDDINGS; a vectorDB other
// than nodeflow's own is refused when the definition is registered and when the task runs.

#include <caf/test/dsl.hpp>

#include <boost/json.hpp>

#include "tests/e2e/e2e_fixture.hpp"
#include "tests/http/error_body.hpp"
#include "tests/support/http_client.hpp"

using namespace nf;
using test::check_error;
using namespace std::chrono_literals;

namespace {

namespace json = boost::json;

struct fixture {
  test::e2e_fixture f{"http_vectors"};
  std::unique_ptr<test::http_client> http;
  fixture() {
    f.start_node();
    CAF_REQUIRE(f.http_port != 0);
    http = std::make_unique<test::http_client>("127.0.0.1", f.http_port);
  }

  json::value ok(const test::http_reply& r) {
    CAF_CHECK_EQUAL(r.status, 200u);
    if (r.status != 200u)
      CAF_MESSAGE("answer: " << r.body);
    return r.json();
  }

  std::vector<std::string> ids(const json::value& answer, const char* key = "results",
                               const char* id = "id") {
    std::vector<std::string> out;
    const auto* o = answer.if_object();
    if (o == nullptr || o->if_contains(key) == nullptr) {
      CAF_FAIL("no " << key << " in " << json::serialize(answer));
    }
    for (const auto& h : answer.at(key).as_array())
      out.emplace_back(h.at(id).as_string());
    return out;
  }
};

// A toy embedding a worker computes: how often each of the letters a-e occurs.
json::array letter_counts(const std::string& text) {
  json::array out;
  for (char c = 'a'; c <= 'e'; ++c)
    out.push_back(static_cast<int64_t>(std::count(text.begin(), text.end(), c)));
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_vectors, fixture)

CAF_TEST(documents are put searched and deleted) {
  auto one = ok(http->put("/api/vectors/faq/documents/a",
                          R"({"embedding":[1,0,0],"metadata":{"k":1},"text":"alpha"})"));
  CAF_CHECK_EQUAL(one.at("stored").as_int64(), 1);
  CAF_CHECK_EQUAL(one.at("dimensions").as_int64(), 3);
  auto batch = ok(http->post("/api/vectors/faq/documents",
                             R"({"documents":[{"id":"c","embedding":[1,1,0]},
                                              {"id":"b","embedding":[0,2,0]},
                                              {"id":"a2","embedding":[5,0,0]}]})"));
  CAF_CHECK_EQUAL(batch.at("stored").as_int64(), 3);

  auto found = ok(http->post("/api/vectors/faq/search", R"({"embedding":[2,0,0],"limit":3})"));
  // "a" and "a2" point the same way: a tie, by id.
  CAF_CHECK_EQUAL(ids(found), (std::vector<std::string>{"a", "a2", "c"}));
  CAF_CHECK_EQUAL(found.at("mode").as_string(), "exact");
  CAF_CHECK(found.at("distance").as_string() == "sql"
            || found.at("distance").as_string() == "vector");
  const auto& top = found.at("results").as_array().at(0);
  CAF_CHECK_LESS(std::abs(top.at("score").as_double() - 1.0), 1e-6);
  CAF_CHECK_EQUAL(top.at("metadata").at("k").as_int64(), 1);
  CAF_CHECK_EQUAL(top.at("text").as_string(), "alpha");
  auto forced = ok(http->post("/api/vectors/faq/search", R"({"embedding":[0,1,0],"exact":true})"));
  auto forced_ids = ids(forced);
  CAF_REQUIRE_EQUAL(forced_ids.size(), 4u);
  CAF_CHECK_EQUAL(forced_ids.front(), "b");

  ok(http->del("/api/vectors/faq/documents/a"));
  check_error(http->del("/api/vectors/faq/documents/a"), 404);
  CAF_CHECK_EQUAL(ids(ok(http->post("/api/vectors/faq/search", R"({"embedding":[1,0,0]})"))),
                  (std::vector<std::string>{"a2", "c", "b"}));
  auto dropped = ok(http->del("/api/vectors/faq"));
  CAF_CHECK_EQUAL(dropped.at("removedDocuments").as_int64(), 3);
  check_error(http->post("/api/vectors/faq/search", R"({"embedding":[1,0,0]})"), 404);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "VectorDocuments")"), 0);
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "AuditEvents"
                              WHERE "action" IN ('vectors.delete', 'vectors.drop'))"),
                  2);
}

CAF_TEST(bad input is 400 naming the field) {
  ok(http->put("/api/vectors/bad/documents/a", R"({"embedding":[1,0,0]})"));
  check_error(http->put("/api/vectors/bad/documents/b", R"({"embedding":[1,0]})"), 400,
              "embedding");
  check_error(http->put("/api/vectors/bad/documents/b", R"({"embedding":[]})"), 400,
              "embedding");
  check_error(http->put("/api/vectors/bad/documents/b", R"({"embedding":[0,0,0]})"), 400,
              "embedding");
  check_error(http->put("/api/vectors/bad/documents/b", R"({"embedding":[1,"x",0]})"), 400,
              "embedding[1]");
  check_error(http->put("/api/vectors/bad/documents/b", R"({"embedding":[1,0,0],"size":2})"),
              400, "size");
  check_error(http->put("/api/vectors/bad/documents/b", R"({"id":"c","embedding":[1,0,0]})"),
              400, "id");
  check_error(http->post("/api/vectors/bad/documents",
                         R"({"documents":[{"id":"x","embedding":[1,0,0]},
                                          {"id":"y","embedding":[1,0]}]})"),
              400, "documents[1].embedding");
  check_error(http->post("/api/vectors/bad/documents", R"({"documents":[]})"), 400, "documents");
  check_error(http->post("/api/vectors/bad/search", R"({"embedding":[1,0]})"), 400, "embedding");
  check_error(http->post("/api/vectors/bad/search", R"({"embedding":[1,0,0],"limit":0})"), 400,
              "limit");
  check_error(http->post("/api/vectors/bad/search", R"({"limit":3})"), 400, "embedding");
  check_error(http->post("/api/vectors/bad/search", R"({"embedding":[1,0,0],"exact":"yes"})"),
              400, "exact");
  check_error(http->post("/api/vectors/no%20such/search", R"({"embedding":[1,0,0]})"), 400,
              "index");
  check_error(http->post("/api/vectors/missing/search", R"({"embedding":[1,0,0]})"), 404);
  // Nothing of the refused puts was written.
  CAF_CHECK_EQUAL(f.count(R"(SELECT count(*) FROM "VectorDocuments")"), 1);
}

CAF_TEST(a workflow stores and searches embeddings a worker computed) {
  f.define(R"([{"name": "embed", "responseTimeoutSeconds": 30},
    {"name": "rag", "version": 1, "tasks": [
      {"name": "embed", "taskReferenceName": "embed_a", "inputParameters": {"text": "${workflow.input.a}"}},
      {"name": "store", "taskReferenceName": "store_a", "type": "LLM_STORE_EMBEDDINGS",
       "inputParameters": {"vectorDB": "nodeflow", "namespace": "kb", "index": "docs", "id": "doc-a",
         "embeddings": "${embed_a.output.embedding}", "metadata": {"source": "a"},
         "embeddingModelProvider": "toy", "embeddingModel": "letters"}},
      {"name": "embed", "taskReferenceName": "embed_b", "inputParameters": {"text": "${workflow.input.b}"}},
      {"name": "store", "taskReferenceName": "store_b", "type": "LLM_STORE_EMBEDDINGS",
       "inputParameters": {"namespace": "kb", "index": "docs", "id": "doc-b",
         "embeddings": "${embed_b.output.embedding}"}},
      {"name": "embed", "taskReferenceName": "embed_q", "inputParameters": {"text": "${workflow.input.q}"}},
      {"name": "search", "taskReferenceName": "search", "type": "LLM_SEARCH_EMBEDDINGS",
       "inputParameters": {"vectorDB": "${workflow.input.db}", "namespace": "kb", "index": "docs",
         "embeddings": "${embed_q.output.embedding}", "maxResults": 1}}],
     "outputParameters": {"found": "${search.output.result}", "mode": "${search.output.mode}"}}])");
  test::worker_pool workers{f.client_opts(), {"embed"}, 1, [](const msg::leased_task& t) {
    auto in = json::parse(t.input_json).as_object();
    auto text = std::string{in.at("text").as_string()};
    return test::task_outcome::completed(
      json::serialize(json::object{{"embedding", letter_counts(text)}}));
  }};
  auto id = f.start("rag", R"({"a": "aaab", "b": "ccdde", "q": "dd c", "db": "nodeflow"})");
  CAF_REQUIRE_EQUAL(f.await_end(id), "COMPLETED");
  auto out = f.get(id).at("output");
  CAF_CHECK_EQUAL(out.at("mode").as_string(), "exact");
  const auto& found = out.at("found").as_array();
  CAF_REQUIRE_EQUAL(found.size(), 1u);
  CAF_CHECK_EQUAL(found[0].at("docId").as_string(), "doc-b");
  // The documents are the namespace's, under the index "kb.docs", for the HTTP door too.
  auto both = ok(http->post("/api/vectors/kb.docs/search", R"({"embedding":[1,0,0,0,0]})"));
  CAF_CHECK_EQUAL(ids(both), (std::vector<std::string>{"doc-a", "doc-b"}));
  CAF_CHECK_EQUAL(both.at("results").at(0).at("metadata").at("embeddingModel").as_string(),
                  "letters");

  // A vectorDB given at run time that is not nodeflow's fails the task for good, naming it.
  auto other = f.start("rag", R"({"a": "a", "b": "b", "q": "a", "db": "pinecone"})");
  CAF_REQUIRE_EQUAL(f.await_end(other), "FAILED");
  auto wf = http->get("/api/workflow/" + other + "?includeTasks=true").json();
  std::string reason;
  for (const auto& t : wf.at("tasks").as_array())
    if (t.at("referenceTaskName").as_string() == "search")
      reason = std::string{t.at("reasonForIncompletion").as_string()};
  CAF_CHECK(reason.find("vectorDB: \"pinecone\" is not available") != std::string::npos);
  workers.stop();
}

CAF_TEST(a definition naming another vectorDB is refused naming the field) {
  auto r = http->post("/api/metadata/workflow", R"({"name": "elsewhere", "version": 1, "tasks": [
      {"name": "store", "taskReferenceName": "s", "type": "LLM_STORE_EMBEDDINGS",
       "inputParameters": {"vectorDB": "pineconedb", "index": "i", "id": "x",
                           "embeddings": [1, 2]}}]})");
  check_error(r, 400, "tasks[0].inputParameters.vectorDB");
  auto missing = http->post("/api/metadata/workflow", R"({"name": "noindex", "version": 1,
    "tasks": [{"name": "s", "taskReferenceName": "s", "type": "LLM_SEARCH_EMBEDDINGS",
               "inputParameters": {"embeddings": [1, 2]}}]})");
  check_error(missing, 400, "tasks[0].inputParameters.index");
  // The other LLM_* types are still refused by name.
  auto chat = http->post("/api/metadata/workflow", R"({"name": "chat", "version": 1, "tasks": [
      {"name": "c", "taskReferenceName": "c", "type": "LLM_CHAT_COMPLETE"}]})");
  CAF_CHECK_EQUAL(chat.status, 400u);
  CAF_CHECK(chat.body.find("LLM_CHAT_COMPLETE") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
