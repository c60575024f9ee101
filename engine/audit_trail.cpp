#include "engine/audit_trail.hpp"

#include <boost/json.hpp>

#include "flow/uuid.hpp"
#include "proto/errors.hpp"

namespace nf::engine {

namespace json = boost::json;

store::audit_event audit_event(const std::string& actor, const std::string& origin,
                               std::string action, std::string target,
                               json::object details) {
  store::audit_event e;
  e.actor = actor.empty() ? "anonymous" : actor;
  e.origin = origin.empty() ? "local" : origin;
  e.action = std::move(action);
  e.target = std::move(target);
  e.details = std::move(details);
  return e;
}

caf::expected<std::string> read_audit(store::connection& conn, const msg::audit_query& q) {
  store::audit_query sq;
  if (q.since_ms > 0)
    sq.since_ms = q.since_ms;
  if (!q.action.empty())
    sq.action = q.action;
  if (!q.cursor.empty()) {
    if (!flow::is_uuid(q.cursor))
      return nf::make_error(nf::errc::invalid,
                            "cursor: expected the nextCursor of a previous page, got \""
                              + q.cursor + "\"");
    sq.after = q.cursor;
  }
  sq.limit = q.limit;
  if (!q.namespace_id.empty())
    sq.namespace_name = q.namespace_id;
  auto page = store::read_audit(conn, sq);
  if (!page)
    return std::move(page.error());
  json::array events;
  for (const auto& r : page->rows) {
    json::error_code ec;
    auto details = json::parse(r.details, ec);
    events.push_back(json::object{
      {"id", r.id},
      {"at", r.at_ms},
      {"actor", r.actor},
      {"origin", r.origin},
      {"namespace", r.ns ? json::value(*r.ns) : json::value(nullptr)},
      {"action", r.action},
      {"target", r.target},
      {"details", ec ? json::value(r.details) : std::move(details)},
    });
  }
  return json::serialize(json::object{
    {"events", std::move(events)},
    {"nextCursor", page->next ? json::value(*page->next) : json::value(nullptr)}});
}

} // namespace nf::engine
