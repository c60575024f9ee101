// nodeflow's operator routes: the cluster's state and the outbox's dead letters.

#include <boost/json.hpp>

#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

// A JSON text the engine produced, passed through as it is.

} // namespace

void add_admin_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  auto lim = ctx.json;
  r.add({verb::get, "/api/cluster",
         "This node, the partitions it runs, the queues' depths and the pending decisions", {},
         body_kind::none, {},
         "{\"node\":{…},\"queues\":[{\"name\",\"ready\",\"leased\"}],\"pendingDecisions\":{…}}",
         "cluster", access::reader, [api](const exchange_ptr& ex) {
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 [ex](caf::error& e) { ex->fail(e); }, status_atom_v);
         }});
  r.add({verb::get, "/api/deadletters",
         "Outbox events that exhausted their deliveries, oldest first",
         {{"afterId", "only dead letters with a larger id (paging)", false, "integer"},
          {"limit", "at most this many (1 … 1000, default 100)", false, "integer"}},
         body_kind::none, {}, "{\"deadLetters\":[…],\"nextAfterId\":id|null}", "deadletters", access::reader,
         [api](const exchange_ptr& ex) {
           auto after = query_int(ex, "afterId", 0, 0, INT64_MAX);
           if (!after)
             return;
           auto limit = query_int(ex, "limit", 100, 1, 1000);
           if (!limit)
             return;
           msg::deadletter_request req;
           req.op = "list";
           req.after_id = *after;
           req.limit = static_cast<int32_t>(*limit);
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 [ex](caf::error& e) { ex->fail(e); }, deadletter_atom_v,
                                 scoped(ex, req));
         }});
  r.add({verb::post, "/api/deadletters/replay",
         "Queue dead letters for delivery again: the ids given, or all of them", {},
         body_kind::json, "{\"ids\":[id,…]} (absent or empty: every dead letter)",
         "{\"replayed\":n}", "deadletters", access::operator_, [api, lim](const exchange_ptr& ex) {
           auto body = read_json_body(ex, lim, boost::json::value(boost::json::object{}));
           if (!body)
             return;
           msg::deadletter_request req;
           req.op = "replay";
           const auto* o = body->if_object();
           if (!o) {
             ex->fail(400, "body: expected a JSON object {\"ids\":[…]}", "body");
             return;
           }
           if (const auto* ids = o->if_contains("ids")) {
             if (!ids->is_array()) {
               ex->fail(400, "ids: expected an array of dead letter ids", "ids");
               return;
             }
             for (size_t i = 0; i < ids->as_array().size(); ++i) {
               const auto& v = ids->as_array()[i];
               if (!v.is_int64() && !v.is_uint64()) {
                 auto field = "ids[" + std::to_string(i) + "]";
                 ex->fail(400, field + ": expected an integer id", field);
                 return;
               }
               req.ids.push_back(v.is_int64() ? v.as_int64()
                                              : static_cast<int64_t>(v.as_uint64()));
             }
           }
           for (const auto& [k, v] : *o)
             if (k != "ids") {
               ex->fail(400, std::string{k} + ": unknown field (expected only ids)",
                        std::string{k});
               return;
             }
           api->ask<std::string>([ex](std::string& t) { answer_json_text(ex, t); },
                                 [ex](caf::error& e) { ex->fail(e); }, deadletter_atom_v,
                                 scoped(ex, req));
         }});
}

} // namespace nf::net::web
