#include "engine/poll_data.hpp"

#include <boost/json.hpp>

#include "engine/operations.hpp"
#include "store/poll_data.hpp"

namespace nf::engine {

namespace {

// More rows than a namespace has workers times task types in any real deployment; the
// answer stays bounded all the same.
constexpr int64_t max_rows = 10000;

} // namespace

caf::expected<void> record_polls(store::connection& conn, const std::vector<msg::poll_seen>& seen) {
  std::vector<store::poll_seen> rows;
  rows.reserve(seen.size());
  for (const auto& s : seen)
    rows.push_back({namespace_of(s.namespace_id), s.task_type, s.domain, s.worker_id, s.age_ms});
  return store::record_polls(conn, std::move(rows));
}

caf::expected<std::string> poll_data(store::connection& conn, const msg::poll_data_query& q,
                                     const std::vector<msg::poll_seen>& pending) {
  if (auto r = record_polls(conn, pending); !r)
    return std::move(r.error());
  auto rows = store::read_poll_data(conn, namespace_of(q.namespace_id), q.task_type, max_rows);
  if (!rows)
    return std::move(rows.error());
  boost::json::array out;
  out.reserve(rows->size());
  for (const auto& r : *rows)
    out.push_back(boost::json::object{
      {"queueName", r.task_type},
      {"domain", r.domain.empty() ? "DEFAULT" : r.domain},
      {"workerId", r.worker_id.empty() ? boost::json::value(nullptr) : boost::json::value(r.worker_id)},
      {"lastPollTime", r.last_poll_ms}});
  return boost::json::serialize(out);
}

} // namespace nf::engine
