#include "engine/system_tasks/vector_task.hpp"

#include <boost/json.hpp>

#include "engine/system_tasks/task_result.hpp"
#include "engine/vectors/vectors.hpp"
#include "proto/errors.hpp"
#include "store/vectors.hpp"

namespace nf::engine {

namespace json = boost::json;

namespace {

msg::task_result refused(const msg::leased_task& task, const std::string& why) {
  return system_task_result(task, "FAILED_WITH_TERMINAL_ERROR", json::object{{"error", why}},
                            task.task_type + ": " + why);
}

std::string string_input(const json::object& in, const char* key) {
  const auto* v = in.if_contains(key);
  return v != nullptr && v->is_string() ? std::string{v->as_string()} : std::string{};
}

// Conductor's `namespace` (a vector database's own partition of an index) qualifies the
// index's name: index "docs" in namespace "faq" is the index "faq.docs". Documents stay in
// the workflow's nodeflow namespace either way.
std::string index_of(const json::object& in) {
  auto ns = string_input(in, "namespace");
  auto index = string_input(in, "index");
  return ns.empty() ? index : ns + "." + index;
}

bool terminal(const caf::error& e) {
  auto c = code_of(e);
  return c == errc::invalid || c == errc::not_found || c == errc::unsupported;
}

caf::expected<msg::task_result> store_embeddings(store::connection& conn,
                                                 const msg::leased_task& task,
                                                 const namespace_id& ns, const json::object& in,
                                                 const std::string& index) {
  store::vector_document d;
  d.id = string_input(in, "id");
  if (d.id.empty())
    return refused(task, "id: expected the document's id (a non-empty string)");
  const auto* e = in.if_contains("embeddings");
  if (e == nullptr)
    return refused(task, "embeddings: expected the document's embedding (an array of numbers)");
  auto embedding = read_embedding(*e, "embeddings");
  if (!embedding)
    return refused(task, message_of(embedding.error()));
  d.embedding = std::move(*embedding);
  json::object meta;
  if (const auto* m = in.if_contains("metadata"); m != nullptr && !m->is_null()) {
    if (!m->is_object())
      return refused(task, "metadata: expected a JSON object");
    meta = m->as_object();
  }
  // What model made the embedding is kept with it: nodeflow computes none.
  for (const char* key : {"embeddingModelProvider", "embeddingModel"})
    if (auto v = string_input(in, key); !v.empty())
      meta[key] = v;
  d.metadata_json = json::serialize(meta);
  if (auto t = string_input(in, "text"); !t.empty())
    d.text = std::move(t);
  auto dims = store::put_vector_documents(conn, ns, index, {d});
  if (!dims) {
    if (terminal(dims.error()))
      return refused(task, message_of(dims.error()));
    return std::move(dims.error());
  }
  return system_task_result(task, "COMPLETED",
                            json::object{{"index", index}, {"id", d.id}, {"dimensions", *dims}},
                            {});
}

caf::expected<msg::task_result> search_embeddings(store::connection& conn,
                                                  const msg::leased_task& task,
                                                  const namespace_id& ns,
                                                  const json::object& in,
                                                  const std::string& index) {
  json::object body;
  const auto* e = in.if_contains("embeddings");
  if (e == nullptr)
    return refused(task, "embeddings: expected the query's embedding (an array of numbers)");
  body["embedding"] = *e;
  if (const auto* n = in.if_contains("maxResults"); n != nullptr && !n->is_null())
    body["limit"] = *n;
  auto found = search_documents(conn, ns, index, body);
  if (!found) {
    auto why = message_of(found.error());
    // The body's names are the task's: the input says "embeddings" and "maxResults".
    if (why.rfind("embedding", 0) == 0)
      why = "embeddings" + why.substr(9);
    else if (why.rfind("limit", 0) == 0)
      why = "maxResults" + why.substr(5);
    if (terminal(found.error()))
      return refused(task, why);
    return std::move(found.error());
  }
  json::array result;
  for (const auto& h : found->hits) {
    json::error_code ec;
    auto meta = json::parse(h.metadata_json, ec);
    result.push_back(json::object{{"docId", h.id},
                                  {"score", h.score},
                                  {"metadata", ec ? json::value(json::object{}) : meta},
                                  {"text", h.text ? json::value(*h.text) : json::value()}});
  }
  auto answer = search_answer(index, *found);
  return system_task_result(task, "COMPLETED",
                            json::object{{"result", std::move(result)},
                                         {"index", index},
                                         {"mode", answer["mode"]},
                                         {"distance", answer["distance"]}},
                            {});
}

} // namespace

std::string vector_db_refusal(const std::string& vector_db) {
  if (vector_db.empty() || vector_db == "nodeflow")
    return {};
  return "vectorDB: \"" + vector_db
         + "\" is not available; nodeflow keeps embeddings in its own database (give "
           "\"nodeflow\" or leave vectorDB out)";
}

caf::expected<msg::task_result> run_vector_task(store::connection& conn,
                                                const msg::leased_task& task) {
  json::error_code ec;
  auto v = json::parse(task.input_json, ec);
  if (ec || !v.is_object())
    return refused(task, "input: expected a JSON object");
  const auto& in = v.as_object();
  if (const auto* db = in.if_contains("vectorDB"); db != nullptr && !db->is_null()) {
    if (!db->is_string())
      return refused(task, "vectorDB: expected a string");
    if (auto why = vector_db_refusal(std::string{db->as_string()}); !why.empty())
      return refused(task, why);
  }
  auto index = index_of(in);
  if (!store::valid_vector_index_name(index))
    return refused(task, "index: expected 1-128 of A-Z a-z 0-9 _ . - (with namespace, "
                         "\"<namespace>.<index>\"), got \"" + index.substr(0, 130) + "\"");
  auto ns = store::workflow_namespace(conn, task.workflow_id);
  if (!ns)
    return std::move(ns.error());
  if (task.task_type == "LLM_STORE_EMBEDDINGS")
    return store_embeddings(conn, task, *ns, in, index);
  if (task.task_type == "LLM_SEARCH_EMBEDDINGS")
    return search_embeddings(conn, task, *ns, in, index);
  return refused(task, "not a vector task type");
}

} // namespace nf::engine
