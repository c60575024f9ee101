#pragma once

// The messages nodes and clients exchange, as plain structs with CAF 0.17
// `inspect` overloads. JSON payloads travel as text so any client language (and
// the HTTP gateway) can produce them; the node parses untrusted text with the
// error_code overloads and answers `invalid: <path>: <reason>`.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

namespace nf::msg {

/// Start a workflow. `version` 0 = the latest registered version.
///
/// `namespace_id`, here and in every request below that carries it: the namespace the
/// request acts in, by the name clients know (empty = "default"). A request sees only its
/// namespace's rows: a workflow, task or definition of another namespace is `not found`.
/// The api actor (net/api) resolves the name to the namespace's id before anything else
/// reads the request, so past it (on the node, between nodes) the field holds that id.
///
/// `credential`, in every request: a token from `login_atom` (or one of POST /api/token's),
/// when the node checks credentials. From another process the namespace is then the
/// token's key's, whatever the request says; between nodes it is the cluster's node
/// credential, the one thing that makes a node's `forward_atom` requests accepted.
struct start_request {
  std::string namespace_id;
  std::string workflow_name;
  int64_t version = 0;
  std::string input_json = "{}";
  std::string idempotency_key; ///< empty = no idempotency
  std::string correlation_id;
  int32_t priority = 0;
  std::string credential;
  /// Conductor's taskToDomain as a JSON object (task name or "*" to one domain,
  /// proto/domains.hpp); empty = none.
  std::string task_to_domain_json;
  /// Without an idempotency key, makes the start idempotent all the same (a retry after
  /// `unavailable` returns the same workflow); ignored beside a key, which does that already.
  /// The C++ client fills a fresh one when both are empty.
  std::string request_id;
};

struct start_reply {
  std::string workflow_id;
  bool created = true; ///< false when the idempotency key already named a workflow
};

/// Read one execution.
struct workflow_query {
  std::string workflow_id;
  bool include_tasks = true;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
};

/// List executions, newest first, keyset-paginated by `cursor`.
struct search_request {
  std::string namespace_id;
  std::string status;        ///< empty = any
  std::string workflow_name; ///< empty = any
  std::string correlation_id; ///< empty = any
  int64_t started_after_ms = 0;
  int64_t started_before_ms = 0; ///< 0 = no bound
  std::string cursor;            ///< from the previous page; empty = first page
  int32_t limit = 50;
  std::string credential;
};

struct search_page {
  std::string items_json; ///< JSON array of execution summaries
  std::string next_cursor; ///< empty on the last page
};

/// An operator request on one execution: "pause", "resume", "terminate",
/// "retry", "rerun" (from `task_ref`/`iteration`, optionally with new input),
/// "restart" (optionally with new input), "skip" (`task_ref`, not reached yet, marked
/// SKIPPED with `input_json` and `output_json`), "variables" (`input_json`'s keys set in a
/// RUNNING or PAUSED workflow's variables), "decide" (a RUNNING workflow evaluated again now,
/// Conductor's decide; nothing else changes), "resetcallbacks" (its tasks waiting out a
/// callback's or a retry's delay queued now), and "remove" (an ended workflow and its history
/// deleted for good, by an admin; the api hands it to a store worker, not to a decider).
struct workflow_command {
  std::string op;
  std::string workflow_id;
  std::string reason;
  std::string task_ref;
  int32_t iteration = 0;
  std::string input_json; ///< empty = unchanged
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
  /// Makes a retry safe (migration 0037): a second request with the same id applies nothing
  /// and gets the first one's answer. The C++ client fills a fresh one when empty.
  std::string request_id;
  std::string output_json; ///< skip, state: the task's output; empty = {}
  /// state: the status the WAIT or HUMAN task `task_ref` ends with (COMPLETED, FAILED or
  /// FAILED_WITH_TERMINAL_ERROR; `reason` its reasonForIncompletion), and, when not empty, the
  /// id that task must have.
  std::string task_status;
  std::string task_id;
};

/// The ops a workflow_command may name, as its checks list them when refusing one.
inline constexpr const char* workflow_command_ops_text =
  "pause, resume, terminate, retry, rerun, restart, skip, variables, state, decide or "
  "resetcallbacks";
inline bool is_workflow_command_op(std::string_view op) {
  for (std::string_view known : {"pause", "resume", "terminate", "retry", "rerun", "restart",
                                 "skip", "variables", "state", "decide", "resetcallbacks"})
    if (op == known)
      return true;
  return false;
}

/// Deliver a signal to a workflow (completes a WAIT for that signal).
struct signal_request {
  std::string workflow_id;
  std::string name;
  std::string payload_json = "null";
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
  /// Makes a retry safe (migration 0037): a second request with the same id applies nothing
  /// and gets the first one's answer. The C++ client fills a fresh one when empty.
  std::string request_id;
};

/// A worker's (long) poll on one queue.
struct poll_request {
  std::string namespace_id;
  std::string queue;
  std::string worker_id;
  int32_t max_tasks = 1;
  int64_t timeout_ms = 0; ///< 0 = answer at once
  std::string credential;
  /// The task domain polled (proto/domains.hpp); empty = tasks routed to no domain.
  std::string domain;
};

/// A task handed to a worker, fenced by its lease token (I5).
struct leased_task {
  std::string task_id;
  std::string workflow_id;
  std::string ref;
  int32_t iteration = 0;
  int32_t attempt = 0;
  std::string task_type;
  std::string task_def_name;
  std::string input_json;
  std::string lease_token;
  int64_t lease_expires_at_ms = 0;
  int32_t poll_count = 1;  ///< this lease counted: more than 1 after a callback or a hand-back
  /// The output reported so far (an IN_PROGRESS report before a callback), JSON text; empty
  /// when none.
  std::string output_json;
};

/// A worker's report. `status`: COMPLETED, FAILED (retryable) or
/// FAILED_WITH_TERMINAL_ERROR.
struct task_result {
  std::string task_id;
  std::string workflow_id;
  std::string lease_token;
  std::string status = "COMPLETED";
  std::string output_json = "{}";
  std::string reason;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
};

/// One report's answer within a batch of reports (client_api.hpp): the answer the report
/// alone would have had, its JSON in `answer`, or its error (`lease lost`, `invalid: …`).
struct report_outcome {
  std::string answer;
  caf::error error;
};

/// A worker's word on a task it is still running (Conductor's IN_PROGRESS report, its task
/// log): log lines and the output so far, kept in the workflow's history as a
/// `TASK_IN_PROGRESS` event (`{"taskId", "logs":[{"log","createdTime"}], "outputData"?}`).
/// It changes neither the task's status nor its output: a report does that.
struct task_progress {
  std::string task_id;
  std::string workflow_id;
  std::string logs_json = "[]"; ///< [{"log": text, "createdTime": ms}, …]
  std::string output_json;      ///< empty = none reported
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
};

/// Completes a WAIT task from outside by its reference name (Conductor's
/// updateTaskByRefName): `status` COMPLETED, FAILED or FAILED_WITH_TERMINAL_ERROR, `output`
/// its output (a JSON object). Reaches the decider as a signal addressed to the task.
struct task_ref_update {
  std::string workflow_id;
  std::string task_ref;
  std::string status = "COMPLETED";
  std::string output_json = "{}";
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
  /// Makes a retry safe (migration 0037): a second request with the same id applies nothing
  /// and gets the first one's answer. The C++ client fills a fresh one when empty.
  std::string request_id;
  /// Who reports it (Conductor's `workerid`), named in the history event that ends the task
  /// and in its audit record; empty = not named.
  std::string worker_id;
};

/// Extends a lease; answered with the new expiry (ms since epoch). With
/// `callback_after_seconds` > 0 it gives the task back instead (Conductor's IN_PROGRESS
/// with callbackAfterSeconds, store/lease_postpone.hpp): the lease ends, and the task is
/// queued again, as the same attempt, that many seconds later; answered with that time.
struct heartbeat_request {
  std::string task_id;
  std::string workflow_id;
  std::string lease_token;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
  int64_t callback_after_seconds = 0;  ///< 0 … a year; 0 = extend the lease
};

/// A workflow's history after `after_seq`; `wait_ms` > 0 waits for new events.
struct events_request {
  std::string workflow_id;
  int64_t after_seq = 0;
  int32_t limit = 1000;
  int64_t wait_ms = 0;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
};

struct event_view {
  int64_t seq = 0;
  int64_t at_ms = 0;
  std::string type;
  std::string task_ref;
  std::string payload_json;
};

/// Task or workflow definitions: op "list" (every task definition, or every version of
/// every workflow definition), "get" (one by name; a workflow's `version` 0 = the latest)
/// or "delete" (a task definition by name, a workflow definition by name and version).
/// Answers JSON text: an array for a list, the definition for a get,
/// `{"deleted":{"kind","name","version"}}` for a delete.
struct definitions_query {
  std::string op = "list";
  std::string kind = "task"; ///< "task" | "workflow"
  std::string name;          ///< empty for a list
  int64_t version = 0;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
};

/// Dead-lettered outbox events: op "list" (after `after_id`, `limit`) or
/// "replay" (`ids`, or all when empty).
struct deadletter_request {
  std::string op = "list";
  std::vector<int64_t> ids;
  int64_t after_id = 0;
  int32_t limit = 100;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
};

/// Task and/or workflow definitions as JSON text (one object or an array), with the
/// namespace they go into and who registers them.
struct definitions_registration {
  std::string text;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
};

/// The audit record (store/audit.hpp), oldest first, keyset-paged by `cursor`.
struct audit_query {
  int64_t since_ms = 0;    ///< 0 = from the oldest kept
  std::string action;      ///< empty = every action
  std::string cursor;      ///< from the previous page; empty = first page
  int32_t limit = 100;     ///< 1 … 1000
  /// Only this namespace's actions, by name ("default" also sees those outside any
  /// namespace); empty = every namespace's, for a caller of this process only.
  std::string namespace_id;
  std::string credential;
};

/// Namespaces, managed: op "list", "create" (`name`) or "remove" (`name`; refused with
/// `conflict` while it holds definitions or running executions; "default" stays). Answers
/// JSON: `{"namespaces":[{"name","createdTime"}]}` for a list, the namespace for a create,
/// `{"removed":name}` for a remove.
struct namespace_request {
  std::string op = "list";
  std::string name;
  std::string credential;
  /// Who asked and through which door, for the audit record (as in workflow_command).
  std::string actor;
  std::string origin;
};

/// A namespace's webhook sinks ("WebhookSinks", where the relay delivers its outbox events):
/// op "list", "get" (`id`), "create" (`body_json`: the sink as JSON), "update" (`id`,
/// `body_json`: the fields to change) or "remove" (`id`). Answers JSON: a sink
/// `{"id","url","eventTypes","maxAttempts","timeoutMs","enabled","signingSecretSet",
/// "createdTime","updatedTime"}` (its signing secret is never answered),
/// `{"sinks":[…]}` for a list, `{"removed":id}` for a remove.
struct sink_request {
  std::string op = "list";
  std::string id;
  std::string body_json;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
};

/// Vector documents of the request's namespace (store/vectors.hpp), as JSON text both ways:
/// op "put" (`index`; `body_json` {"documents":[{"id","embedding":[n…],"metadata"?:{…},
/// "text"?}]}), "search" (`index`; `body_json` {"embedding":[n…],"limit"?:1-1000,
/// "exact"?:bool}), "delete" (`index`, `document_id`) or "drop" (`index`, with its
/// documents). Answers {"index","dimensions","stored"} | {"index","mode","distance",
/// "candidates","results":[{"id","score","metadata","text"}]} | {"index","deleted"} |
/// {"index","removedDocuments"}.
struct vector_request {
  std::string op = "search";
  std::string index;
  std::string document_id;
  std::string body_json = "{}";
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record of a delete or drop.
  std::string actor;
  std::string origin;
  std::string credential;
};

/// Workflow schedules (Conductor's scheduler): op "list" (`workflow_name` filters), "get",
/// "save" (`body`: a SaveScheduleRequest as JSON text), "delete", "pause" (`reason`),
/// "resume" (each by `name`), or "next" (the next `limit` times of `cron_expression` in
/// `zone_id` after `start_ms`, not after `end_ms` when set; no schedule needed). Answers JSON:
/// a WorkflowSchedule, an array of them, or an array of epoch milliseconds for "next".
struct schedule_request {
  std::string op = "list";
  std::string name;
  std::string body;
  std::string workflow_name;
  std::string reason;
  std::string cron_expression;
  std::string zone_id;
  int64_t start_ms = 0; ///< 0 = now
  int64_t end_ms = 0;   ///< 0 = no end
  int32_t limit = 3;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  /// Who asked and through which door, for the audit record (store/audit.hpp). The door
  /// fills both; the api actor overwrites them for a request from another process.
  std::string actor;
  std::string origin;
  std::string credential;
};

/// The executions of a task definition, newest scheduled first, keyset-paged: `cursor` is
/// the previous page's `next` (empty = the newest). Answers
/// `{"taskDefName","executions":[…],"next":cursor|null}`.
struct task_history_query {
  std::string task_def_name;
  std::string cursor;
  int32_t limit = 100; ///< 1 … 1000
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
};

/// Conductor's poll data of a namespace: when each worker last polled each task type
/// (`task_type` empty = every type). Answers JSON text, Conductor's PollData list:
/// `[{"queueName","domain","workerId","lastPollTime"}]` (domain "DEFAULT" for a poll that
/// named none, workerId null for one that named no worker, lastPollTime Unix ms).
struct poll_data_query {
  std::string task_type;
  std::string namespace_id; ///< the namespace's name; empty = "default" (see start_request)
  std::string credential;
};

/// A poll an api took, `age_ms` before it is handed on: what it writes to "PollData"
/// (store/poll_data.hpp) every few seconds, between nodes' apis and their store workers only.
struct poll_seen {
  std::string namespace_id; ///< the namespace's id
  std::string task_type;
  std::string domain;
  std::string worker_id;
  int64_t age_ms = 0;
};

/// An API key presented on the client protocol; answered with a session (or
/// `unauthenticated`). The key's secret crosses the wire once per session, never again.
struct login_request {
  std::string key_id;
  std::string key_secret;
};

/// A login's answer: the token every request then carries as its `credential`, until
/// `expires_at_s` (unix seconds), and what the key may do where.
struct session {
  std::string token;
  int64_t expires_at_s = 0;
  std::string role;
  std::string namespace_name;
};

/// Whether a request says who sent it (the audit record's actor and origin).
template <class Message, class = void>
struct names_its_sender : std::false_type {};
template <class Message>
struct names_its_sender<Message, std::void_t<decltype(std::declval<Message&>().actor)>>
  : std::true_type {};

/// Whether a message carries a credential (every request struct).
template <class Message, class = void>
struct carries_credential : std::false_type {};
template <class Message>
struct carries_credential<Message,
                          std::void_t<decltype(std::declval<Message&>().credential)>>
  : std::true_type {};

/// Whether a request acts in a namespace (every one but namespace_request).
template <class Message, class = void>
struct names_a_namespace : std::false_type {};
template <class Message>
struct names_a_namespace<Message,
                         std::void_t<decltype(std::declval<Message&>().namespace_id)>>
  : std::true_type {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, vector_request& x) {
  return f(caf::meta::type_name("nf::msg::vector_request"), x.op, x.index, x.document_id,
           x.body_json, x.namespace_id, x.actor, x.origin, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, login_request& x) {
  return f(caf::meta::type_name("nf::msg::login_request"), x.key_id, x.key_secret);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session& x) {
  return f(caf::meta::type_name("nf::msg::session"), x.token, x.expires_at_s, x.role,
           x.namespace_name);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, namespace_request& x) {
  return f(caf::meta::type_name("nf::msg::namespace_request"), x.op, x.name, x.credential,
           x.actor, x.origin);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, start_request& x) {
  return f(caf::meta::type_name("nf::msg::start_request"), x.namespace_id, x.workflow_name,
           x.version, x.input_json, x.idempotency_key, x.correlation_id, x.priority, x.credential,
           x.task_to_domain_json, x.request_id);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, start_reply& x) {
  return f(caf::meta::type_name("nf::msg::start_reply"), x.workflow_id, x.created);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, workflow_query& x) {
  return f(caf::meta::type_name("nf::msg::workflow_query"), x.workflow_id, x.include_tasks, x.namespace_id, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, search_request& x) {
  return f(caf::meta::type_name("nf::msg::search_request"), x.namespace_id, x.status,
           x.workflow_name, x.correlation_id, x.started_after_ms, x.started_before_ms, x.cursor,
           x.limit, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, search_page& x) {
  return f(caf::meta::type_name("nf::msg::search_page"), x.items_json, x.next_cursor);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, workflow_command& x) {
  return f(caf::meta::type_name("nf::msg::workflow_command"), x.op, x.workflow_id, x.reason,
           x.task_ref, x.iteration, x.input_json, x.namespace_id, x.actor, x.origin, x.credential,
           x.request_id, x.output_json, x.task_status, x.task_id);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, signal_request& x) {
  return f(caf::meta::type_name("nf::msg::signal_request"), x.workflow_id, x.name,
           x.payload_json, x.namespace_id, x.actor, x.origin, x.credential, x.request_id);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, poll_request& x) {
  return f(caf::meta::type_name("nf::msg::poll_request"), x.namespace_id, x.queue, x.worker_id,
           x.max_tasks, x.timeout_ms, x.credential, x.domain);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, leased_task& x) {
  return f(caf::meta::type_name("nf::msg::leased_task"), x.task_id, x.workflow_id, x.ref,
           x.iteration, x.attempt, x.task_type, x.task_def_name, x.input_json, x.lease_token,
           x.lease_expires_at_ms, x.poll_count, x.output_json);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_result& x) {
  return f(caf::meta::type_name("nf::msg::task_result"), x.task_id, x.workflow_id,
           x.lease_token, x.status, x.output_json, x.reason, x.namespace_id, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, report_outcome& x) {
  return f(caf::meta::type_name("nf::msg::report_outcome"), x.answer, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_progress& x) {
  return f(caf::meta::type_name("nf::msg::task_progress"), x.task_id, x.workflow_id,
           x.logs_json, x.output_json, x.namespace_id, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_ref_update& x) {
  return f(caf::meta::type_name("nf::msg::task_ref_update"), x.workflow_id, x.task_ref,
           x.status, x.output_json, x.namespace_id, x.actor, x.origin, x.credential,
           x.request_id, x.worker_id);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, heartbeat_request& x) {
  return f(caf::meta::type_name("nf::msg::heartbeat_request"), x.task_id, x.workflow_id,
           x.lease_token, x.namespace_id, x.credential, x.callback_after_seconds);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, events_request& x) {
  return f(caf::meta::type_name("nf::msg::events_request"), x.workflow_id, x.after_seq, x.limit,
           x.wait_ms, x.namespace_id, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, event_view& x) {
  return f(caf::meta::type_name("nf::msg::event_view"), x.seq, x.at_ms, x.type, x.task_ref,
           x.payload_json);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, definitions_query& x) {
  return f(caf::meta::type_name("nf::msg::definitions_query"), x.op, x.kind, x.name, x.version,
           x.namespace_id, x.actor, x.origin, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, deadletter_request& x) {
  return f(caf::meta::type_name("nf::msg::deadletter_request"), x.op, x.ids, x.after_id,
           x.limit, x.namespace_id, x.actor, x.origin, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, definitions_registration& x) {
  return f(caf::meta::type_name("nf::msg::definitions_registration"), x.text,
           x.namespace_id, x.actor, x.origin, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, audit_query& x) {
  return f(caf::meta::type_name("nf::msg::audit_query"), x.since_ms, x.action, x.cursor,
           x.limit, x.namespace_id, x.credential);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sink_request& x) {
  return f(caf::meta::type_name("nf::msg::sink_request"), x.op, x.id, x.body_json,
           x.namespace_id, x.actor, x.origin, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_history_query& x) {
  return f(caf::meta::type_name("nf::msg::task_history_query"), x.task_def_name, x.cursor,
           x.limit, x.namespace_id, x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, poll_data_query& x) {
  return f(caf::meta::type_name("nf::msg::poll_data_query"), x.task_type, x.namespace_id,
           x.credential);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, poll_seen& x) {
  return f(caf::meta::type_name("nf::msg::poll_seen"), x.namespace_id, x.task_type, x.domain,
           x.worker_id, x.age_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, schedule_request& x) {
  return f(caf::meta::type_name("nf::msg::schedule_request"), x.op, x.name, x.body,
           x.workflow_name, x.reason, x.cron_expression, x.zone_id, x.start_ms, x.end_ms,
           x.limit, x.namespace_id, x.actor, x.origin, x.credential);
}

} // namespace nf::msg
