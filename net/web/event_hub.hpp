#pragma once

// The live history streams of a node (`GET /api/workflow/{id}/events/stream`). One thread
// and ONE `LISTEN` connection per node, whatever the number of streams: the events table's
// trigger notifies `<workflowId>:<seq>` (store/event_notifications.hpp), and the hub reads
// each woken workflow's new events once, from its own connection, for all of that
// workflow's subscribers, then writes each of them the events it has not seen. A
// notification is only a hint: the table is read by seq, so a lost, late or empty
// notification costs a read and never an event, and after the LISTEN connection is
// (re)opened every followed workflow is read again. No subscriber polls.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "net/web/exchange.hpp"

namespace nf::net::web {

struct event_hub_options {
  std::string dsn;
  /// Streams served at once; beyond: 503 with Retry-After (http.max_event_streams).
  size_t max_streams = 10000;
  /// A keep-alive comment this often, so proxies keep idle streams (http.event_stream_ping_s).
  std::chrono::milliseconds ping_interval{15000};
  /// Before opening a lost connection again, or reading again after a failed read.
  std::chrono::milliseconds retry_delay{1000};
};

class event_hub {
public:
  explicit event_hub(event_hub_options opts);
  ~event_hub();
  event_hub(const event_hub&) = delete;
  event_hub& operator=(const event_hub&) = delete;

  /// Starts the hub's thread (it opens its connections itself, and again when lost).
  void start();
  /// Ends every stream and joins the thread.
  void stop();

  /// Takes over `ex`: 503 beyond max_streams, 404 for an unknown workflow, 204 when the
  /// history ended at `after` (a client resuming after the last event: the SSE answer that
  /// tells it to stop reconnecting); otherwise opens the stream, writes every event with
  /// seq > `after`, each once and in order, and ends it after the workflow's terminal event.
  /// `workflow_id` must already be a well-formed UUID.
  void subscribe(const exchange_ptr& ex, std::string workflow_id, int64_t after);

  /// Streams open or about to open.
  size_t streams() const;

private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace nf::net::web
