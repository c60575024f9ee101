#pragma once

// What decide() knows about one workflow execution. The store loads it; the
// actors never mutate it in place — they apply decisions (apply.hpp) or edits.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "flow/status.hpp"
#include "flow/task_type.hpp"
#include "flow/types.hpp"

namespace nf::flow {

/// One row of TaskExecutions.
struct task_execution {
  task_identity id;
  task_type type = task_type::simple;
  std::string task_def_name;         ///< the workflow task's `name`
  task_status status = task_status::scheduled;
  boost::json::object input;         ///< resolved input
  boost::json::object output;
  std::string reason_for_incompletion;
  time_ms scheduled_time = 0;        ///< when the row was inserted
  std::int64_t start_delay_ms = 0;   ///< not pollable before scheduled_time + this
  time_ms start_time = 0;            ///< leased by a worker (0 = not yet)
  time_ms end_time = 0;              ///< reached a terminal status (0 = not yet)
  std::int32_t poll_count = 0;       ///< leases taken of it (a worker's callback makes more)
  /// The row's id: what `${CPEWF_TASK_ID}` put in its input, replaced in a retry's copy.
  std::string task_id;
};

bool operator==(const task_execution& a, const task_execution& b);
inline bool operator!=(const task_execution& a, const task_execution& b) { return !(a == b); }

/// A signal delivered to the workflow; a WAIT task whose input names it
/// (`"signal": "approved"`) completes with the first one it has not consumed.
/// A signal with a `task_ref` is addressed to the WAIT task of that reference name
/// instead (Conductor's update by ref name): it ends that task with `status`, its
/// `payload` (an object) as the task's output.
struct signal {
  std::int64_t seq = 0;        ///< delivery order, unique within the workflow
  std::string name;
  boost::json::value payload;
  time_ms received_time = 0;
  std::string task_ref;        ///< empty = a named signal
  std::string status;          ///< with task_ref: COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR
};

inline bool operator==(const signal& a, const signal& b) {
  return a.seq == b.seq && a.name == b.name && a.payload == b.payload
         && a.received_time == b.received_time && a.task_ref == b.task_ref
         && a.status == b.status;
}

/// One workflow execution as decide() sees it.
struct snapshot {
  std::string workflow_id;
  workflow_status status = workflow_status::running;
  boost::json::object input;
  boost::json::object variables;   ///< starts as the definition's variables
  boost::json::object output;      ///< set when it ends
  std::string reason_for_incompletion;
  std::string correlation_id;      ///< correlationId given at start; empty = none
  time_ms start_time = 0;
  std::vector<task_execution> tasks;  ///< any order; every attempt of every task
  std::vector<signal> signals;
};

bool operator==(const snapshot& a, const snapshot& b);
inline bool operator!=(const snapshot& a, const snapshot& b) { return !(a == b); }

/// A fresh execution of `def` started at `now` (what the store inserts on start).
struct workflow_def;
snapshot start_snapshot(const workflow_def& def, std::string workflow_id,
                        boost::json::object input, time_ms now);

} // namespace nf::flow
