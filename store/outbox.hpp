#pragma once

// "OutboxEvents": the relay's side of the transactional outbox (I7, DESIGN §3 step 6).
// Events are written by the transactions that cause them (see task_transitions.hpp);
// here they are claimed, marked published, retried with backoff, dead-lettered and
// replayed. Delivery is at least once; every event keeps its stable "eventId" for
// consumer dedupe, across retries and replays.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/audit.hpp"
#include "store/ids.hpp"
#include "store/partition_fence.hpp"
#include "store/pg/connection.hpp"

namespace nf::store {

struct outbox_event {
  int64_t id = 0;        ///< claim order; the handle for publish/failure calls
  event_id event;        ///< stable "eventId" (the consumer's dedupe key)
  int16_t shard = 0;
  namespace_id ns;
  std::optional<workflow_id> workflow;
  std::string event_type;
  std::string payload;   ///< JSON text
  int32_t attempts = 0;  ///< failed deliveries so far
  std::optional<std::string> last_error;
};

struct outbox_claim {
  /// The relay's partitions, taken in this order when the batch cannot hold all their
  /// due events (rotate it for fairness); empty = every shard, oldest first.
  std::vector<shard_id> shards;
  int limit = 100;              ///< 1 … 10000
  int visibility_seconds = 30;  ///< > 0: how long the claim hides the events from other relays
  /// `shards` at the epochs the relay holds them at: the claim is refused (NF002, nothing
  /// claimed) once one moved on (store/partition_fence.hpp). Empty: none.
  partition_fence fence;
};

/// Claims deliverable events (oldest due first, FOR UPDATE SKIP LOCKED on the deliverable
/// index) and hides them for `visibility_seconds` by moving "nextAttemptAt" forward, in
/// one short transaction: delivery happens outside any transaction, and a relay that dies
/// mid-delivery only delays its events until they become visible again.
caf::expected<std::vector<outbox_event>> claim_outbox(connection& conn, const outbox_claim& c);

/// Marks delivered events published; returns how many were still unpublished.
caf::expected<int64_t> mark_published(connection& conn, const std::vector<int64_t>& ids);

/// With no sink to deliver to, a claim would only be followed by mark_published: this
/// marks up to `c.limit` deliverable events of `c.shards` published in one statement
/// (one row version and one transaction per event fewer). Returns how many.
caf::expected<int64_t> publish_undeliverable(connection& conn, const outbox_claim& c);

struct delivery_failure {
  int64_t id = 0;
  std::string error;
};

/// Retry schedule, computed by the server: the n-th failure (n = 1, 2, …) waits
/// min(max_ms, base_ms · 2^(n-1) · (1 + jitter · random())); the `max_attempts`-th failure
/// dead-letters the event instead.
struct backoff_policy {
  int64_t base_ms = 1000;     ///< >= 1
  int64_t max_ms = 3600000;   ///< >= base_ms
  double jitter = 0.2;        ///< 0 <= jitter < 1 (keeps successive waits growing)
  int max_attempts = 10;      ///< >= 1
};

struct failure_outcome {
  int64_t id = 0;
  int32_t attempts = 0;
  bool dead_lettered = false;
  int64_t retry_in_ms = 0;    ///< until "nextAttemptAt" (0 when dead-lettered)
};

/// Records failed deliveries (one statement): "attempts" + 1, "lastError", then either the
/// next "nextAttemptAt" or "deadLetteredAt". Events already published or dead-lettered
/// are left alone (absent from the answer).
caf::expected<std::vector<failure_outcome>>
record_failures(connection& conn, const std::vector<delivery_failure>& failures,
                const backoff_policy& policy);

/// Keyset position in the dead-letter list ("deadLetteredAt", "id").
struct dead_letter_cursor {
  std::string dead_lettered_at; ///< as the server printed it (full precision)
  int64_t id = 0;
};

struct dead_letter_page {
  std::vector<outbox_event> events;
  std::optional<dead_letter_cursor> next; ///< absent on the last page
};

/// Dead letters of namespace `ns`, oldest first, `limit` (1 … 1000) per page, after `after`
/// if given. Every dead-letter call sees only its namespace's events.
caf::expected<dead_letter_page>
list_dead_letters(connection& conn, const std::optional<dead_letter_cursor>& after, int limit,
                  const namespace_id& ns = default_namespace);

/// Makes the given dead letters deliverable again at once ("attempts" reset, same
/// "eventId"); returns how many were dead letters.
caf::expected<int64_t> replay_dead_letters(connection& conn, const std::vector<int64_t>& ids,
                                           const namespace_id& ns = default_namespace);

/// Replays the given dead letters, or every one when `ids` is empty, and records the replay
/// (`audit`, with `{"replayed": n}` added to its details) in one transaction.
caf::expected<int64_t> replay_dead_letters_audited(connection& conn,
                                                   const std::vector<int64_t>& ids,
                                                   const namespace_id& ns, audit_event audit);

/// Replays every event dead-lettered before this call, `batch` (1 … 10000) rows per
/// transaction; returns how many.
caf::expected<int64_t> replay_all_dead_letters(connection& conn, int batch = 1000,
                                               const namespace_id& ns = default_namespace);

/// Retention: deletes the events published more than `retention_s` seconds ago, walking
/// the table in key order `batch` (1 … 10000) rows per statement (each its own short
/// transaction), from the oldest row up to the first one created within the horizon, or
/// `max_rows` rows read. Deliverable and dead-lettered events are kept whatever their age.
/// Returns how many were deleted.
caf::expected<int64_t> prune_published_outbox(connection& conn, int64_t retention_s,
                                              int batch = 10000, int64_t max_rows = 10000000);

/// Where the relay delivers a namespace's events ("WebhookSinks").
struct webhook_sink {
  std::string id;
  namespace_id ns;
  std::string url;
  std::optional<std::vector<std::string>> event_types; ///< absent = every type
  int32_t max_attempts = 10;
  int32_t timeout_ms = 5000;
  /// "signingSecret": the HMAC-SHA256 key of the delivery's signature; absent = unsigned.
  std::optional<std::string> signing_secret;

  bool wants(const std::string& event_type) const;
};

/// Every enabled sink of every namespace (a small, cold table the relay caches).
caf::expected<std::vector<webhook_sink>> load_webhook_sinks(connection& conn);

} // namespace nf::store
