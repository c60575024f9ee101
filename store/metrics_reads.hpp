#pragma once

// What /metrics reads from the store when it is scraped: the task queues' depths and their
// oldest ready task's age, the pending decisions and the oldest one's age, the outbox's
// backlog and dead letters. One statement, every part an index probe or a capped index
// scan, so a scrape of a node with a backlog costs a bounded read, not a count of it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::store {

/// Counts stop here: a larger backlog shows as this many.
constexpr int64_t metrics_count_cap = 100000;
/// Queues read at most (in name order).
constexpr int64_t metrics_max_queues = 1000;

struct queue_gauge {
  std::string queue;
  int64_t ready = 0;   ///< unleased rows (capped)
  int64_t leased = 0;  ///< leased rows (capped)
  /// Age of the ready row enqueued first (lowest id), milliseconds; none when none is ready.
  std::optional<int64_t> oldest_ready_ms;
};

struct store_gauges {
  std::vector<queue_gauge> queues;  ///< queues with rows, by name
  int64_t pending_decisions = 0;    ///< "DecideQueues" rows (capped)
  /// Age of the oldest pending decision ("enqueuedAt"), milliseconds; none when none waits.
  std::optional<int64_t> oldest_pending_ms;
  int64_t outbox_backlog = 0;  ///< events neither published nor dead-lettered (capped)
  int64_t dead_letters = 0;    ///< (capped)
};

caf::expected<store_gauges> read_store_gauges(connection& conn);

/// The statement, for EXPLAIN tests.
const statement& store_gauges_statement();

} // namespace nf::store
