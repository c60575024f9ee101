#pragma once

// Signals: a named JSON payload delivered to a running workflow (a WAIT task
// waiting for that name completes with the first one it has not consumed).

#include <string>

#include <boost/json/value.hpp>
#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

/// Appends a `SIGNAL_RECEIVED` event whose payload is `{"name": name,
/// "payload": payload}` (gap-free seq, with its outbox row) and wakes the
/// workflow's decider ("DecideQueues" upsert, I2), in one transaction. The
/// decider reads signals back from these events. A workflow that does not
/// exist is `not_found`; one that has ended (not RUNNING or PAUSED) is
/// `invalid` and nothing is written.
caf::expected<void> deliver_signal(connection& conn, const workflow_id& id,
                                   const std::string& name, const boost::json::value& payload);

} // namespace nf::store
