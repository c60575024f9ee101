#pragma once

// Managing a namespace's webhook sinks (msg::sink_request): the one implementation behind
// `/api/webhooks/sinks` (through the api actor) and `nodeflow sinks` (straight against the
// database). It checks what a sink may be (an http(s) URL without credentials, event types
// the outbox carries, attempts and timeout in the relay's own bounds, a signing secret of at
// least 16 characters), writes it with its audit record in one transaction
// (sinks.create|update|remove, target "sink:<id>"), and answers JSON without the secret.

#include <string>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// `r.namespace_id` holds the namespace's id (the api actor resolved its name; empty =
/// "default").
/// `allow_plain_http` (relay.allow_plain_http): a sink the relay would refuse to deliver to
/// (plain http:// to a host other than loopback) is refused when it is created or changed.
caf::expected<std::string> webhook_sinks(store::connection& conn, const msg::sink_request& r,
                                         bool allow_plain_http = false);

} // namespace nf::engine
