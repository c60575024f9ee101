#include "net/web/task_handle.hpp"

#include <vector>

#include "flow/uuid.hpp"

namespace nf::net::web {

std::string format_task_handle(const std::string& task, const std::string& workflow,
                               const std::string& lease) {
  return task + '.' + workflow + '.' + lease;
}

std::optional<task_handle> parse_task_handle(const std::string& text, std::string& why) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() < 4) {
    auto dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  bool uuids = !parts.empty();
  for (const auto& p : parts)
    uuids = uuids && flow::is_uuid(p);
  if (!uuids || parts.size() < 2 || parts.size() > 3) {
    why = "expected the taskId a poll answered (<taskId>.<workflowId>.<lease>), got \"" + text
          + "\"";
    if (parts.size() == 1 && flow::is_uuid(parts[0]))
      why += ": a bare task id names no lease (send the taskId the poll answered, as it "
             "came); a WAIT or HUMAN task is completed with "
             "POST /api/tasks/{workflowId}/{taskRefName}/{status}";
    return std::nullopt;
  }
  return task_handle{parts[0], parts[1], parts.size() == 3 ? parts[2] : std::string{}};
}

} // namespace nf::net::web
