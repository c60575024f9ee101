#pragma once

// Conductor's poll data (GET /api/tasks/queue/polldata): when each worker last polled each
// task type. The api notes polls and hands them here every few seconds (record_polls), and
// hands what it noted since with each read, so a node's own polls show at once and every
// other node's within its write interval (store/poll_data.hpp).

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// Writes the polls an api noted (each `namespace_id` an id).
caf::expected<void> record_polls(store::connection& conn, const std::vector<msg::poll_seen>& seen);

/// Writes `pending`, then answers `q`'s namespace's poll data (`q.namespace_id` its id) as
/// Conductor's PollData list: `[{"queueName","domain","workerId","lastPollTime"}]`, domain
/// "DEFAULT" for polls that named none and workerId null for polls that named no worker.
caf::expected<std::string> poll_data(store::connection& conn, const msg::poll_data_query& q,
                                     const std::vector<msg::poll_seen>& pending);

} // namespace nf::engine
