#pragma once

// The client protocol: one typed CAF interface every node publishes. Workers
// and applications use it through net/client/client.hpp; the HTTP gateway maps its
// routes onto the same handlers. Every request carries a timeout on the client
// side; errors arrive as caf::error in the `nf_store` category with a message
// such as "lease lost", "not found: …", "invalid: tasks[3].name: …".

#include <cstdint>
#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "proto/type_ids.hpp"

namespace nf {

using client_api = caf::typed_actor<
  // An API key for a session (msg::session): its token goes in every request's
  // `credential`. The one request a node that checks credentials answers without one.
  caf::replies_to<login_atom, msg::login_request>::with<msg::session>,
  // Task and/or workflow definitions as JSON text (one object or an array) into the
  // "default" namespace, from a caller of the node's own process; answers a JSON summary.
  caf::replies_to<register_atom, std::string>::with<std::string>,
  // The same into a namespace (msg::definitions_registration), from any caller.
  caf::replies_to<register_atom, msg::definitions_registration>::with<std::string>,
  // Create, list or remove namespaces (msg::namespace_request); answers JSON text.
  caf::replies_to<namespaces_atom, msg::namespace_request>::with<std::string>,
  // List, read or delete definitions (msg::definitions_query); answers JSON text.
  caf::replies_to<definitions_atom, msg::definitions_query>::with<std::string>,
  caf::replies_to<start_atom, msg::start_request>::with<msg::start_reply>,
  // The execution as JSON (status, input, output, tasks with their attempts).
  caf::replies_to<get_atom, msg::workflow_query>::with<std::string>,
  caf::replies_to<search_atom, msg::search_request>::with<msg::search_page>,
  // Per status, the executions a search's filters match, each count capped; answers JSON.
  caf::replies_to<count_atom, msg::search_request>::with<std::string>,
  // pause | resume | terminate | retry | rerun | restart; answers JSON.
  caf::replies_to<command_atom, msg::workflow_command>::with<std::string>,
  caf::replies_to<signal_atom, msg::signal_request>::with<std::string>,
  caf::replies_to<poll_atom, msg::poll_request>::with<std::vector<msg::leased_task>>,
  caf::replies_to<complete_atom, msg::task_result>::with<std::string>,
  // Several reports in one message (the tasks a worker finished together): each is applied
  // as if sent alone, and answered in its place, its answer or its error.
  caf::replies_to<complete_atom, std::vector<msg::task_result>>::with<
    std::vector<msg::report_outcome>>,
  caf::replies_to<heartbeat_atom, msg::heartbeat_request>::with<int64_t>,
  // A running task's log lines and output so far, into its workflow's history; answers
  // `{"workflowId","taskId","recorded":true}`.
  caf::replies_to<progress_atom, msg::task_progress>::with<std::string>,
  // Completes a WAIT task by its reference name; answers `{"workflowId","taskRef","taskId","status"}`.
  caf::replies_to<task_ref_atom, msg::task_ref_update>::with<std::string>,
  caf::replies_to<events_atom, msg::events_request>::with<std::vector<msg::event_view>>,
  // Node, partitions and queue depths as JSON.
  caf::replies_to<status_atom>::with<std::string>,
  // The same with a credential (a reader's, at least), for a caller of another process.
  caf::replies_to<status_atom, std::string>::with<std::string>,
  // Whether this node can serve: `{"ready":bool,"database":{"ready","lines"},
  // "partitionsRunning":n,"forwardsToDecidingNodes":bool}` (the database check is
  // `nodeflow readiness`'s; a node beyond cluster.deciding_nodes runs no partition).
  caf::replies_to<ready_atom>::with<std::string>,
  caf::replies_to<deadletter_atom, msg::deadletter_request>::with<std::string>,
  // The store's part of GET /metrics as JSON (engine/metrics/store_part.hpp).
  caf::replies_to<metrics_atom>::with<std::string>,
  // The audit record, a page of it: `{"events":[{"id","at","actor","origin","namespace",
  // "action","target","details"}],"nextCursor":id|null}`.
  caf::replies_to<audit_atom, msg::audit_query>::with<std::string>,
  // A namespace's webhook sinks (msg::sink_request): list, get, create, update, remove.
  caf::replies_to<sinks_atom, msg::sink_request>::with<std::string>,
  // The executions of a task definition, newest first (msg::task_history_query).
  caf::replies_to<task_history_atom, msg::task_history_query>::with<std::string>,
  // Workflow schedules (msg::schedule_request): create or replace, list, read, pause,
  // resume, delete, and the next times of a cron expression; answers JSON text.
  caf::replies_to<schedules_atom, msg::schedule_request>::with<std::string>,
  // Vector documents: index, search, delete, drop (msg::vector_request); answers JSON text.
  caf::replies_to<vectors_atom, msg::vector_request>::with<std::string>,
  // When each worker last polled each task type (msg::poll_data_query); JSON text.
  caf::replies_to<poll_data_atom, msg::poll_data_query>::with<std::string>>;

} // namespace nf
