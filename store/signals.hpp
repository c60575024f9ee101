#pragma once

// Signals: a named JSON payload delivered to a running workflow (a WAIT task
// waiting for that name completes with the first one it has not consumed).

#include <optional>
#include <string>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <caf/expected.hpp>

#include "store/audit.hpp"
#include "store/ids.hpp"
#include "store/pg/connection.hpp"
#include "store/request_ids.hpp"

namespace nf::store {

/// A signal's or a task update's request id (store/request_ids.hpp), claimed in the
/// transaction of its effect in the workflow's namespace. `answer` is what the request
/// answers; a retry with the same id gets the stored one in `earlier` and writes nothing,
/// even once the workflow has ended (the first request may have ended it).
struct request_claim {
  std::string id;
  std::string kind;
  boost::json::object answer;
  std::optional<std::string>* earlier = nullptr;
};

/// Appends a `SIGNAL_RECEIVED` event whose payload is `{"name": name,
/// "payload": payload}` (gap-free seq, with its outbox row) and wakes the
/// workflow's decider ("DecideQueues" upsert, I2), in one transaction. The
/// decider reads signals back from these events. A workflow that does not
/// exist is `not_found`; one that has ended (not RUNNING or PAUSED) is
/// `invalid` and nothing is written. `audit`, when given, is written in the same
/// transaction, in the workflow's namespace unless it names one (store/audit.hpp).
caf::expected<void> deliver_signal(connection& conn, const workflow_id& id,
                                   const std::string& name, const boost::json::value& payload,
                                   const audit_event* audit = nullptr,
                                   const request_claim* claim = nullptr);

/// Completes the WAIT or HUMAN task `ref` from outside (Conductor's updateTaskByRefName): a
/// `SIGNAL_RECEIVED` event addressed to the task, `{"taskRef": ref, "status": status,
/// "payload": output}` (and `"workerId"` when `worker_id` names who reports it), and the
/// decider's wake, in one transaction; the decider completes
/// (or fails) the task with it. Refused (`invalid`, nothing written) when the workflow has
/// ended or the ref's latest attempt is not a WAIT or HUMAN still waiting; `not_found` when the
/// workflow or the ref is unknown. Why a signal: the decider alone moves a system task, and a
/// signal is how a fact from outside reaches it through the history (I8).
/// Returns the task's id. `audit` and `claim` as for deliver_signal; a claimed update stores
/// `{"taskId": …}` as its answer, and a retry returns that task's id.
caf::expected<task_id> deliver_task_update(connection& conn, const workflow_id& id,
                                        const std::string& ref, const std::string& status,
                                        const boost::json::value& output,
                                        const std::string& worker_id = {},
                                        const audit_event* audit = nullptr,
                                   const request_claim* claim = nullptr);

} // namespace nf::store
