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
};

struct delivery_plan {
  std::vector<http::request> requests;
  std::vector<std::vector<size_t>> requests_of;                  ///< per event
  std::vector<std::vector<const store::webhook_sink*>> sinks_of; ///< per event, same order
};

/// The JSON body of an event's POST: {"eventId", "type", "workflowId", "payload"}.
std::string event_body(const store::outbox_event& e);

delivery_plan plan_deliveries(const std::vector<store::outbox_event>& events,
                              const std::vector<store::webhook_sink>& sinks,
                              const delivery_limits& limits);

struct delivery_verdict {
  std::vector<int64_t> published;
  /// Failures grouped by the attempt count that dead-letters them.
  std::map<int, std::vector<store::delivery_failure>> failed;
};

delivery_verdict judge_deliveries(const std::vector<store::outbox_event>& events,
                                  const delivery_plan& plan,
                                  const std::vector<http::outcome>& outcomes,
                                  const delivery_limits& limits);

} // namespace nf::engine
