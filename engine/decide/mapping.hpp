#pragma once

// Between the store's rows and flow's values: a loaded execution becomes the
// flow::snapshot decide() reads, and a flow::decision (or edit) becomes the store
// writes that carry it. Pure: no I/O.

#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "flow/decision.hpp"
#include "flow/definitions.hpp"
#include "flow/operations.hpp"
#include "flow/snapshot.hpp"
#include "store/decide_support.hpp"
#include "store/decisions.hpp"
#include "store/workflow_edits.hpp"

namespace nf::engine {

/// Parses stored JSON text into an object; anything else (never written by the
/// engine) reads as `{}`.
boost::json::object parse_object(const std::string& text);

/// The snapshot decide() sees. `facts` supplies signals and a reset timeout clock.
flow::snapshot to_flow(const store::workflow_snapshot& s, const store::history_facts* facts,
                       const flow::workflow_def& def, const flow::task_def_map& task_defs);

/// The history label ("TASK_COMPLETED") of a flow event type ("task.completed"), or
/// nullptr for events that only go to the outbox (alerts).
const char* history_label(const std::string& flow_type, int attempt);

/// One flow event as a history entry (when it has a label) and an outbox row.
void add_event(store::decision_write& w, const flow::event& e, const std::string& workflow_id);

/// An empty write for the workflow of `s`, compared and set against `version`, with the
/// snapshot's namespace, shard and priority.
store::decision_write write_for(const store::workflow_snapshot& s, int64_t version);

/// The store write of one evaluation. Its timers keep decide()'s deadlines, on the
/// server clock decide() ran with.
store::decision_write to_write(const store::workflow_snapshot& s, const flow::decision& d);

/// The inserts and timers of an edit (flow/operations.hpp), as a decision_write that
/// follows the edit's own compare-and-set (`expected_version` = the edit's + 1). A
/// restarted workflow timeout is due `workflow_timeout_seconds` after `now_ms`.
store::decision_write edit_followup(const store::workflow_snapshot& s, const flow::edit& e,
                                    flow::time_ms now_ms, int64_t workflow_timeout_seconds);

/// The delete/reopen/status part of an edit.
store::edit_write to_edit_write(const store::workflow_snapshot& s, const flow::edit& e);

/// The workflow's taskToDomain (store::workflow_snapshot::task_to_domain); {} = none.
boost::json::object task_to_domain_of(const store::workflow_snapshot& s);

/// A store insert for a scheduled task (queue for SIMPLE and HTTP). A SIMPLE task's queue
/// is the domain's that `task_to_domain` routes its task name to, if any.
store::task_insert to_insert(const flow::scheduled_task& t, const namespace_id& ns,
                             const boost::json::object& task_to_domain = {});

/// The store arm of a flow timer, at its deadline; nullopt for kinds the
/// decider does not arm (startToClose: the lessor arms it with the lease token).
std::optional<store::timer_arm> to_arm(const flow::timer& t);

} // namespace nf::engine
