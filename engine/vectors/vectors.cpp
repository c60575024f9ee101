#include "engine/vectors/vectors.hpp"

#include <boost/json.hpp>

#include "engine/audit_trail.hpp"
#include "proto/errors.hpp"
#include "store/audit.hpp"

namespace nf::engine {

namespace json = boost::json;

namespace {

caf::error invalid(const std::string& message) {
  return make_error(errc::invalid, message);
}

caf::expected<json::object> parse_object(const std::string& text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object())
    return invalid("body: expected a JSON object");
  return std::move(v.as_object());
}

caf::expected<std::string> put(store::connection& conn, const namespace_id& ns,
                               const msg::vector_request& r);

caf::expected<store::vector_document> read_document(const json::value& v, const std::string& at) {
  const auto* o = v.if_object();
  if (o == nullptr)
    return invalid(at + ": expected a document (a JSON object)");
  store::vector_document d;
  for (const auto& kv : *o) {
    const std::string key{kv.key()};
    if (key == "id") {
      if (!kv.value().is_string() || kv.value().as_string().empty())
        return invalid(at + ".id: expected the document's id (a non-empty string)");
      d.id = kv.value().as_string();
    } else if (key == "embedding") {
      auto e = read_embedding(kv.value(), at + ".embedding");
      if (!e)
        return std::move(e.error());
      d.embedding = std::move(*e);
    } else if (key == "metadata") {
      if (!kv.value().is_object() && !kv.value().is_null())
        return invalid(at + ".metadata: expected a JSON object");
      d.metadata_json = kv.value().is_null() ? "{}" : json::serialize(kv.value());
    } else if (key == "text") {
      if (!kv.value().is_string() && !kv.value().is_null())
        return invalid(at + ".text: expected a string");
      if (kv.value().is_string())
        d.text = std::string{kv.value().as_string()};
    } else {
      return invalid(at + "." + key + ": unknown field (a document has id, embedding, "
                                      "metadata and text)");
    }
  }
  if (d.id.empty())
    return invalid(at + ".id: expected the document's id (a non-empty string)");
  if (d.embedding.empty())
    return invalid(at + ".embedding: expected an array of numbers");
  return d;
}

// One document whose id the request names: its body is the document, and an error names
// the body's fields ("embedding: …"), not a batch's ("documents[0].embedding: …").
caf::expected<std::string> put_one(store::connection& conn, const namespace_id& ns,
                                   const msg::vector_request& r, json::object body) {
  if (const auto* id = body.if_contains("id");
      id != nullptr && !(id->is_string() && id->as_string() == r.document_id))
    return invalid("id: the body's id differs from the path's \"" + r.document_id + "\"");
  body["id"] = r.document_id;
  msg::vector_request batch = r;
  batch.body_json = json::serialize(json::object{{"documents", json::array{std::move(body)}}});
  batch.document_id.clear();
  auto answer = put(conn, ns, batch);
  if (answer)
    return answer;
  const std::string prefix = "documents[0].";
  auto message = message_of(answer.error());
  if (message.rfind(prefix, 0) == 0)
    return make_error(code_of(answer.error()), message.substr(prefix.size()));
  return answer;
}

caf::expected<std::string> put(store::connection& conn, const namespace_id& ns,
                               const msg::vector_request& r) {
  auto body = parse_object(r.body_json);
  if (!body)
    return std::move(body.error());
  if (!r.document_id.empty())
    return put_one(conn, ns, r, std::move(*body));
  const auto* docs = body->if_contains("documents");
  if (docs == nullptr || !docs->is_array() || docs->as_array().empty())
    return invalid("documents: expected a non-empty array of documents");
  for (const auto& kv : *body)
    if (kv.key() != "documents")
      return invalid(std::string{kv.key()} + ": unknown field (expected only documents)");
  std::vector<store::vector_document> ds;
  const auto& arr = docs->as_array();
  for (size_t i = 0; i < arr.size(); ++i) {
    auto d = read_document(arr[i], "documents[" + std::to_string(i) + "]");
    if (!d)
      return std::move(d.error());
    ds.push_back(std::move(*d));
  }
  auto dims = store::put_vector_documents(conn, ns, r.index, ds);
  if (!dims)
    return std::move(dims.error());
  return json::serialize(json::object{{"index", r.index},
                                      {"dimensions", *dims},
                                      {"stored", static_cast<int64_t>(ds.size())}});
}

} // namespace

caf::expected<std::vector<float>> read_embedding(const json::value& v, const std::string& field) {
  const auto* a = v.if_array();
  if (a == nullptr || a->empty())
    return invalid(field + ": expected a non-empty array of numbers");
  if (a->size() > static_cast<size_t>(store::max_vector_dimensions))
    return invalid(field + ": at most " + std::to_string(store::max_vector_dimensions)
                   + " dimensions, got " + std::to_string(a->size()));
  std::vector<float> out;
  out.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    const auto& x = (*a)[i];
    if (!x.is_number())
      return invalid(field + "[" + std::to_string(i) + "]: expected a number");
    out.push_back(static_cast<float>(x.to_number<double>()));
  }
  return out;
}

json::object search_answer(const std::string& index, const store::vector_search_result& r) {
  json::array results;
  for (const auto& h : r.hits) {
    json::error_code ec;
    auto meta = json::parse(h.metadata_json, ec);
    results.push_back(json::object{{"id", h.id},
                                   {"score", h.score},
                                   {"metadata", ec ? json::value(json::object{}) : meta},
                                   {"text", h.text ? json::value(*h.text) : json::value()}});
  }
  return json::object{{"index", index},
                      {"mode", r.exact ? "exact" : "approximate"},
                      {"distance", r.extension ? "vector" : "sql"},
                      {"candidates", r.candidates},
                      {"results", std::move(results)}};
}

caf::expected<store::vector_search_result> search_documents(store::connection& conn,
                                                            const namespace_id& ns,
                                                            const std::string& index,
                                                            const json::object& body) {
  store::vector_query q;
  const auto* e = body.if_contains("embedding");
  if (e == nullptr)
    return invalid("embedding: expected the query's embedding (an array of numbers)");
  for (const auto& kv : body) {
    const std::string key{kv.key()};
    if (key == "embedding") {
      auto v = read_embedding(kv.value(), "embedding");
      if (!v)
        return std::move(v.error());
      q.embedding = std::move(*v);
    } else if (key == "limit") {
      if (!kv.value().is_int64() || kv.value().as_int64() < 1 || kv.value().as_int64() > 1000)
        return invalid("limit: expected an integer 1-1000");
      q.limit = static_cast<int>(kv.value().as_int64());
    } else if (key == "exact") {
      if (!kv.value().is_bool())
        return invalid("exact: expected true or false");
      q.exact = kv.value().as_bool();
    } else {
      return invalid(key + ": unknown field (a search has embedding, limit and exact)");
    }
  }
  return store::search_vectors(conn, ns, index, q);
}

caf::expected<std::string> vectors(store::connection& conn, const msg::vector_request& r) {
  const namespace_id ns{r.namespace_id.empty() ? default_namespace.str() : r.namespace_id};
  if (!store::valid_vector_index_name(r.index))
    return invalid("index: expected 1-128 of A-Z a-z 0-9 _ . - (not starting with . or -)");
  if (r.op == "put")
    return put(conn, ns, r);
  if (r.op == "search") {
    auto body = parse_object(r.body_json);
    if (!body)
      return std::move(body.error());
    auto found = search_documents(conn, ns, r.index, *body);
    if (!found)
      return std::move(found.error());
    return json::serialize(search_answer(r.index, *found));
  }
  if (r.op == "delete") {
    auto gone = store::audited(
      conn,
      [&](store::connection& c) -> caf::expected<bool> {
        auto removed = store::remove_vector_document(c, ns, r.index, r.document_id);
        if (removed && !*removed)
          return make_error(errc::not_found, "document \"" + r.document_id
                                               + "\" in vector index \"" + r.index + "\"");
        return removed;
      },
      [&](bool) {
        return audit_event(r.actor, r.origin, "vectors.delete",
                           "vectors:" + r.index + "/" + r.document_id);
      });
    if (!gone)
      return std::move(gone.error());
    return json::serialize(json::object{{"index", r.index}, {"deleted", r.document_id}});
  }
  if (r.op == "drop") {
    auto gone = store::audited(
      conn,
      [&](store::connection& c) -> caf::expected<int64_t> {
        auto removed = store::remove_vector_index(c, ns, r.index);
        if (!removed)
          return std::move(removed.error());
        if (!*removed)
          return make_error(errc::not_found, "vector index \"" + r.index + "\"");
        return **removed;
      },
      [&](int64_t n) {
        return audit_event(r.actor, r.origin, "vectors.drop", "vectors:" + r.index,
                           json::object{{"removedDocuments", n}});
      });
    if (!gone)
      return std::move(gone.error());
    return json::serialize(json::object{{"index", r.index}, {"removedDocuments", *gone}});
  }
  return invalid("op: expected put, search, delete or drop, got \"" + r.op + "\"");
}

} // namespace nf::engine
