#pragma once

// The relay of one partition: delivers the partition's "OutboxEvents" (I7) to
// the namespace's enabled "WebhookSinks" whose event-type filter matches, as an
// HTTP POST with `Idempotency-Key: <eventId>` and the JSON body
// {"eventId", "type", "workflowId", "payload"}. An event is published once every
// matching sink answered 2xx; otherwise the attempt is recorded with exponential
// backoff and jitter (relay.base_backoff_ms … relay.max_backoff_ms) and the event
// is dead-lettered after its last attempt (the smaller of relay.max_attempts and
// the failing sinks' "maxAttempts"). Each attempt is bounded by the smaller of
// relay.request_timeout_ms and the sink's "timeoutMs"; a batch's deliveries run
// concurrently. Protocol (docs/engine.md §2):
//   (outbox_atom)   hint: outbox rows were written in my partition.
// It also polls every relay.poll_interval_ms (I9).

#include <caf/fwd.hpp>

#include "actors/partition/context.hpp"

namespace nf::actors {

/// Spawns the relay of `ctx.shard` (detached: it owns a database connection and
/// blocks on its deliveries).
caf::actor spawn_relay(caf::actor_system& sys, const partition_context& ctx);

} // namespace nf::actors
