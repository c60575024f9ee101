#include "engine/workflow_removal.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "engine/audit_trail.hpp"
#include "proto/errors.hpp"
#include "store/api_reads.hpp"
#include "store/request_ids.hpp"
#include "store/workflow_removal.hpp"

namespace nf::engine {

caf::expected<std::string> remove_workflow(store::connection& conn, const msg::workflow_command& c) {
  const workflow_id id{c.workflow_id};
  const auto ns = c.namespace_id.empty() ? default_namespace : namespace_id{c.namespace_id};
  // A workflow of another namespace is as missing as one that never was.
  auto h = store::read_execution_header(conn, id);
  if (!h) {
    // Gone: by this request's first try, whose answer a retry gets again.
    if (nf::code_of(h.error()) == nf::errc::not_found && !c.request_id.empty()) {
      auto earlier =
        store::earlier_request(conn, {ns, c.request_id, "command remove", c.workflow_id});
      if (!earlier)
        return std::move(earlier.error());
      if (*earlier)
        return std::move(**earlier);
    }
    return std::move(h.error());
  }
  if (h->ns != ns)
    return nf::make_error(nf::errc::not_found, "workflow " + c.workflow_id + " not found");
  boost::json::object details;
  if (!c.reason.empty())
    details["reason"] = c.reason;
  boost::json::object answer{{"workflowId", c.workflow_id}, {"removed", true}};
  auto removed = store::remove_workflow(
    conn, id, ns,
    audit_event(c.actor, c.origin, "workflow.remove", c.workflow_id, std::move(details)),
    c.request_id, answer);
  if (!removed)
    return std::move(removed.error());
  // A retry is answered as the first request was, and deletes nothing (migration 0037).
  return removed->earlier ? *removed->earlier : boost::json::serialize(answer);
}

} // namespace nf::engine
