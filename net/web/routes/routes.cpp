#include "net/web/routes/routes.hpp"

namespace nf::net::web {

void answer_json_text(const exchange_ptr& ex, std::string& text) {
  ex->respond(response{200, "application/json", std::move(text), {}});
}

std::shared_ptr<router> make_routes(const route_context& base) {
  auto r = std::make_shared<router>();
  auto ctx = base;
  ctx.table = r.get();
  add_health_routes(*r, ctx);
  add_token_route(*r, ctx);
  add_admin_routes(*r, ctx);
  add_audit_routes(*r, ctx);
  add_history_routes(*r, ctx);
  add_metrics_route(*r, ctx);
  add_task_routes(*r, ctx);
  add_task_ref_routes(*r, ctx);
  add_task_signal_routes(*r, ctx);
  add_task_search_route(*r, ctx);
  add_metadata_routes(*r, ctx);
  add_workflow_routes(*r, ctx);
  add_workflow_lookup_routes(*r, ctx);
  add_workflow_bulk_routes(*r, ctx);
  add_workflow_state_route(*r, ctx);
  add_namespace_routes(*r, ctx);
  add_sink_routes(*r, ctx);
  add_scheduler_routes(*r, ctx);
  add_vector_routes(*r, ctx);
  add_openapi_route(*r, ctx);
  return r;
}

} // namespace nf::net::web
