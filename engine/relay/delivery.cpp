#include "engine/relay/delivery.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "engine/relay/signature.hpp"
#include "flow/ascii.hpp"
#include "store/db_clock.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>

namespace nf::engine {

namespace {

std::string quoted(const std::string& s) {
  return boost::json::serialize(boost::json::string_view{s.data(), s.size()});
}

bool loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

} // namespace

std::string sink_url_refusal(const std::string& url, bool allow_plain_http) {
  auto scheme = flow::ascii_lower(url.substr(0, 8));
  if (scheme == "https://" || allow_plain_http)
    return {};
  if (scheme.rfind("http://", 0) != 0)
    return "expected an https:// URL";
  std::string error;
  auto parts = http::parse_url(url, error);
  if (!parts)
    return error;
  if (loopback_host(flow::ascii_lower(parts->host)))
    return {};
  return "plain http:// to a host other than loopback is refused (use https://, or set "
         "relay.allow_plain_http)";
}

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
  // Postgres's clock, so every node signs by one clock whichever node's own is off.
  int64_t now_s = limits.now_s != 0 ? limits.now_s : db_clock_now_ms() / 1000;
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
      if (s.signing_secret) {
        r.headers.emplace_back(timestamp_header, std::to_string(now_s));
        r.headers.emplace_back(signature_header, sign_delivery(*s.signing_secret, now_s, body));
      }
      auto timeout = std::chrono::milliseconds{
        std::min<int64_t>(s.timeout_ms, limits.request_timeout_ms)};
      r.connect_timeout = timeout;
      r.read_timeout = timeout;
      plan.requests_of[i].push_back(plan.requests.size());
      plan.sinks_of[i].push_back(&s);
      plan.refusals.push_back(sink_url_refusal(s.url, limits.allow_plain_http));
      plan.requests.push_back(std::move(r));
    }
  }
  return plan;
}

std::vector<http::outcome> perform_deliveries(http::port& port, const delivery_plan& plan,
                                              size_t max_in_flight) {
  std::vector<http::request> sent;
  std::vector<size_t> sent_at;
  for (size_t k = 0; k < plan.requests.size(); ++k)
    if (plan.refusals[k].empty()) {
      sent.push_back(plan.requests[k]);
      sent_at.push_back(k);
    }
  std::vector<http::outcome> out(plan.requests.size());
  for (size_t k = 0; k < plan.requests.size(); ++k)
    out[k].error = plan.refusals[k];
  if (!sent.empty()) {
    auto answers = port.perform_all(sent, max_in_flight);
    for (size_t j = 0; j < sent_at.size(); ++j)
      out[sent_at[j]] = std::move(answers[j]);
  }
  return out;
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
