#pragma once

// The history's wake-up line: one connection that LISTENs on the channel the
// "WorkflowEvents" trigger notifies (migrations 0009 and 0021, payload `<workflowId>:<seq>`).
// A notification is only a hint that rows exist; whoever listens reads the rows themselves
// (store::read_events), so a lost or empty payload costs a read, never an event.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// What a notification names: the workflow that got an event, and the event's seq.
struct event_notice {
  std::string workflow_id;
  int64_t seq = 0;
};

/// `<uuid>:<seq>`; nullopt for anything else (pg_notify may send an empty payload, which
/// means "something changed" and asks the listener to re-read what it follows).
std::optional<event_notice> parse_event_notice(std::string_view payload);

class event_notifications {
public:
  /// Connects and LISTENs.
  static caf::expected<event_notifications> open(const std::string& dsn);

  /// Waits until a notification arrives, `wake_fd` (when >= 0) becomes readable, or `timeout`
  /// passes; answers the payloads received, in arrival order (often none). An error means
  /// the connection is lost: open a new one, and treat every notification as missed.
  caf::expected<std::vector<std::string>> wait(std::chrono::milliseconds timeout,
                                               int wake_fd = -1);

  /// The server's process id, e.g. for pg_stat_activity.
  int backend_pid() const { return conn_.backend_pid(); }

private:
  explicit event_notifications(connection c) : conn_(std::move(c)) {}
  caf::expected<std::vector<std::string>> drain();

  connection conn_;
};

} // namespace nf::store
