#pragma once

// Every HTTP route of a node, registered by topic; `nodeflow serve` builds the table once.
// Each topic's file maps Conductor's (or nodeflow's) REST shapes onto the client protocol
// through the gateway, so the HTTP door adds no engine logic of its own.

#include <functional>
#include <memory>
#include <string>

#include <boost/json/object.hpp>

#include "net/web/gateway.hpp"
#include "net/web/json_body.hpp"
#include "net/web/router.hpp"

namespace nf::net::web {

class event_hub;
class authenticator;
class series_sampler;

struct route_context {
  gateway* api = nullptr;
  json_limits json;
  /// The longest long poll a client may ask for (lessor.max_poll_timeout_ms).
  int64_t max_poll_timeout_ms = 30000;
  /// The live history streams (none: no stream route).
  event_hub* events = nullptr;
  /// Checks tokens and issues them (none: auth.enabled false).
  authenticator* auth = nullptr;
  /// The node's metrics over the last hour (none: GET /api/metrics/series is 404).
  const series_sampler* series = nullptr;
  /// The table being built (the OpenAPI route describes it).
  const router* table = nullptr;
};

/// A JSON text from the api answered as it is (200, application/json).
void answer_json_text(const exchange_ptr& ex, std::string& text);

void add_health_routes(router& r, const route_context& ctx);
void add_admin_routes(router& r, const route_context& ctx);
/// The audit record of administrative actions, a page at a time.
void add_audit_routes(router& r, const route_context& ctx);
/// A workflow's history: pages of JSON, and live as Server-Sent Events.
void add_history_routes(router& r, const route_context& ctx);
void add_metrics_route(router& r, const route_context& ctx);
/// Conductor's task routes (a Conductor SDK's workers poll and report here).
void add_task_routes(router& r, const route_context& ctx);
/// Conductor's update of a WAIT or HUMAN task by reference name, plain and /sync.
void add_task_ref_routes(router& r, const route_context& ctx);
/// Conductor's signal: the WAIT task a workflow is blocked on, updated without naming it.
void add_task_signal_routes(router& r, const route_context& ctx);
/// Conductor's task search, by task type (GET /api/tasks/search).
void add_task_search_route(router& r, const route_context& ctx);
void add_openapi_route(router& r, const route_context& ctx);
/// nodeflow's /api/namespaces: create, list and remove namespaces (admin only).
void add_namespace_routes(router& r, const route_context& ctx);
/// Conductor's scheduler: /api/scheduler/schedules…, /api/scheduler/nextFewSchedules.
void add_scheduler_routes(router& r, const route_context& ctx);
/// POST /api/token and POST /api/login: an API key, or a user's password, exchanged for a token.
void add_token_route(router& r, const route_context& ctx);
/// Conductor's /api/metadata: task and workflow definitions.
void add_metadata_routes(router& r, const route_context& ctx);
/// Conductor's /api/workflow: start, read, commands, search; and nodeflow's signals.
void add_workflow_routes(router& r, const route_context& ctx);
/// Conductor's lookups: a workflow's status, a definition's running workflows, the
/// workflows of correlation ids.
void add_workflow_lookup_routes(router& r, const route_context& ctx);
/// Orkes' update of a workflow's state: variables and a WAIT or HUMAN task in one command.
void add_workflow_state_route(router& r, const route_context& ctx);
/// Conductor's /api/workflow/bulk: one command on many workflows.
void add_workflow_bulk_routes(router& r, const route_context& ctx);
/// nodeflow's /api/webhooks/sinks: a namespace's webhook sinks (admin only).
void add_sink_routes(router& r, const route_context& ctx);
/// nodeflow's /api/vectors: documents with embeddings, put, searched and deleted.
void add_vector_routes(router& r, const route_context& ctx);
/// The OpenAPI 3 document of a route table.
boost::json::object openapi_document(const router& table);

/// The whole table.
std::shared_ptr<router> make_routes(const route_context& ctx);

} // namespace nf::net::web
