#include "engine/workflow_removal.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "engine/audit_trail.hpp"
#include "engine/operations.hpp"
#include "store/workflow_removal.hpp"

namespace nf::engine {

caf::expected<std::string> remove_workflow(store::connection& conn, const msg::workflow_command& c) {
  // The store finds the workflow in its namespace only (another namespace's is as missing as
  // one that never was), and a retry by the claim of its request id.
  boost::json::object details;
  if (!c.reason.empty())
    details["reason"] = c.reason;
  boost::json::object answer{{"workflowId", c.workflow_id}, {"removed", true}};
  auto removed = store::remove_workflow(
    conn, workflow_id{c.workflow_id}, namespace_of(c.namespace_id),
    audit_event(c.actor, c.origin, "workflow.remove", c.workflow_id, std::move(details)),
    c.request_id, answer);
  if (!removed)
    return std::move(removed.error());
  // A retry is answered as the first request was, and deletes nothing (migration 0037).
  return removed->earlier ? *removed->earlier : boost::json::serialize(answer);
}

} // namespace nf::engine
