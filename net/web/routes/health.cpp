// GET /health/live and /health/ready: what a load balancer or an orchestrator asks.

#include <boost/json.hpp>

#include "net/web/routes/routes.hpp"

namespace nf::net::web {

void add_health_routes(router& r, const route_context& ctx) {
  r.add({verb::get, "/health/live", "The process answers HTTP", {}, body_kind::none, {},
         "{\"status\":\"UP\"}", "health", access::open, [](const exchange_ptr& ex) {
           ex->respond_json(200, boost::json::object{{"status", "UP"}});
         }});
  r.add({verb::get, "/health/ready",
         "Whether the node can serve: its database is ready for this build (`nodeflow "
         "readiness`) and it runs at least one partition",
         {}, body_kind::none, {},
         "200 {\"ready\":true,…} when ready, 503 with the same body and Retry-After when not",
         "health", access::open, [api = ctx.api](const exchange_ptr& ex) {
           api->ask<std::string>(
             [ex](std::string& json) {
               boost::json::error_code ec;
               auto v = boost::json::parse(json, ec);
               bool ready = !ec && v.is_object() && v.as_object().contains("ready")
                            && v.as_object().at("ready") == true;
               response res{ready ? 200u : 503u, "application/json", json, {}};
               if (!ready)
                 res.headers.emplace_back("Retry-After", "1");
               ex->respond(std::move(res));
             },
             [ex](caf::error& e) { ex->fail(e); }, ready_atom_v);
         }});
}

} // namespace nf::net::web
