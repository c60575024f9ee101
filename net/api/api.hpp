#pragma once

// The api actor: the client protocol (proto/client_api.hpp) every node
// publishes. It checks each request (checks.hpp) before anything else; store-
// only operations go to a small pool of detached store workers, starts,
// completions, operator commands and polls to the node supervisor, which
// routes them to the owning decider or lessor (docs/engine.md §2).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/settings.hpp"
#include "net/api/checks.hpp"
#include "net/api/credentials.hpp"
#include "proto/client_api.hpp"

namespace nf::net {

struct api_options {
  std::string dsn;
  /// Routes start / complete / command / poll; without one those answer
  /// `unavailable`.
  caf::actor node;
  int store_workers = 2;          ///< db.connections_per_role
  int default_lease_seconds = 300; ///< lessor.lease_seconds
  int64_t node_silent_after_ms = 10000; ///< membership.lease_ms
  bool sink_allow_plain_http = false;    ///< relay.allow_plain_http (sinks it would refuse)
  check_limits limits;
  std::chrono::milliseconds request_timeout{30000}; ///< client.timeout_ms: node and store requests
  /// How often an events request with `wait_ms` re-reads the history: first
  /// after `events_poll_interval`, then twice as long each time nothing came,
  /// up to `events_max_poll_interval` (many idle followers stay cheap).
  std::chrono::milliseconds events_poll_interval{50};
  std::chrono::milliseconds events_max_poll_interval{500};
  /// Bounds on what the api holds for its clients (api.max_*): requests taken and not yet
  /// answered, polls open on the node and per queue, event reads waiting. Beyond each, a new
  /// request is refused at once as `unavailable`.
  size_t max_pending = 20000;
  size_t max_open_polls = 16384;
  size_t max_open_polls_per_queue = 4096;
  size_t max_event_waits = 4096;
  /// Checks the credential of every request from another process, and of every request
  /// another node forwards; null = none are checked (`--auth off`).
  std::shared_ptr<credential_checker> auth;
};

/// Options from validated settings.
api_options make_api_options(const config::values& settings, std::string dsn, caf::actor node);

/// Spawns the api actor and its store workers (stopped when it stops).
client_api spawn_api(caf::actor_system& sys, api_options opts);

/// Gives the api its node once the node exists (`nodeflow serve` publishes the
/// api first, so the node can be told the port it is reachable at).
void attach_node(const client_api& api, caf::actor node);

} // namespace nf::net
