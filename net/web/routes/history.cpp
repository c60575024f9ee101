// nodeflow's history routes (Conductor has none): a workflow's events as pages of JSON, and
// live as Server-Sent Events that resume from `Last-Event-ID` with nothing dropped or repeated.

#include <charconv>

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "net/web/event_hub.hpp"
#include "net/web/history_json.hpp"
#include "net/web/routes/routes.hpp"
#include "net/web/scope.hpp"

namespace nf::net::web {

namespace {

// Larger seqs than this are refused by the api's checks too (net/api/checks.cpp).
constexpr int64_t max_seq = INT64_MAX / 2;

std::optional<std::string> workflow_id_of(const exchange_ptr& ex) {
  const auto& id = ex->param("workflowId");
  if (!flow::is_uuid(id)) {
    ex->fail(400, "workflowId: expected a workflow id (a UUID), got \"" + id + "\"",
             "workflowId");
    return std::nullopt;
  }
  return id;
}

// Where a stream resumes: the `Last-Event-ID` an EventSource sends when it reconnects (the
// seq of the last event it got), else `?after=`, else the beginning.
// A malformed `after` is refused even beside the header, which wins.
std::optional<int64_t> resume_point(const exchange_ptr& ex) {
  auto after = query_int(ex, "after", 0, 0, max_seq);
  auto last = ex->header("last-event-id");
  if (!after || last.empty())
    return after;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(last.data(), last.data() + last.size(), v);
  if (ec != std::errc{} || p != last.data() + last.size() || v < 0 || v > max_seq) {
    ex->fail(400, "Last-Event-ID: expected the seq of an event (an integer from 0 to "
                    + std::to_string(max_seq) + "), got \"" + last + "\"",
             "Last-Event-ID");
    return std::nullopt;
  }
  return v;
}

} // namespace

void add_history_routes(router& r, const route_context& ctx) {
  auto* api = ctx.api;
  r.add({verb::get, "/api/workflow/{workflowId}/events",
         "A workflow's history: its events in seq order, a page at a time",
         {{"after", "only events with a larger seq (0 = from the start; the last page's next)",
           false, "integer"},
          {"limit", "at most this many (1 … 1000, default 100)", false, "integer"}},
         body_kind::none, {},
         "{\"workflowId\",\"events\":[{\"seq\",\"at\",\"type\",\"taskRef\",\"payload\"}],"
         "\"next\":seq} (ask again with after=next; an empty page is the end for now)",
         "history", access::reader, [api](const exchange_ptr& ex) {
           auto id = workflow_id_of(ex);
           if (!id)
             return;
           auto after = query_int(ex, "after", 0, 0, max_seq);
           if (!after)
             return;
           auto limit = query_int(ex, "limit", 100, 1, 1000);
           if (!limit)
             return;
           msg::events_request req;
           req.workflow_id = *id;
           req.after_seq = *after;
           req.limit = static_cast<int32_t>(*limit);
           api->ask<std::vector<msg::event_view>>(
             [ex, id = *id, after = *after](std::vector<msg::event_view>& evs) {
               boost::json::array events;
               events.reserve(evs.size());
               for (const auto& e : evs)
                 events.push_back(event_json(e));
               ex->respond_json(200, boost::json::object{
                                       {"workflowId", id},
                                       {"events", std::move(events)},
                                       {"next", evs.empty() ? after : evs.back().seq}});
             },
             [ex](caf::error& e) { ex->fail(e); }, events_atom_v, scoped(ex, req));
         }});
  // A stream starts once the api found the workflow in the principal's namespace (a read
  // of one event); the hub then reads its history for every subscriber alike.
  if (auto* hub = ctx.events)
    r.add({verb::get, "/api/workflow/{workflowId}/events/stream",
           "A workflow's history live, as Server-Sent Events, until its terminal event",
           {{"after",
             "start after this seq (when no Last-Event-ID header is sent; default 0)", false,
             "integer"}},
           body_kind::none, {},
           "text/event-stream: per event `id: seq`, `event: type`, `data: {\"seq\",\"at\","
           "\"type\",\"taskRef\",\"payload\"}`; resumes after the Last-Event-ID header; ends "
           "after WORKFLOW_COMPLETED, _FAILED, _TIMED_OUT or _TERMINATED; 204 when the "
           "history already ended there",
           "history", access::reader,
           [hub, api](const exchange_ptr& ex) {
             auto id = workflow_id_of(ex);
             if (!id)
               return;
             auto after = resume_point(ex);
             if (!after)
               return;
             // The event to resume after must exist: past the history's last event (of a
             // workflow that ended there, or any) the stream would wait for ever.
             msg::events_request probe;
             probe.workflow_id = *id;
             probe.after_seq = *after > 0 ? *after - 1 : 0;
             probe.limit = 1;
             api->ask<std::vector<msg::event_view>>(
               [hub, ex, id = *id, after = *after](std::vector<msg::event_view>& found) {
                 if (after > 0 && (found.empty() || found.front().seq != after)) {
                   std::string field =
                     ex->header("last-event-id").empty() ? "after" : "Last-Event-ID";
                   ex->fail(400, field + ": workflow " + id + " has no event "
                                   + std::to_string(after) + " to resume after",
                            field);
                   return;
                 }
                 hub->subscribe(ex, id, after);
               },
               [ex](caf::error& e) { ex->fail(e); }, events_atom_v, scoped(ex, probe));
           },
           true});
}

} // namespace nf::net::web
