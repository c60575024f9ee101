#include "engine/metrics/store_part.hpp"

#include <boost/json.hpp>

#include "store/metrics_reads.hpp"

namespace nf::engine {

namespace {

boost::json::value or_null(const std::optional<int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

} // namespace

caf::expected<std::string> store_metrics(store::connection& conn) {
  auto g = store::read_store_gauges(conn);
  if (!g)
    return std::move(g.error());
  boost::json::array queues;
  for (const auto& q : g->queues)
    queues.push_back(boost::json::object{{"name", q.queue},
                                         {"ready", q.ready},
                                         {"leased", q.leased},
                                         {"oldestReadyAgeMs", or_null(q.oldest_ready_ms)}});
  return boost::json::serialize(boost::json::object{
    {"cap", store::metrics_count_cap},
    {"queues", std::move(queues)},
    {"decide", boost::json::object{{"pending", g->pending_decisions},
                                   {"oldestAgeMs", or_null(g->oldest_pending_ms)}}},
    {"outbox", boost::json::object{{"backlog", g->outbox_backlog},
                                   {"deadLetters", g->dead_letters}}}});
}

} // namespace nf::engine
