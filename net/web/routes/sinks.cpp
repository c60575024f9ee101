// nodeflow's webhook sink routes (Conductor has none): the sinks the relay delivers a
// namespace's outbox events to, managed by an admin of that namespace. The checks and the
// audit record are the engine's (engine/webhook_sinks.cpp), shared with `nodeflow sinks`;
// a sink's signing secret goes in and never comes out (`signingSecretSet` says if it is set).

#include <boost/json.hpp>

#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

constexpr const char* sink_answer =
  "{\"id\",\"url\",\"eventTypes\":[…]|null,\"maxAttempts\",\"timeoutMs\",\"enabled\","
  "\"signingSecretSet\",\"createdTime\",\"updatedTime\"}";

constexpr const char* sink_body =
  "{\"url\": http(s) URL without credentials, \"eventTypes\": [type, …] | null (every type), "
  "\"maxAttempts\": 1 … 1000 (10), \"timeoutMs\": 1 … 600000 (5000), \"enabled\": bool "
  "(true), \"signingSecret\": 16 … 1024 characters | null (unsigned)}";

void ask_sinks(gateway* api, const exchange_ptr& ex, msg::sink_request r, unsigned status) {
  api->ask<std::string>(
    [ex, status](std::string& t) {
      ex->respond(response{status, "application/json", std::move(t), {}});
    },
    [ex](caf::error& e) { ex->fail(e); }, sinks_atom_v, scoped(ex, std::move(r)));
}

msg::sink_request sink_op(const char* op, std::string id = {}, std::string body = {}) {
  msg::sink_request r;
  r.op = op;
  r.id = std::move(id);
  r.body_json = std::move(body);
  return r;
}

} // namespace

void add_sink_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::get, "/api/webhooks/sinks", "The namespace's webhook sinks, oldest first", {},
         body_kind::none, {}, "{\"sinks\":[sink…]}", "webhooks", access::admin,
         [api](const exchange_ptr& ex) { ask_sinks(api, ex, sink_op("list"), 200); }});
  r.add({verb::post, "/api/webhooks/sinks",
         "Add a webhook sink: the namespace's outbox events are POSTed to it", {},
         body_kind::json, sink_body, sink_answer, "webhooks", access::admin,
         [api, lim](const exchange_ptr& ex) {
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           ask_sinks(api, ex, sink_op("create", {}, boost::json::serialize(*body)), 201);
         }});
  r.add({verb::get, "/api/webhooks/sinks/{id}", "One webhook sink", {}, body_kind::none, {},
         sink_answer, "webhooks", access::admin, [api](const exchange_ptr& ex) {
           ask_sinks(api, ex, sink_op("get", ex->param("id")), 200);
         }});
  r.add({verb::put, "/api/webhooks/sinks/{id}",
         "Change a webhook sink: the fields given are written, the others kept "
         "({\"enabled\": false} stops its deliveries)",
         {}, body_kind::json, sink_body, sink_answer, "webhooks", access::admin,
         [api, lim](const exchange_ptr& ex) {
           auto body = read_json_object(ex, lim);
           if (!body)
             return;
           ask_sinks(api, ex, sink_op("update", ex->param("id"), boost::json::serialize(*body)),
                     200);
         }});
  r.add({verb::delete_, "/api/webhooks/sinks/{id}", "Remove a webhook sink", {},
         body_kind::none, {}, "{\"removed\":id}", "webhooks", access::admin,
         [api](const exchange_ptr& ex) {
           ask_sinks(api, ex, sink_op("remove", ex->param("id")), 200);
         }});
}

} // namespace nf::net::web
