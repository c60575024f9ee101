// GET /api/audit: the administrative actions recorded in "AuditEvents" (store/audit.hpp),
// oldest first, keyset-paged by cursor: an admin reads its own namespace's.

#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

void add_audit_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  r.add({verb::get, "/api/audit",
         "Administrative actions (who, from where, what, on what), oldest first",
         {{"since", "only actions at or after this time (ms since the epoch)", false, "integer"},
          {"action", "only this action (definitions.register, workflow.pause, …)", false},
          {"limit", "at most this many (1 … 1000, default 100)", false, "integer"},
          {"cursor", "nextCursor of the previous page", false}},
         body_kind::none, {},
         "{\"events\":[{\"id\",\"at\",\"actor\",\"origin\",\"namespace\",\"action\","
         "\"target\",\"details\"}],\"nextCursor\":id|null}",
         "audit", access::admin, [api](const exchange_ptr& ex) {
           auto since = query_int(ex, "since", 0, 0, INT64_MAX / 2);
           if (!since)
             return;
           auto limit = query_int(ex, "limit", 100, 1, 1000);
           if (!limit)
             return;
           msg::audit_query q;
           q.since_ms = *since;
           q.limit = static_cast<int32_t>(*limit);
           if (const auto* a = ex->query("action"))
             q.action = *a;
           if (const auto* c = ex->query("cursor"))
             q.cursor = *c;
           api->ask<std::string>(
             [ex](std::string& t) {
               ex->respond(response{200, "application/json", std::move(t), {}});
             },
             [ex](caf::error& e) { ex->fail(e); }, audit_atom_v, scoped(ex, std::move(q)));
         }});
}

} // namespace nf::net::web
