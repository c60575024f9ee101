#pragma once

// "TaskQueues": leasing batches of runnable tasks (DESIGN §3 step 3, schema §4.4) and
// extending leases (heartbeat). Completion and failure live in tasks.hpp, the
// lease-expiry sweep in lease_sweep.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "store/ids.hpp"
#include "store/lease_facts.hpp"
#include "store/pg/connection.hpp"
#include "store/pg/transaction.hpp"
#include "store/rate_limits.hpp"
#include "store/task_transitions.hpp"

namespace nf::store {

struct partition_fence;

/// Most tasks one lease request (so one poll) may ask for: the bound the api checks a
/// client's poll against (net/api/checks) and `lease_batches` requires.
constexpr int max_lease_tasks = 1000;

/// One queue's share of a lease transaction. A queue serves one task definition
/// (Conductor: the task's name, or its definition's "queueName"); the lessor reads that
/// definition once (`load_queue_policy`) and passes its limits here, so the hot path
/// joins nothing.
struct lease_request {
  std::string queue;
  int max_tasks = 1;                     ///< 1 … max_lease_tasks
  std::string worker_id;                 ///< stored as "leasedBy" and "workerId"
  int lease_seconds = 3600;              ///< responseTimeoutSeconds, > 0
  int start_to_close_seconds = 0;        ///< timeoutSeconds; 0 = no startToClose timer
  std::optional<int> concurrency_limit;  ///< concurrentExecLimit, > 0: leased rows of the queue
  std::optional<rate_limit> rate;        ///< rateLimitPerFrequency (absent = unlimited)
  /// No timer of a task of this queue fires later than this many seconds after its lease
  /// (the definition's timeouts, queue_policy): what its completion's timer cancel needs
  /// (lease_facts). Unknown: the lease's facts are not given out.
  std::optional<int64_t> timers_within_s;
};

/// A leased task, as the worker receives it.
struct leased_task {
  std::string queue;
  task_id task;
  workflow_id workflow;
  std::string ref_name;
  int32_t iteration = 0;
  int32_t attempt = 0;
  std::string task_type;
  std::string task_def_name;
  std::string input;            ///< JSON text of "input"
  lease_token token;
  int64_t lease_expires_at_ms = 0; ///< server clock
  int32_t poll_count = 1;          ///< "pollCount" with this lease counted
  /// JSON text of "output": what a worker reported so far (an IN_PROGRESS report before a
  /// callback); empty when none
  std::string output;
};

/// The lease-relevant fields of a task definition.
struct queue_policy {
  /// responseTimeoutSeconds; 0 when the definition sets none (the lessor's own length then)
  int lease_seconds = 3600;
  int start_to_close_seconds = 0;
  std::optional<int> concurrency_limit;
  std::optional<rate_limit> rate;
  /// The longest of its timeouts (timeoutSeconds, pollTimeoutSeconds, totalTimeoutSeconds)
  /// plus a second: none of a leased task's timers fires later than that after the lease.
  std::optional<int64_t> timers_within_s;
};

/// A lease as it is recorded beside the task's rows: its TASK_STARTED event and its
/// start-to-close timer. The lessor's lease and the decider's (a task leased in the
/// decision that schedules it, docs/engine.md §3) record it the same way.
struct started_lease {
  workflow_id workflow;
  namespace_id ns;
  int16_t shard = 0;
  task_id task;
  std::string ref;
  int32_t attempt = 0;
  int32_t iteration = 0;
  std::string worker_id;
  lease_token token;
  int64_t expires_at_ms = 0;       ///< server clock
  int start_to_close_seconds = 0;  ///< 0: no timer
};

/// The TASK_STARTED events of `leases`, in order (for store::add_events).
std::vector<event_draft> started_events(const std::vector<started_lease>& leases);

/// Adds the start-to-close timers of `leases` (those with one) to `p`.
void add_start_to_close_timers(pipeline& p, const std::vector<started_lease>& leases);

/// Leases up to `max_tasks` of one queue in one transaction (see `lease_batches`).
caf::expected<std::vector<leased_task>> lease_tasks(connection& conn, const lease_request& req);

/// Leases several queues' batches in ONE transaction (the lessor groups concurrent polls):
/// claims with FOR UPDATE SKIP LOCKED in priority/FIFO order, stamps a fresh server-side
/// lease token and `now() + lease_seconds`, sets the tasks IN_PROGRESS, appends a
/// TASK_STARTED event each (gap-free seq) with its outbox row, and arms startToClose.
/// Never exceeds a queue's concurrency limit or rate limit. Result i answers request i.
/// With `facts`, it is also given what each leased task's completion will need to know
/// (in no particular order), for the requests whose `timers_within_s` is known.
/// With `fence` (a partition's lessor), the transaction is refused (NF002, nothing leased)
/// once its partition's lease moved on (store/partition_fence.hpp).
caf::expected<std::vector<std::vector<leased_task>>>
lease_batches(connection& conn, const std::vector<lease_request>& reqs,
              std::vector<lease_facts>* facts = nullptr,
              const partition_fence* fence = nullptr);

/// The same inside the caller's open transaction (e.g. a group commit); on error the
/// caller rolls back.
caf::expected<std::vector<std::vector<leased_task>>>
lease_batches(transaction& tx, const std::vector<lease_request>& reqs,
              std::vector<lease_facts>* facts = nullptr,
              const partition_fence* fence = nullptr);

/// Reads the lease policy of task definition `(ns, name)`; not_found when absent.
caf::expected<queue_policy> load_queue_policy(connection& conn, const namespace_id& ns,
                                              const std::string& task_def_name);

/// The lease policy of the definition that serves `queue` (its "queueName", else its
/// name, as flow::queue_of routes tasks); not_found when none does.
caf::expected<queue_policy> load_queue_policy_for_queue(connection& conn, const namespace_id& ns,
                                                        const std::string& queue);

struct heartbeat_request {
  workflow_id workflow;
  task_id task;
  lease_token token;
  int extend_seconds = 3600; ///< new expiry = now() + extend_seconds, > 0
};

/// Extends a lease only while `token` is still the task's lease (I5); `lease_lost`
/// otherwise. Returns the new expiry (server clock, ms since the epoch).
caf::expected<int64_t> heartbeat_task(connection& conn, const heartbeat_request& req);

/// Batch form: one statement; entry i is the new expiry of request i, or nullopt when
/// that lease is lost (the others are still extended).
caf::expected<std::vector<std::optional<int64_t>>>
heartbeat_tasks(connection& conn, const std::vector<heartbeat_request>& reqs);

} // namespace nf::store
