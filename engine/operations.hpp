#pragma once

// The client-protocol operations that only read or write the store, as plain
// functions of a connection (the api's store workers call them; tests call
// them directly). Inputs were checked (checks.hpp) by the caller; what only
// the database can know (a missing workflow, a lost lease) comes back as a
// store error.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "proto/messages.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"

namespace nf::engine {

/// The namespace a request acts in: the id the api resolved its name to (messages.hpp);
/// empty = "default".
namespace_id namespace_of(const std::string& ns);

/// Task and/or workflow definitions (one JSON object or an array mixing
/// both). Everything is read and validated first; any problem rejects the
/// whole request (`invalid`, every problem listed) and nothing is written.
/// Answers `{"taskDefs":[{"name","revision"}],"workflowDefs":[{"name","version"}]}`.
/// Every operation here acts in the namespace its request names (by id, as the api resolved
/// it; empty = "default"): a workflow, task, definition or dead letter of another namespace
/// is `not_found`, and nothing of it changes. Administrative ones are audited in their
/// writing transaction (`definitions.register`, engine/audit_trail.hpp).
caf::expected<std::string> register_definitions(store::connection& conn,
                                                const msg::definitions_registration& r);

/// Lists, reads or deletes definitions (msg::definitions_query, checked): a list is a JSON
/// array of definitions as registered (flow::to_json), a get one definition, a delete
/// `{"deleted":{"kind","name","version"}}`. A missing one is `not_found`; a task definition
/// that workflow definitions name, or a workflow version with running executions, is
/// `conflict` and stays. A delete is audited (`definitions.delete`) in its transaction.
caf::expected<std::string> definitions(store::connection& conn, const msg::definitions_query& q);

/// The execution as JSON: its fields, `input`/`output`/`variables` as stored
/// (a NULL or JSON null output is `null`), and `tasks`: every attempt of every
/// task, in schedule order.
caf::expected<std::string> get_execution(store::connection& conn, const msg::workflow_query& q);

caf::expected<msg::search_page> search_executions(store::connection& conn,
                                                  const msg::search_request& r);

/// Where a count of executions stops (the web UI shows "10,000+").
inline constexpr int64_t execution_count_cap = 10000;

/// Per status, the executions matching a search's filters (its status, cursor and limit
/// ignored), each count capped: `{"counts":{"RUNNING":n,…},"cap":execution_count_cap}`.
caf::expected<std::string> count_executions(store::connection& conn,
                                            const msg::search_request& r);

/// Answers `{"workflowId","signal","delivered":true}`; audited (`workflow.signal`).
caf::expected<std::string> deliver_signal(store::connection& conn, const msg::signal_request& r);

/// Extends the lease by the task definition's responseTimeoutSeconds, else
/// by `default_lease_seconds`; `lease lost` when the token is not current.
caf::expected<int64_t> heartbeat(store::connection& conn, const msg::heartbeat_request& r,
                                 int default_lease_seconds);

/// A running task's log lines and output so far as a `TASK_IN_PROGRESS` event of its
/// workflow (`{"taskId","logs","outputData"?}`, with its outbox row like every event);
/// `not_found` when the task is not one of the workflow's. Answers
/// `{"workflowId","taskId","recorded":true}`.
caf::expected<std::string> record_task_progress(store::connection& conn,
                                                const msg::task_progress& r);

/// Completes (or fails) the WAIT task `task_ref` of a running workflow: a signal addressed
/// to the task, which its decider consumes (flow/decide.cpp). Refused (`invalid`) when the
/// ref's latest attempt is not a WAIT still waiting. Answers
/// `{"workflowId","taskRef","taskId","status"}`. Audited (`workflow.task_update`).
caf::expected<std::string> update_task_by_ref(store::connection& conn,
                                              const msg::task_ref_update& r);

/// Events after `after_seq` (no waiting: the api actor re-asks). `scoped` false reads
/// whatever namespace the workflow is in: for a caller that checked the namespace already
/// (the HTTP door's history streams ask the api first).
caf::expected<std::vector<msg::event_view>> read_events(store::connection& conn,
                                                        const msg::events_request& r,
                                                        bool scoped = true);

/// The store's part of `status`: `{"queues":[{"name","ready","leased","oldestReadyAgeMs"}],
/// "queueCountCap":n, "pendingDecisions":{"total":n,"byShard":{"3":n}}, "nodes":[{"id",
/// "address","startedAt","heartbeatAgeMs","stopped","alive","partitions"}],
/// "partitions":[{"partition","owner","epoch","leaseRemainingMs","heldMs"}]}`.
/// Nodes whose heartbeat is older than `silent_after_ms` (membership.lease_ms) show as not
/// alive, stopped or not.
caf::expected<std::string> store_status(store::connection& conn, int64_t silent_after_ms);

/// `nodeflow readiness`'s check as `{"ready":bool,"lines":[…]}`.
caf::expected<std::string> database_readiness(store::connection& conn);

/// `list`: `{"deadLetters":[…],"nextAfterId":id|null}`; `replay`: `{"replayed":n}`
/// (all dead letters when `ids` is empty), audited (`deadletters.replay`) in its transaction.
caf::expected<std::string> dead_letters(store::connection& conn,
                                        const msg::deadletter_request& r);

/// The id of the namespace named `name` (empty = "default"); `not_found` when none is.
caf::expected<std::string> resolve_namespace(store::connection& conn, const std::string& name);

/// Lists, creates or removes namespaces (msg::namespace_request, checked).
caf::expected<std::string> namespaces(store::connection& conn, const msg::namespace_request& r);

} // namespace nf::engine
