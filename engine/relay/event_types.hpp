#pragma once

// The event types an outbox row can carry, so a webhook sink's "eventTypes" names only types
// it can receive (a misspelt one would silently match nothing). Two vocabularies reach the
// outbox: the decider's events (flow/decide.cpp, flow/operations.cpp: "task.completed",
// "workflow.failed", "task.timeout_alert", …) and the history's labels of the events written
// beside it (store/events.cpp, store/task_transitions.cpp: the "workflow_event_type" enum,
// "WORKFLOW_STARTED", "TASK_STARTED", …).

#include <string_view>
#include <vector>

namespace nf::engine::relay {

/// Every type, the decider's first, then the history's labels.
const std::vector<std::string_view>& outbox_event_types();

bool is_outbox_event_type(std::string_view type);

} // namespace nf::engine::relay
