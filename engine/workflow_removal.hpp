#pragma once

// An operator's removal of an ended workflow (msg::workflow_command op "remove", which the
// api sends to a store worker, not to the workflow's decider: there is nothing to decide).

#include <string>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// Removes workflow `c.workflow_id` of namespace `c.namespace_id` (store/workflow_removal.hpp)
/// and answers `{"workflowId","removed":true}`, a retry with the same request id too.
/// `not_found` when the namespace holds no such workflow, `invalid` while it runs or is
/// paused.
caf::expected<std::string> remove_workflow(store::connection& conn, const msg::workflow_command& c);

} // namespace nf::engine
