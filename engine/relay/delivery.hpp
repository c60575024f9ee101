#pragma once

// What the relay sends for a batch of outbox events and what it concludes from
// the answers, without I/O: one POST per (event, matching sink); an event is
// published when every one of its POSTs got a 2xx, else it failed with the
// first error, and dead-letters after the fewest attempts any failing sink allows (at once
// when the egress policy refused a sink).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/http/request.hpp"
#include "store/outbox.hpp"

namespace nf::engine {

struct delivery_limits {
  int64_t request_timeout_ms = 5000; ///< relay.request_timeout_ms: caps a sink's "timeoutMs"
  int max_attempts = 10;             ///< relay.max_attempts: caps a sink's "maxAttempts"
  bool allow_plain_http = false;     ///< relay.allow_plain_http: http:// to any host
  int64_t now_s = 0;                 ///< the signatures' timestamp; 0 = the system clock
};

struct delivery_plan {
  std::vector<http::request> requests;
  /// Per request: why it is not sent (a plain-http sink), or empty.
  std::vector<std::string> refusals;
  std::vector<std::vector<size_t>> requests_of;                  ///< per event
  std::vector<std::vector<const store::webhook_sink*>> sinks_of; ///< per event, same order
};

/// The JSON body of an event's POST: {"eventId", "type", "workflowId", "payload"}.
std::string event_body(const store::outbox_event& e);

/// Why the relay will not POST to `url`, or empty: events carry workflow data, so they go
/// over https://, or plain http:// to a loopback host (a receiver on the same machine, as
/// in tests), or anywhere when `allow_plain_http`.
std::string sink_url_refusal(const std::string& url, bool allow_plain_http);

/// One POST per (event, matching sink), signed (signature.hpp) when the sink has a
/// "signingSecret".
delivery_plan plan_deliveries(const std::vector<store::outbox_event>& events,
                              const std::vector<store::webhook_sink>& sinks,
                              const delivery_limits& limits);

struct delivery_verdict {
  std::vector<int64_t> published;
  /// Failures grouped by the attempt count that dead-letters them.
  std::map<int, std::vector<store::delivery_failure>> failed;
};

/// Sends the plan's requests through `port`, except the refused ones, whose outcome is
/// their refusal. Entry i answers plan.requests[i].
std::vector<http::outcome> perform_deliveries(http::port& port, const delivery_plan& plan,
                                              size_t max_in_flight);

delivery_verdict judge_deliveries(const std::vector<store::outbox_event>& events,
                                  const delivery_plan& plan,
                                  const std::vector<http::outcome>& outcomes,
                                  const delivery_limits& limits);

} // namespace nf::engine
