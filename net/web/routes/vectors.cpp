// nodeflow's vector routes: documents with embeddings in named indexes of the principal's
// namespace, put, searched by cosine similarity, deleted (store/vectors.hpp). The body goes
// to the client protocol as it came; engine/vectors/ reads it and names a bad field (400).

#include <boost/json.hpp>

#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

void ask_vectors(gateway* api, const exchange_ptr& ex, msg::vector_request r) {
  api->ask<std::string>(
    [ex](std::string& t) { ex->respond(response{200, "application/json", std::move(t), {}}); },
    [ex](caf::error& e) { ex->fail(e); }, vectors_atom_v, scoped(ex, std::move(r)));
}

msg::vector_request request_of(const exchange_ptr& ex, const char* op) {
  msg::vector_request r;
  r.op = op;
  r.index = ex->param("index");
  return r;
}

// The body as it came, once it reads as a JSON object (400 otherwise).
bool with_body(const exchange_ptr& ex, json_limits lim, msg::vector_request& r) {
  auto body = read_json_object(ex, lim);
  if (!body)
    return false;
  r.body_json = ex->body();
  return true;
}

} // namespace

void add_vector_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  const std::string doc_fields =
    "\"embedding\": [numbers] (the index's dimension, fixed by its first document), "
    "\"metadata\"?: {…}, \"text\"?: string";
  r.add({verb::put, "/api/vectors/{index}/documents/{id}",
         "Store or replace one document (creates the index)", {}, body_kind::json,
         "{" + doc_fields + "}", "{\"index\",\"dimensions\",\"stored\":1}", "vectors",
         access::operator_, [api, lim](const exchange_ptr& ex) {
           auto req = request_of(ex, "put");
           req.document_id = ex->param("id");
           if (with_body(ex, lim, req))
             ask_vectors(api, ex, std::move(req));
         }});
  r.add({verb::post, "/api/vectors/{index}/documents",
         "Store or replace documents, all of them or (on any problem) none", {},
         body_kind::json, "{\"documents\": [{\"id\", " + doc_fields + "}]}",
         "{\"index\",\"dimensions\",\"stored\"}", "vectors", access::operator_,
         [api, lim](const exchange_ptr& ex) {
           auto req = request_of(ex, "put");
           if (with_body(ex, lim, req))
             ask_vectors(api, ex, std::move(req));
         }});
  r.add({verb::post, "/api/vectors/{index}/search",
         "The documents nearest to an embedding by cosine similarity, most similar first (ties "
         "by id); exact, or on a large index without the vector extension approximate (mode)",
         {}, body_kind::json,
         "{\"embedding\": [numbers], \"limit\"?: 1-1000 (10), \"exact\"?: bool (false)}",
         "{\"index\",\"mode\":\"exact\"|\"approximate\",\"distance\":\"sql\"|\"vector\","
         "\"candidates\",\"results\":[{\"id\",\"score\",\"metadata\",\"text\"}]}",
         "vectors", access::reader, [api, lim](const exchange_ptr& ex) {
           auto req = request_of(ex, "search");
           if (with_body(ex, lim, req))
             ask_vectors(api, ex, std::move(req));
         }});
  r.add({verb::delete_, "/api/vectors/{index}/documents/{id}", "Delete one document (404 when "
         "the index has none of that id)", {}, body_kind::none, {},
         "{\"index\",\"deleted\":id}", "vectors", access::operator_,
         [api](const exchange_ptr& ex) {
           auto req = request_of(ex, "delete");
           req.document_id = ex->param("id");
           ask_vectors(api, ex, std::move(req));
         }});
  r.add({verb::delete_, "/api/vectors/{index}", "Delete an index and its documents", {},
         body_kind::none, {}, "{\"index\",\"removedDocuments\"}", "vectors", access::operator_,
         [api](const exchange_ptr& ex) { ask_vectors(api, ex, request_of(ex, "drop")); }});
}

} // namespace nf::net::web
