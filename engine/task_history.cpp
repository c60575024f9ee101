#include "engine/task_history.hpp"

#include <charconv>

#include <boost/json.hpp>

#include "engine/operations.hpp"
#include "flow/uuid.hpp"
#include "proto/errors.hpp"
#include "store/task_history.hpp"

namespace nf::engine {

namespace json = boost::json;

namespace {

// A cursor is "<scheduledAt in microseconds>:<task id>", the last row of the previous page.
std::string cursor_of(const store::task_history_row& t) {
  return std::to_string(t.scheduled_us) + ":" + t.id;
}

std::optional<store::task_history_key> parse_cursor(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos)
    return std::nullopt;
  store::task_history_key k;
  auto [end, ec] = std::from_chars(text.data(), text.data() + colon, k.scheduled_us);
  if (ec != std::errc{} || end != text.data() + colon || colon == 0)
    return std::nullopt;
  k.id = text.substr(colon + 1);
  if (!flow::is_uuid(k.id))
    return std::nullopt;
  return k;
}

json::value opt(const std::optional<int64_t>& x) {
  return x ? json::value(*x) : json::value(nullptr);
}

json::value opt(const std::optional<std::string>& x) {
  return x ? json::value(*x) : json::value(nullptr);
}

} // namespace

caf::expected<std::string> task_history(store::connection& conn,
                                        const msg::task_history_query& q) {
  if (q.task_def_name.empty())
    return make_error(errc::invalid, "name: expected a task definition's name");
  if (q.limit < 1 || q.limit > 1000)
    return make_error(errc::invalid, "limit: expected 1 … 1000, got " + std::to_string(q.limit));
  std::optional<store::task_history_key> before;
  if (!q.cursor.empty()) {
    before = parse_cursor(q.cursor);
    if (!before)
      return make_error(errc::invalid, "before: expected the \"next\" of a previous page, got \""
                                         + q.cursor.substr(0, 80) + "\"");
  }
  const namespace_id ns = namespace_of(q.namespace_id);
  auto rows = store::recent_task_executions(conn, ns, q.task_def_name, before, q.limit);
  if (!rows)
    return std::move(rows.error());
  json::array out;
  for (const auto& t : *rows)
    out.push_back(json::object{{"taskId", t.id},
                               {"workflowInstanceId", t.workflow_id},
                               {"referenceTaskName", t.ref},
                               {"iteration", t.iteration},
                               {"retryCount", t.attempt},
                               {"taskType", t.task_type},
                               {"status", t.status},
                               {"scheduledTime", t.scheduled_us / 1000},
                               {"startTime", opt(t.started_ms)},
                               {"endTime", opt(t.ended_ms)},
                               {"workerId", opt(t.worker_id)},
                               {"reasonForIncompletion", opt(t.reason)}});
  json::value next = nullptr;
  if (static_cast<int32_t>(rows->size()) == q.limit)
    next = cursor_of(rows->back());
  return json::serialize(json::object{
    {"taskDefName", q.task_def_name}, {"executions", std::move(out)}, {"next", std::move(next)}});
}

} // namespace nf::engine
