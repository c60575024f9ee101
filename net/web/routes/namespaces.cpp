// nodeflow's namespace routes: create, list and remove the cluster's namespaces. They act on
// the cluster, not within a namespace, so only an admin principal may call them (403
// otherwise); a namespace's own rows are reached through every other route, scoped to the
// principal's namespace (net/web/scope.hpp).

#include <boost/json.hpp>

#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

void answer_json(const exchange_ptr& ex, unsigned status, std::string& text) {
  ex->respond(response{status, "application/json", std::move(text), {}});
}

// True when the principal may manage namespaces; answers 403 otherwise.
bool admin(const exchange_ptr& ex) {
  if (ex->who().role == "admin")
    return true;
  ex->fail(403, "managing namespaces takes the admin role, this request has \""
                  + ex->who().role + "\"");
  return false;
}

void ask_namespaces(gateway* api, const exchange_ptr& ex, msg::namespace_request r,
                    unsigned status) {
  api->ask<std::string>([ex, status](std::string& t) { answer_json(ex, status, t); },
                        [ex](caf::error& e) { ex->fail(e); }, namespaces_atom_v, signed_by(ex, std::move(r)));
}

} // namespace

void add_namespace_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::get, "/api/namespaces", "Every namespace, by name (admin)", {}, body_kind::none,
         {}, "{\"namespaces\":[{\"name\",\"createdTime\"}]}", "namespaces", access::admin,
         [api](const exchange_ptr& ex) {
           if (admin(ex))
             ask_namespaces(api, ex, msg::namespace_request{"list", {}}, 200);
         }});
  r.add({verb::post, "/api/namespaces", "Create a namespace (admin; 409 when it exists)", {},
         body_kind::json,
         "{\"name\": NAME} (a-z, 0-9, '_', '-'; starting with a letter; at most 63)",
         "{\"name\",\"createdTime\"}", "namespaces", access::admin, [api, lim](const exchange_ptr& ex) {
           if (!admin(ex))
             return;
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           for (const auto& kv : *body)
             if (kv.key() != "name") {
               std::string k{kv.key()};
               ex->fail(400, k + ": unknown field (a namespace has only a name)", k);
               return;
             }
           const auto* name = body->if_contains("name");
           if (name == nullptr || !name->is_string()) {
             ex->fail(400, "name: expected the namespace's name (a string)", "name");
             return;
           }
           ask_namespaces(api, ex, msg::namespace_request{"create", std::string{name->as_string()}},
                          201);
         }});
  r.add({verb::delete_, "/api/namespaces/{name}",
         "Remove a namespace (admin; 409 while it holds definitions, running executions, "
         "webhook sinks or vector indexes; \"default\" stays)",
         {}, body_kind::none, {}, "{\"removed\":name}", "namespaces", access::admin,
         [api](const exchange_ptr& ex) {
           if (admin(ex))
             ask_namespaces(api, ex, msg::namespace_request{"remove", ex->param("name")}, 200);
         }});
}

} // namespace nf::net::web
