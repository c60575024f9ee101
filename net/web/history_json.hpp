#pragma once

// A workflow's history as the HTTP door shows it, once for both of its routes: the page of
// `GET /api/workflow/{id}/events` and the `data:` of each Server-Sent Event of its stream.

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "proto/messages.hpp"

namespace nf::net::web {

/// `{"seq","at" (ms since epoch),"type","taskRef" (null when the event is the workflow's),
/// "payload"}`.
boost::json::object event_json(const msg::event_view& e);

/// One Server-Sent Event: `id:` the seq (what a client resumes from), `event:` the type,
/// `data:` event_json.
std::string sse_frame(const msg::event_view& e);

/// True for the events after which a workflow runs no more: WORKFLOW_COMPLETED, _FAILED,
/// _TIMED_OUT and _TERMINATED (flow::is_terminal of the status they name). A retry, rerun
/// or restart writes events after one, but as a new run of the workflow.
bool ends_history(std::string_view type);

} // namespace nf::net::web
