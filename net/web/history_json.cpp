#include "net/web/history_json.hpp"

#include <boost/json.hpp>

#include "flow/status.hpp"

namespace nf::net::web {

boost::json::object event_json(const msg::event_view& e) {
  boost::json::object o;
  o["seq"] = e.seq;
  o["at"] = e.at_ms;
  o["type"] = e.type;
  o["taskRef"] = e.task_ref.empty() ? boost::json::value{} : boost::json::value(e.task_ref);
  // The store hands out JSONB text: always valid JSON, kept as a string should it not be.
  boost::json::error_code ec;
  auto payload = boost::json::parse(e.payload_json, ec);
  o["payload"] = ec ? boost::json::value(e.payload_json) : std::move(payload);
  return o;
}

std::string sse_frame(const msg::event_view& e) {
  // serialize() escapes every control character, so the data stays on one line.
  std::string out = "id: " + std::to_string(e.seq) + "\nevent: " + e.type + "\ndata: ";
  out += boost::json::serialize(event_json(e));
  out += "\n\n";
  return out;
}

bool ends_history(std::string_view type) {
  constexpr std::string_view prefix = "WORKFLOW_";
  if (type.substr(0, prefix.size()) != prefix)
    return false;
  auto status = flow::parse_workflow_status(type.substr(prefix.size()));
  return status && flow::is_terminal(*status);
}

} // namespace nf::net::web
