#pragma once

// The outbox relay of a node: delivers the "OutboxEvents" (I7) of every
// partition whose relay joined it, to the namespace's enabled "WebhookSinks"
// whose event-type filter matches, as an HTTP POST with
// `Idempotency-Key: <eventId>` and the JSON body
// {"eventId", "type", "workflowId", "payload"}. An event is published once every
// matching sink answered 2xx; otherwise the attempt is recorded with exponential
// backoff and jitter (relay.base_backoff_ms … relay.max_backoff_ms) and the event
// is dead-lettered after its last attempt (the smaller of relay.max_attempts and
// the failing sinks' "maxAttempts"). Each attempt is bounded by the smaller of
// relay.request_timeout_ms and the sink's "timeoutMs"; a batch's deliveries run
// concurrently. One claim covers every served shard (an index range scan per
// shard), so sixteen partitions cost one round, not sixteen. Protocol:
//   (join_atom, int16_t shard)   from a partition's relay: serve `shard` while it lives;
//   (join_atom, int16_t shard, int64_t epoch, std::string node)
//       the same, its claims fenced at `epoch` (store/partition_fence.hpp);
//   (outbox_atom)                hint: outbox rows were written in a served shard.
// It also polls every relay.poll_interval_ms (I9).

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "actors/relay/sink_presence.hpp"
#include "config/settings.hpp"
#include "engine/http/request.hpp"

namespace nf::actors {

struct outbox_relay_context {
  std::string dsn;  ///< for the relay's own connection
  std::shared_ptr<http::port> http;  ///< where deliveries go out
  /// Told after every read of the sinks whether there are any (null: nobody asks).
  std::shared_ptr<sink_presence> presence;
  config::values settings = config::values::defaults();
};

/// Spawns a node's outbox relay (detached: it owns a database connection and
/// blocks on its deliveries).
caf::actor spawn_outbox_relay(caf::actor_system& sys, const outbox_relay_context& ctx);

} // namespace nf::actors
