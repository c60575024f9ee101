#include "engine/relay/delivery.hpp"

#include <algorithm>

#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>

namespace nf::engine {

namespace {

std::string quoted(const std::string& s) {
  return boost::json::serialize(boost::json::string_view{s.data(), s.size()});
}

} // namespace

std::string event_body(const store::outbox_event& e) {
  // "payload" is jsonb text from the database, already valid JSON: spliced, not re-parsed.
  std::string body = "{\"eventId\":" + quoted(e.event.str()) + ",\"type\":" + quoted(e.event_type)
                     + ",\"workflowId\":" + (e.workflow ? quoted(e.workflow->str()) : "null")
                     + ",\"payload\":" + (e.payload.empty() ? "null" : e.payload) + "}";
  return body;
}

delivery_plan plan_deliveries(const std::vector<store::outbox_event>& events,
                              const std::vector<store::webhook_sink>& sinks,
                              const delivery_limits& limits) {
  delivery_plan plan;
  plan.requests_of.resize(events.size());
  plan.sinks_of.resize(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    std::string body;
    for (const auto& s : sinks) {
      if (s.ns != e.ns || !s.wants(e.event_type))
        continue;
      if (body.empty())
        body = event_body(e);
      http::request r;
      r.method = "POST";
      r.url = s.url;
      r.headers = {{"Content-Type", "application/json"}, {"Idempotency-Key", e.event.str()}};
      r.body = body;
      auto timeout = std::chrono::milliseconds{
        std::min<int64_t>(s.timeout_ms, limits.request_timeout_ms)};
      r.connect_timeout = timeout;
      r.read_timeout = timeout;
      plan.requests_of[i].push_back(plan.requests.size());
      plan.sinks_of[i].push_back(&s);
      plan.requests.push_back(std::move(r));
    }
  }
  return plan;
}

delivery_verdict judge_deliveries(const std::vector<store::outbox_event>& events,
                                  const delivery_plan& plan,
                                  const std::vector<http::outcome>& outcomes,
                                  const delivery_limits& limits) {
  delivery_verdict v;
  for (size_t i = 0; i < events.size(); ++i) {
    std::string error;
    int max_attempts = limits.max_attempts;
    const auto& reqs = plan.requests_of[i];
    for (size_t k = 0; k < reqs.size(); ++k) {
      const auto& o = outcomes[reqs[k]];
      const auto* sink = plan.sinks_of[i][k];
      std::string why;
      if (!o.resp)
        why = o.error;
      else if (o.resp->status < 200 || o.resp->status > 299)
        why = "HTTP " + std::to_string(o.resp->status) + " " + o.resp->reason;
      if (why.empty())
        continue;
      // A sink the egress policy refuses is dead-lettered at once: no retry reaches it.
      max_attempts = o.refused ? 1 : std::min(max_attempts, static_cast<int>(sink->max_attempts));
      if (error.empty())
        error = "sink " + sink->url + ": " + why;
    }
    // No matching sink: nothing to deliver, the event is done.
    if (error.empty())
      v.published.push_back(events[i].id);
    else
      v.failed[std::max(1, max_attempts)].push_back(store::delivery_failure{events[i].id, error});
  }
  return v;
}

} // namespace nf::engine
