#pragma once

// Input checks for every client-protocol request, run by the api actor before
// anything is forwarded or written (I11). Pure: no database, no actors. Each
// returns a default-constructed (empty) caf::error when the request is
// acceptable, else an `invalid` store error listing every problem as
// `<field>: <what was expected>, got <what came>`.

#include <cstdint>

#include <caf/error.hpp>

#include "proto/messages.hpp"

namespace nf::net {

/// The bounds some checks need from the node's configuration. The most tasks one
/// poll may ask for (and so one report batch may carry) is store::max_lease_tasks. A
/// payload (a workflow input, a task output, a signal payload) longer than
/// max_payload_bytes is refused as `<field>: expected at most N bytes
/// (payloads.max_bytes), got M`, the same on both doors.
struct check_limits {
  int64_t max_poll_timeout_ms = 60000;    ///< lessor.max_poll_timeout_ms
  int64_t max_events_wait_ms = 60000;     ///< longest wait of an events request
  int64_t max_payload_bytes = 8388608;    ///< payloads.max_bytes
};

caf::error check(const msg::start_request& r, const check_limits& limits);
caf::error check(const msg::workflow_query& r);
caf::error check(const msg::search_request& r);
caf::error check(const msg::workflow_command& r, const check_limits& limits);
/// A workflow_command with op "remove": the workflow's id, a reason at most; nothing a
/// removal would not use.
caf::error check_removal(const msg::workflow_command& r);
caf::error check(const msg::signal_request& r, const check_limits& limits);
caf::error check(const msg::poll_request& r, const check_limits& limits);
caf::error check(const msg::task_result& r, const check_limits& limits);
/// A batch of reports: at most as many results as one poll may lease (each result is
/// checked on its own, and rejected alone).
caf::error check_report_count(size_t count);
caf::error check(const msg::heartbeat_request& r);
caf::error check(const msg::task_progress& r, const check_limits& limits);
caf::error check(const msg::task_ref_update& r, const check_limits& limits);
caf::error check(const msg::events_request& r, const check_limits& limits);
caf::error check(const msg::deadletter_request& r);
caf::error check(const msg::definitions_query& r);
caf::error check(const msg::namespace_request& r);
caf::error check(const msg::sink_request& r);
caf::error check(const msg::task_history_query& q);
caf::error check(const msg::poll_data_query& q);
caf::error check(const msg::schedule_request& r);
/// Definitions text: must be non-empty JSON (the store worker checks the rest).
caf::error check_definitions_text(std::string_view text);
caf::error check(const msg::audit_query& r);

} // namespace nf::net
