#pragma once

// The store's part of /metrics (store/metrics_reads.hpp) as JSON, what the api's store
// workers answer a metrics request with; the HTTP route renders it next to the registry.
// `{"cap":n,"queues":[{"name","ready","leased","oldestReadyAgeMs"|null}],
//   "decide":{"pending","oldestAgeMs"|null},"outbox":{"backlog","deadLetters"}}`.

#include <string>

#include <caf/expected.hpp>

#include "store/pg/connection.hpp"

namespace nf::engine {

caf::expected<std::string> store_metrics(store::connection& conn);

} // namespace nf::engine
