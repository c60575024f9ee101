#pragma once

// The decider's transaction (docs/engine.md §3): everything that arrived since the
// last flush — starts, completions, operator commands — for every partition a node
// serves, plus a claim of those shards' pending evaluations, decided with
// flow::decide() and written in ONE commit. No CAF
// here: the actor (decider.cpp) owns the mailbox and the promises; this class owns the
// connection, the definition cache and the retry rules.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/json/object.hpp>
#include <caf/expected.hpp>

#include "engine/clock.hpp"
#include "engine/decide/definition_cache.hpp"
#include "engine/lease/lease_memory.hpp"
#include "engine/lease/waiting_polls.hpp"
#include "engine/decide/decide_batches.hpp"
#include "flow/status.hpp"
#include "store/pg/connection.hpp"
#include "store/tasks.hpp"
#include "store/workflows.hpp"

namespace nf::store {
struct task_row;
struct workflow_snapshot;
}

namespace nf::engine {

struct workflow_plan;
struct plan_effects;

/// An operator command on one execution, already validated.
struct command_request {
  /// pause | resume | terminate | retry | rerun | restart | skip | variables | state |
  /// decide | resetcallbacks
  std::string op;
  workflow_id id;
  std::string reason;
  std::string task_ref;  ///< rerun, skip, state
  int32_t iteration = 0; ///< rerun
  std::optional<boost::json::object> input;  ///< rerun / restart / skip / variables
  std::optional<boost::json::object> output; ///< skip, state
  /// state: the status the task `task_ref` ends with (`reason` its reasonForIncompletion)
  /// and, when not empty, the id it must have.
  std::optional<flow::task_status> task_status;
  std::string task_id;
  /// The namespace the command came from: a workflow of another one is `not_found`.
  std::optional<namespace_id> ns;
  std::string actor;   ///< who, for the audit record (msg::workflow_command)
  std::string origin;
  /// Claimed in the transaction that applies the command (store/request_ids.hpp): a retry
  /// with the same id applies nothing and is answered as the first was. Empty: none.
  std::string request_id;
};

struct batch_input {
  std::vector<store::start_request> starts;  ///< each with its id (in a served shard)
  std::vector<store::task_result> completions;  ///< at most one per task
  std::vector<command_request> commands;
};

/// What to nudge after the commit (hints, I9: a lost one costs a poll interval).
/// Timers, relays and deciders are per shard, so each hint names its shards.
struct batch_hints {
  std::set<std::string> queues;             ///< queues that received rows
  std::optional<int64_t> earliest_timer_ms; ///< earliest timer armed (server clock)
  std::set<int16_t> timer_shards;           ///< shards whose timers were armed
  std::set<int16_t> outbox_shards;          ///< shards whose outbox got rows
  std::set<int16_t> shards;                 ///< shards served elsewhere whose deciders got work

  /// Keeps the earlier of the current earliest timer and `ms`.
  void note_timer(std::optional<int64_t> ms);
  void merge(const batch_hints& o);
};

struct batch_stats {
  size_t starts = 0;
  size_t completions = 0;
  size_t commands = 0;
  size_t workflows = 0;        ///< evaluations written
  size_t tasks_scheduled = 0;  ///< task rows inserted
  size_t leased = 0;           ///< of those, leased to waiting polls in the same commit
  size_t recalled = 0;  ///< completions whose leases the lease memory knew (no read)
  size_t stale = 0;            ///< evaluations dropped as stale (I4) and requeued
  int attempts = 0;
  double ms = 0;
  double db_ms = 0;  ///< of ms, the pipelines' waits for the server's answers
};

/// A parked poll a batch was lent (waiting_polls.hpp), to hand back to its lessor with
/// what the committed transaction leased to it: nothing when it did not commit.
struct lent_poll {
  waiting_poll poll;
  std::vector<store::leased_task> tasks;
  /// What each of `tasks`' completions will need to know (lease_memory.hpp), in order.
  std::vector<store::lease_facts> facts;
};

struct batch_output {
  std::vector<caf::expected<store::start_result>> starts;
  /// JSON text per completion, or an error (`lease lost`, `not found`, …).
  std::vector<caf::expected<std::string>> completions;
  std::vector<caf::expected<std::string>> commands;
  batch_hints hints;
  std::vector<lent_poll> lent;  ///< every poll lent, committed or not: all go back
  batch_stats stats;
  /// Served shards the epoch fence refused (their lease moved on): no longer claimed.
  std::vector<int16_t> fenced;
  /// Work is left in a served shard (a full claim, decide_again, a child started there):
  /// flush again without waiting.
  bool more = false;
};

class decide_counting;

class decider_core : public decide_batches {
public:
  /// `waiting` (may be null): parked polls to lease the batch's new tasks to. `leases`: the
  /// node's lease memory, which this core writes the leases of its decisions to and asks
  /// for the completions' (null: one of its own).
  decider_core(int partition_count, std::string dsn, int batch_size,
               std::shared_ptr<waiting_polls> waiting = nullptr,
               std::shared_ptr<lease_memory> leases = nullptr,
               steady_now now = nullptr);
  ~decider_core() override;

  /// Runs one batch. Never throws; every request gets an answer.
  batch_output run(const batch_input& in) override;

  /// The shards whose pending evaluations the next batches claim.
  void serve(std::set<int16_t> shards) override { shards_ = std::move(shards); }
  void fence(store::partition_fence f) override { fence_ = std::move(f); }
  const std::set<int16_t>& shards() const override { return shards_; }

private:
  struct attempt_state;

  bool ensure_connected(std::string& why);
  /// After `err` failed the transaction of `in`'s requests for what may be one request's
  /// data (a value Postgres refused): runs them again in two halves, down to the one that
  /// fails alone, so the others commit and only it gets the error (isolation.cpp).
  batch_output run_apart(const batch_input& in, const caf::error& err);
  caf::expected<void> attempt(store::transaction& tx, const batch_input& in,
                              const std::set<std::string>& excluded, attempt_state& st);
  caf::expected<void> run_commands(store::transaction& tx, const batch_input& in,
                                   attempt_state& st);
  /// Takes the starts' answers, and notes what they leave to hint or to evaluate rowless.
  caf::expected<void> note_starts(std::vector<caf::expected<store::start_result>> started,
                                  std::vector<store::workflow_snapshot> created,
                                  attempt_state& st);
  /// What the claim after `st`'s starts and completions reads ahead (attempt_state.hpp).
  struct claim_ahead;
  claim_ahead claim_ahead_of(const batch_input& in, const std::set<std::string>& excluded,
                             const attempt_state& st) const;
  /// Claims the served shards' pending evaluations, with `ahead`'s reads and what `st`
  /// left unsent in one round trip, and decides them (claim.cpp).
  caf::expected<void> decide_claimed(store::transaction& tx, const batch_input& in,
                                     const claim_ahead& ahead, attempt_state& st);
  // decide_claimed's steps, in order (claim.cpp).
  struct claimed_work;
  /// The claim's round trip, after what `st` left unsent: the claim, the clock and `ahead`'s
  /// reads. Takes the starts' answers when their statement went with it.
  caf::expected<void> read_claim(store::transaction& tx, const batch_input& in,
                                 const claim_ahead& ahead, claimed_work& work, attempt_state& st);
  /// Which workflows to evaluate: the rows claimed, less the excluded, and the workflows
  /// this attempt's starts and completions left without a row.
  static void choose_workflows(const claim_ahead& ahead, claimed_work& work,
                               const attempt_state& st);
  /// Their snapshots: those read ahead (with the task rows known_ holds), the others read
  /// now; drops the rows of workflows that no longer exist.
  caf::expected<void> read_snapshots(store::transaction& tx, const claim_ahead& ahead,
                                     claimed_work& work, attempt_state& st);
  /// Their definitions, refreshed where no stamp was read ahead.
  caf::expected<void> read_definitions(store::connection& conn, const claim_ahead& ahead,
                                       claimed_work& work);
  /// The history facts their definitions may need, read now unless read ahead.
  caf::expected<void> read_history_facts(store::transaction& tx, const claim_ahead& ahead,
                                         claimed_work& work, const attempt_state& st);
  /// One plan per evaluation (flow::decide()), each with the completions' events it takes;
  /// a task found in the output cache completes from it (cached_outputs.hpp), which may read
  /// the cache on `conn`.
  caf::expected<std::vector<workflow_plan>>
  plan_evaluations(store::connection& conn, const claimed_work& work, attempt_state& st);
  /// Writes the plans, leasing their new tasks to waiting polls on a first attempt, and
  /// notes what known_ may hold of them once the attempt commits.
  caf::expected<void> write_evaluations(store::transaction& tx, const batch_input& in,
                                        const claimed_work& work,
                                        const std::vector<workflow_plan>& plans,
                                        attempt_state& st);
  /// Counts the task ends of `in`'s completions that `work` evaluated (counting.hpp).
  static void count_completed(const batch_input& in, const claimed_work& work,
                              attempt_state& st);
  /// Remembers whether the facts of `s`'s workflow need reading with the next claim
  /// (without_history_): not while it runs a definition with no WAIT and no timeout.
  void note_history_use(const store::workflow_snapshot& s, bool defined_without_history,
                        const workflow_plan& plan);
  void recover_in_doubt(const batch_input& in, batch_output& out);
  /// shards_ as the store takes them.
  std::vector<shard_id> served_shards() const;
  /// Moves what a committed attempt's decisions left to know into known_.
  void learn(attempt_state& st);

  /// Of a running workflow this core decided last, the task rows that decision saw and left
  /// as they were: the terminal ones (which nothing but an evaluation's edit changes), up to
  /// the first that was not, in id order. Its next snapshot reads only the rows past them,
  /// and takes these while the execution's version is still the one that decision wrote.
  struct known_tasks {
    int64_t version = 0;
    std::vector<store::task_row> rows;  ///< never empty
    size_t bytes = 0;                   ///< about what the rows take in memory
  };
  /// What known_ may hold of `s`'s workflow once `p`'s write commits (nullopt: nothing).
  static std::optional<known_tasks> known_after(const store::workflow_snapshot& s,
                                                const workflow_plan& p, const plan_effects& fx);

  std::set<int16_t> shards_;
  store::partition_fence fence_;  ///< of shards_: checked with each claim
  /// The fence refused `err`: drops the partitions it names from shards_ and fence_.
  void drop_fenced(const caf::error& err, batch_output& out);
  int partition_count_;
  std::string dsn_;
  int batch_size_;
  steady_now now_;  ///< this process's time (none given: the steady clock)
  std::unique_ptr<store::connection> conn_;
  std::shared_ptr<waiting_polls> waiting_;
  definition_cache defs_;
  std::shared_ptr<lease_memory> leases_;
  /// The server's clock less this process's steady clock, in milliseconds, as the last
  /// claim read it: the lease memory is asked against the server's clock (recall).
  std::optional<int64_t> server_offset_ms_;
  /// The namespaces the last batch decided in: their stamps are read with the next claim.
  std::vector<namespace_id> recent_namespaces_;
  /// Running workflows whose last evaluation here needed no history facts (their
  /// definition has no WAIT and no timeout): their facts are not read with the claim.
  /// Only a guess about what to read ahead: a workflow that turns out to need facts
  /// has them read once its definition is known.
  std::unordered_set<std::string> without_history_;
  std::unordered_map<std::string, known_tasks> known_;
  size_t known_bytes_ = 0;
  /// The node's metrics this core counts (counting.hpp).
  std::unique_ptr<decide_counting> counting_;
};

/// Whether `err`, failing a batch's transaction, may come from the data of one of its
/// requests (a data exception, a constraint, a program limit such as a btree row too wide,
/// an input refused): then the others must not fail with it (decider_core::run_apart).
/// Never for what the connection or the engine's own rules say (retry, in doubt, stale).
bool one_request_may_fail(const caf::error& err);

/// A fresh uuidv7 whose shard (`shard_of`) is `shard`: its last 16 random bits are
/// moved to the nearest value in that residue class, so a start routed to this
/// decider is decided here.
workflow_id new_workflow_id_in(int16_t shard, int partition_count);

} // namespace nf::engine
