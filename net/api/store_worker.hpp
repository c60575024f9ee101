#pragma once

// A detached actor owning one database connection, running the api's
// store-only operations (store_ops.hpp) one at a time. The api actor keeps a
// small pool of them (`db.connections_per_role`).

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "net/api/mailbox_clock.hpp"

namespace nf::net {

struct store_worker_options {
  std::string dsn;
  int default_lease_seconds = 300; ///< lessor.lease_seconds: heartbeats of tasks without a definition
  /// membership.lease_ms: a node silent longer shows as not alive in the status.
  int64_t node_silent_after_ms = 10000;
  /// When the api sent each request (null: not measured).
  std::shared_ptr<mailbox_clock> waits;
  bool sink_allow_plain_http = false; ///< relay.allow_plain_http: sinks the relay would refuse
};

/// Messages (replies as in client_api.hpp): register_atom + msg::definitions_registration
/// (the api turns bare text into one), definitions_atom, audit_atom, get_atom, search_atom,
/// count_atom, signal_atom, heartbeat_atom, events_atom (no wait), status_atom (the store part),
/// deadletter_atom, metrics_atom, schedules_atom,
/// vectors_atom, poll_data_atom (the polls the api noted; a poll data query with those
/// noted since). A lost connection is reopened on the next request; one whose reconnect
/// fails answers `unavailable`.
caf::actor spawn_store_worker(caf::actor_system& sys, store_worker_options opts);

} // namespace nf::net
