#include "actors/decider/batch.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "actors/decider/plans.hpp"
#include "actors/folder_logger.hpp"
#include "store/decide_reads.hpp"
#include "store/decide_support.hpp"
#include "store/decisions.hpp"
#include "store/index_scans.hpp"
#include "store/pg/errors.hpp"
#include "store/sharding.hpp"

namespace nf::actors::decider {

namespace {

constexpr int max_attempts = 8;

caf::error unavailable(const std::string& why) {
  return store::make_error(store::errc::unavailable, why);
}

std::string completion_json(const store::task_result& r) {
  const char* status = r.outcome == store::task_outcome::completed ? "COMPLETED"
                       : r.outcome == store::task_outcome::failed  ? "FAILED"
                                                                   : "FAILED_WITH_TERMINAL_ERROR";
  return boost::json::serialize(boost::json::object{
    {"taskId", r.task.str()}, {"workflowId", r.workflow.str()}, {"status", status}});
}

std::string command_json(const command_request& c, flow::workflow_status status) {
  return boost::json::serialize(boost::json::object{
    {"workflowId", c.id.str()}, {"op", c.op}, {"status", flow::to_string(status)}});
}

bool may_wait(const std::vector<flow::workflow_task>& tasks) {
  for (const auto& t : tasks) {
    // A dynamic fork may fork WAIT tasks the definition does not name.
    if (t.type == flow::task_type::wait || t.type == flow::task_type::fork_join_dynamic
        || may_wait(t.loop_over) || may_wait(t.default_case))
      return true;
    for (const auto& c : t.decision_cases)
      if (may_wait(c.tasks))
        return true;
    for (const auto& b : t.fork_tasks)
      if (may_wait(b))
        return true;
  }
  return false;
}

/// Signals matter only to WAIT tasks, and a reset timeout clock only to workflows
/// with a timeout: the others skip the history read.
bool needs_history(const flow::workflow_def& def) {
  return def.timeout_seconds > 0 || may_wait(def.tasks);
}

/// A terminated workflow's running children are terminated with it, in the same
/// transaction, down the tree (Conductor's behaviour). Each child's end finds its
/// parent task already CANCELED and leaves it alone.
caf::expected<void> terminate_children(store::transaction& tx, const store::workflow_snapshot& s,
                                       const std::set<int16_t>& served, int partition_count,
                                       plan_effects& fx,
                                       int depth = 0) {
  constexpr int max_depth = 32;
  std::vector<workflow_id> children;
  for (const auto& t : s.tasks)
    if (t.type == flow::task_type::sub_workflow && !flow::is_terminal(t.status)
        && t.sub_workflow_id)
      children.push_back(*t.sub_workflow_id);
  if (children.empty() || depth >= max_depth)
    return {};
  auto snaps = store::load_snapshots(tx, children);
  if (!snaps)
    return std::move(snaps.error());
  for (const auto& child : *snaps) {
    command_request c;
    c.op = "terminate";
    c.id = child.id;
    c.reason = "parent workflow " + s.id.str() + " was terminated";
    auto plan = plan_state_command(c, child);
    if (!plan || !*plan)
      continue; // already ended
    if (auto r = apply_plans(tx, {**plan}, served, partition_count, fx); !r)
      return r;
    if (auto r = terminate_children(tx, child, served, partition_count, fx, depth + 1); !r)
      return r;
  }
  return {};
}

template <class T>
void fill(std::vector<caf::expected<T>>& xs, size_t n, const caf::error& err) {
  xs.clear();
  for (size_t i = 0; i < n; ++i)
    xs.emplace_back(err);
}

/// This process's steady clock in milliseconds.
int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

} // namespace

/// What one attempt of the transaction produced (discarded when it rolls back).
struct decider_core::attempt_state {
  std::vector<caf::expected<store::start_result>> starts;
  std::vector<caf::expected<std::string>> completions;
  std::vector<caf::expected<std::string>> commands;
  plan_effects fx;
  bool claim_full = false;  ///< the claim hit its limit: more rows may be waiting
  /// Workflows decide_claimed writes an evaluation of (the attempt fails as a whole if the
  /// writes do).
  std::set<std::string> evaluated;
  /// Workflows this transaction started in a served shard, with no "DecideQueues" row
  /// (store::start_workflows): decide_claimed evaluates them without a claim, from the
  /// executions the start statement returned (nothing else can have touched them yet).
  std::map<std::string, store::workflow_snapshot> rowless_starts;
  /// Workflows of served shards whose completions this transaction applied without a
  /// "DecideQueues" row (store::complete_tasks): decide_claimed evaluates them, claimed or
  /// not (a row another wake left may be claimed with them).
  std::set<std::string> rowless_completions;
  bool decide_again = false;
  /// Per expected workflow (the claim's read ahead), the last task row known_ holds of it:
  /// only the rows past it are read.
  std::vector<std::optional<task_id>> after;
  /// What this attempt's decisions leave known_ to hold of their workflows, once it commits
  /// (nullopt: nothing).
  std::map<std::string, std::optional<known_tasks>> learned;
  std::vector<lent_poll> lent;  ///< polls lent to this attempt (apply_plans)
  bool may_lend = true;
  /// The completions' facts may come from the lease memory (the first attempt only: a
  /// retry reads them, so a remembered lease that no longer holds cannot fail it again).
  bool may_recall = true;
  size_t recalled = 0;
  /// The completions' events of workflows this attempt decides are written by their
  /// decisions (store::completion_writes::deferred), each taken from here by its workflow's.
  bool may_defer = true;
  std::map<std::string, std::vector<store::event_write>> deferred;
  /// The completions' writes, added to a pipeline but not yet sent: they go with the
  /// claim and the reads (which must see them), in one round trip.
  store::pipeline* pending = nullptr;
  const store::completion_writes* pending_writes = nullptr;
  /// Or the starts' statement, in a batch of starts alone: it goes with the claim and the
  /// reads too, and its result is read from theirs (decider_core::note_starts).
  store::start_plan* pending_starts = nullptr;

  /// The completions applied whose ends were stamped seen for an evaluation this attempt
  /// does not make (I3): a workflow the claim did not hold, or a stale one. Their ends must
  /// wait unseen for the evaluation their "DecideQueues" row brings.
  std::vector<store::task_result> unevaluated(const batch_input& in) const {
    std::vector<store::task_result> out;
    for (size_t i = 0; i < completions.size(); ++i)
      if (completions[i] && evaluated.count(in.completions[i].workflow.str()) == 0)
        out.push_back(in.completions[i]);
    return out;
  }

  /// Sends the completions' writes on their own, when nothing is to go with them.
  caf::expected<void> flush_pending() {
    if (pending == nullptr)
      return {};
    if (pending_starts != nullptr)  // never: only a batch that reaches the claim defers them
      return store::make_error(store::errc::internal,
                               "the starts' statement was left for a claim that was not made");
    return store::run_transition(*std::exchange(pending, nullptr), pending_writes->plan,
                                 pending_writes->at);
  }
};

void batch_hints::note_timer(std::optional<int64_t> ms) {
  if (ms && (!earliest_timer_ms || *ms < *earliest_timer_ms))
    earliest_timer_ms = ms;
}

void batch_hints::merge(const batch_hints& o) {
  queues.insert(o.queues.begin(), o.queues.end());
  note_timer(o.earliest_timer_ms);
  timer_shards.insert(o.timer_shards.begin(), o.timer_shards.end());
  outbox_shards.insert(o.outbox_shards.begin(), o.outbox_shards.end());
  shards.insert(o.shards.begin(), o.shards.end());
}

decider_core::decider_core(int partition_count, std::string dsn, int batch_size,
                           std::shared_ptr<waiting_polls> waiting,
                           std::shared_ptr<lease_memory> leases)
  : partition_count_(partition_count), dsn_(std::move(dsn)), batch_size_(batch_size),
    waiting_(std::move(waiting)),
    leases_(leases ? std::move(leases) : std::make_shared<lease_memory>()) {
}

decider_core::~decider_core() = default;

std::vector<shard_id> decider_core::served_shards() const {
  std::vector<shard_id> out;
  out.reserve(shards_.size());
  for (auto s : shards_)
    out.push_back(shard_id{s});
  return out;
}

bool decider_core::ensure_connected(std::string& why) {
  if (conn_ && conn_->ok())
    return true;
  conn_.reset();
  defs_.clear();
  auto c = store::connection::open(dsn_);
  if (!c) {
    why = store::message_of(c.error());
    return false;
  }
  if (auto s = store::prefer_index_scans(*c); !s) {
    why = store::message_of(s.error());
    return false;
  }
  conn_ = std::make_unique<store::connection>(std::move(*c));
  return true;
}

batch_output decider_core::run(const batch_input& in) {
  auto t0 = std::chrono::steady_clock::now();
  batch_output out;
  out.stats.starts = in.starts.size();
  out.stats.completions = in.completions.size();
  out.stats.commands = in.commands.size();
  auto fail_all = [&](const caf::error& err) {
    fill(out.starts, in.starts.size(), err);
    fill(out.completions, in.completions.size(), err);
    fill(out.commands, in.commands.size(), err);
  };
  auto finish = [&]() -> batch_output {
    out.stats.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return std::move(out);
  };
  std::set<std::string> excluded;  // stale this batch: requeued, decided next time (I4)
  caf::error last;
  for (int pass = 1; pass <= max_attempts; ++pass) {
    out.stats.attempts = pass;
    std::string why;
    if (!ensure_connected(why)) {
      fail_all(unavailable("database unavailable: " + why));
      return finish();
    }
    attempt_state st;
    st.may_lend = pass == 1;
    st.may_recall = pass == 1;
    // Commands decide before the claim: a completion's event must not follow theirs.
    st.may_defer = pass == 1 && in.commands.empty();
    caf::error err;
    // Every poll lent goes back to its lessor; only a commit makes its leases real.
    auto give_back = [&](bool committed) {
      for (auto& l : st.lent) {
        if (!committed)
          l.tasks.clear();
        else
          leases_->remember(std::move(l.facts));
        l.facts.clear();
        out.stats.leased += l.tasks.size();
        out.lent.push_back(std::move(l));
      }
      st.lent.clear();
    };
    double waited_before = conn_->waited_ms();
    auto note_wait = [&] { out.stats.db_ms += conn_->waited_ms() - waited_before; };
    {
      store::transaction tx{*conn_};
      auto r = attempt(tx, in, excluded, st);
      if (r) {
        auto c = tx.commit();
        if (c) {
          note_wait();
          give_back(true);
          learn(st);
          out.starts = std::move(st.starts);
          out.completions = std::move(st.completions);
          out.commands = std::move(st.commands);
          out.hints = std::move(st.fx.hints);
          out.stats.workflows = st.fx.workflows;
          out.stats.tasks_scheduled = st.fx.tasks_scheduled;
          out.stats.recalled = st.recalled;
          out.more = st.fx.more_here || st.decide_again
                     || st.claim_full;
          return finish();
        }
        err = c.error();
      } else {
        err = r.error();
      }
    } // rolled back here unless committed
    note_wait();
    give_back(false);
    last = err;
    switch (store::code_of(err)) {
      case store::errc::stale:
        // I4: another owner evaluated these first. Their rows were rolled back with
        // ours; a fresh "DecideQueues" row makes sure they are evaluated again.
        if (!st.fx.stale.empty()) {
          out.stats.stale += st.fx.stale.size();
          for (const auto& id : st.fx.stale)
            excluded.insert(id.str());
          if (auto q = store::requeue(*conn_, st.fx.stale, "stale"); !q)
            folder_logger("decider")->warn("requeue_failed reason=\"{}\"",
                                           store::message_of(q.error()));
        }
        continue;
      case store::errc::retry_tx: continue;
      case store::errc::conn_broken: conn_.reset(); continue;
      case store::errc::in_doubt:
        conn_.reset();
        recover_in_doubt(in, out);
        return finish();
      default: fail_all(err); return finish();
    }
  }
  fail_all(unavailable("decider gave up after " + std::to_string(max_attempts)
                       + " attempts: " + store::message_of(last)));
  return finish();
}

caf::expected<void> decider_core::attempt(store::transaction& tx, const batch_input& in,
                                          const std::set<std::string>& excluded,
                                          attempt_state& st) {
  if (auto b = tx.begin(); !b)
    return b;
  // The starts and the completions' read of their leases go in one round trip.
  store::pipeline first{tx.conn()};
  store::start_plan start_plan;
  bool starting = false;
  if (!in.starts.empty()) {
    // Fast path (a), docs/engine.md §3: a start in a shard this decider serves is decided
    // in this transaction, so it needs no "DecideQueues" row (two row writes less).
    start_plan = store::plan_starts(in.starts, partition_count_, served_shards());
    starting = store::add_starts(first, start_plan);
  }
  // Each completion's facts: remembered for a lease this core's decision made, read with
  // the starts for the others.
  std::vector<std::optional<store::lease_facts>> facts(in.completions.size());
  std::vector<store::task_result> unknown;
  std::vector<size_t> unknown_at;
  if (!in.completions.empty()) {
    if (auto c = store::check_completions(in.completions); !c)
      return c;
    // The server's clock now, as far as this core can tell without asking it (before its
    // first claim it cannot: every lease is asked for, the writes' re-checks still hold).
    int64_t now_ms = server_offset_ms_ ? *server_offset_ms_ + steady_ms() : 0;
    for (size_t i = 0; i < in.completions.size(); ++i) {
      if (st.may_recall)
        facts[i] = leases_->recall(in.completions[i], now_ms);
      if (facts[i]) {
        ++st.recalled;
      } else {
        unknown.push_back(in.completions[i]);
        unknown_at.push_back(i);
      }
    }
    if (!unknown.empty())
      store::add_completion_read(first, unknown);
  }
  store::pipeline writes{tx.conn()};
  store::completion_writes completion_writes;
  std::vector<store::result> firsts;
  // Unless a read or a command needs a round trip of its own first, the starts and the
  // completions' writes go with the claim and the reads, which see them as they would a
  // round trip later: a flush of starts and remembered completions is two round trips.
  bool starts_with_claim = starting && unknown.empty() && in.commands.empty()
                           && !shards_.empty();
  if (starts_with_claim) {
    st.pending = &first;
    st.pending_starts = &start_plan;
  } else if (first.size() > 0) {
    auto r = first.run();
    if (!r)
      return std::move(r.error());
    firsts = std::move(*r);
  }
  if (!in.starts.empty() && !starts_with_claim) {
    // No statement when every request failed its checks: their answers are the plan's.
    std::vector<store::workflow_snapshot> created;
    auto started = starting ? store::starts_of(tx, in.starts, std::move(start_plan),
                                               firsts.front(), &created)
                            : caf::expected<std::vector<caf::expected<store::start_result>>>{
                              std::move(start_plan.out)};
    if (!started)
      return std::move(started.error());
    if (auto n = note_starts(std::move(*started), std::move(created), st); !n)
      return n;
  }
  if (!in.completions.empty()) {
    // Fast path (a) for completions: a workflow of a served shard is evaluated in this
    // transaction, unless an evaluation of it was stale this batch (it has a row again).
    std::set<workflow_id> decided_here;
    for (const auto& r : in.completions)
      if (shards_.count(shard_of(r.workflow.str(), partition_count_)) != 0
          && excluded.count(r.workflow.str()) == 0)
        decided_here.insert(r.workflow);
    // The writes go with the claim below (decide_claimed). Their answers hold if the
    // writes do; if a re-check under their locks fails, the attempt is rolled back.
    std::vector<store::completion> answers(in.completions.size(), store::completion::done);
    if (!unknown.empty()) {
      std::vector<store::completion> read_answers;
      auto read = store::lease_facts_of(unknown, firsts.back(), read_answers);
      for (size_t k = 0; k < unknown.size(); ++k) {
        facts[unknown_at[k]] = std::move(read[k]);
        answers[unknown_at[k]] = read_answers[k];
      }
    }
    // After the starts' statement when it waits for the claim (their results head the
    // pipeline's).
    auto& into = starts_with_claim ? first : writes;
    completion_writes = store::add_completion_writes(into, in.completions, facts,
                                                     std::move(answers), true, decided_here,
                                                     st.may_defer);
    st.deferred = std::move(completion_writes.deferred);
    st.pending = &into;
    st.pending_writes = &completion_writes;
    const auto& done = completion_writes.answers;
    for (size_t i = 0; i < done.size(); ++i) {
      const auto& r = in.completions[i];
      switch (done[i]) {
        case store::completion::done: {
          auto shard = shard_of(r.workflow.str(), partition_count_);
          if (decided_here.count(r.workflow) != 0)
            st.rowless_completions.insert(r.workflow.str());
          else if (shards_.count(shard) == 0)
            st.fx.hints.shards.insert(shard);  // as for a start above
          st.completions.emplace_back(completion_json(r));
          st.fx.hints.outbox_shards.insert(shard);
          break;
        }
        case store::completion::lease_lost:
          st.completions.emplace_back(store::make_error(store::errc::lease_lost, "lease lost"));
          break;
        case store::completion::not_found:
          st.completions.emplace_back(store::make_error(
            store::errc::not_found,
            "task " + r.task.str() + " of workflow " + r.workflow.str() + " not found"));
          break;
      }
    }
  }
  if (!in.commands.empty()) {
    // Commands read what the completions wrote.
    if (auto r = st.flush_pending(); !r)
      return r;
    if (auto r = run_commands(tx, in, st); !r)
      return r;
  }
  // The claim makes room for every workflow this batch enqueued itself, so each
  // start and completion is decided in its own commit (fast path a), whatever
  // older rows decider.batch_size lets in first. Those workflows are read with the
  // claim (store/decide_reads.hpp), and so are the stamps of their namespaces.
  auto limit = batch_size_ + static_cast<int>(in.starts.size() + in.completions.size());
  std::vector<workflow_id> expected;
  std::set<std::string> seen;
  auto expect = [&](const workflow_id& id) {
    if (excluded.count(id.str()) == 0 && seen.insert(id.str()).second)
      expected.push_back(id);
  };
  // The starts' executions come back from their own statement (note_starts): only their
  // namespaces' stamps are read with the claim.
  std::vector<namespace_id> namespaces = recent_namespaces_;
  auto note_namespace = [&](const namespace_id& ns) {
    if (std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end())
      namespaces.push_back(ns);
  };
  if (st.pending_starts != nullptr) {
    for (auto i : st.pending_starts->ok)
      note_namespace(in.starts[i].ns);
  } else {
    for (size_t i = 0; i < st.starts.size(); ++i)
      if (st.starts[i])
        note_namespace(in.starts[i].ns);
  }
  for (size_t i = 0; i < st.completions.size(); ++i)
    if (st.completions[i])
      expect(in.completions[i].workflow);
  std::vector<workflow_id> histories;
  for (const auto& id : expected) {
    if (without_history_.count(id.str()) == 0)
      histories.push_back(id);
    auto k = known_.find(id.str());
    st.after.push_back(k == known_.end() ? std::nullopt
                                         : std::optional<task_id>{k->second.rows.back().id});
  }
  if (auto r = decide_claimed(tx, in, excluded, limit, expected, histories, namespaces, st); !r)
    return r;
  // A completion's event no decision took would be lost: the attempt is made again, its
  // events written where the completion is (a retry defers nothing).
  if (!st.deferred.empty())
    return store::make_error(store::errc::retry_tx,
                             "the completions' events of " + std::to_string(st.deferred.size())
                               + " workflows were left to decisions that did not happen");
  if (auto r = st.flush_pending(); !r)
    return r;
  return store::unsee_tasks(tx, st.unevaluated(in));
}

caf::expected<void> decider_core::run_commands(store::transaction& tx, const batch_input& in,
                                               attempt_state& st) {
  // decide() runs with the server's clock in milliseconds: a clock in whole
  // seconds leaves a WAIT that is due later in the same second pending after
  // its timer fired, with nothing to wake it again.
  auto now = store::server_now_ms(tx.conn());
  if (!now)
    return std::move(now.error());
  auto now_ms = *now;
  // One at a time: commands are rare, and two on the same workflow must see each other.
  for (const auto& c : in.commands) {
    auto snaps = store::load_snapshots(tx, {c.id});
    if (!snaps)
      return std::move(snaps.error());
    if (snaps->empty()) {
      st.commands.emplace_back(
        store::make_error(store::errc::not_found, "workflow " + c.id.str() + " not found"));
      continue;
    }
    const auto& s = snaps->front();
    caf::expected<std::optional<workflow_plan>> plan{std::nullopt};
    if (c.op == "pause" || c.op == "resume" || c.op == "terminate") {
      plan = plan_state_command(c, s);
    } else {
      if (auto r = defs_.refresh(tx.conn(), {s.ns}); !r)
        return r;
      auto def = defs_.workflow_def(tx.conn(), s.ns, s.workflow_name, s.workflow_version);
      auto tdefs = defs_.task_defs(tx.conn(), s.ns);
      if (!tdefs)
        return std::move(tdefs.error());
      if (!def) {
        if (store::code_of(def.error()) != store::errc::not_found)
          return std::move(def.error());
        plan = def.error();
      } else {
        auto facts = store::load_history_facts(tx, {s.id});
        if (!facts)
          return std::move(facts.error());
        auto f = facts->find(s.id.str());
        auto p = plan_edit_command(c, s, **def, **tdefs, f == facts->end() ? nullptr : &f->second,
                                   now_ms);
        if (p)
          plan = std::optional<workflow_plan>{std::move(*p)};
        else
          plan = p.error();
      }
    }
    if (!plan) {
      st.commands.emplace_back(plan.error());
      continue;
    }
    auto status = s.status;
    if (*plan) {
      const auto& p = **plan;
      if (p.edit)
        status = p.edit->status;
      if (p.write.status)
        status = *p.write.status;
      if (auto r = apply_plans(tx, {p}, shards_, partition_count_, st.fx); !r)
        return r;
      if (c.op == "terminate")
        if (auto r = terminate_children(tx, s, shards_, partition_count_, st.fx); !r)
          return r;
    }
    st.commands.emplace_back(command_json(c, status));
  }
  return {};
}

caf::expected<void> decider_core::note_starts(std::vector<caf::expected<store::start_result>> started,
                               std::vector<store::workflow_snapshot> created,
                               attempt_state& st) {
  st.starts = std::move(started);
  std::map<std::string, store::workflow_snapshot> executions;
  for (auto& s : created)
    executions.emplace(s.id.str(), std::move(s));
  for (size_t i = 0; i < st.starts.size(); ++i) {
    const auto& r = st.starts[i];
    if (!r)
      continue;
    auto shard = r->shard.value();
    st.fx.hints.outbox_shards.insert(shard);
    if (shards_.count(shard) == 0)
      // Routed here before the node's committers shared the shards anew
      // (committer_split): its row waits for the committer that decides for it now.
      st.fx.hints.shards.insert(shard);
    else if (r->created) {
      // Never: the statement returns every execution it inserts. Without it the workflow
      // would be left with neither a decision nor a row that brings one.
      auto e = executions.find(r->id.str());
      if (e == executions.end())
        return store::make_error(store::errc::internal,
                                 "the start of workflow " + r->id.str() + " returned no execution");
      st.rowless_starts.emplace(r->id.str(), std::move(e->second));
    }
  }
  return {};
}

caf::expected<void> decider_core::decide_claimed(store::transaction& tx, const batch_input& in,
                                                 const std::set<std::string>& excluded,
                                                 int limit,
                                                 const std::vector<workflow_id>& expected,
                                                 const std::vector<workflow_id>& histories_expected,
                                                 const std::vector<namespace_id>& stamp_namespaces,
                                                 attempt_state& st) {
  auto& conn = tx.conn();
  if (shards_.empty())
    return st.flush_pending();
  auto shards = served_shards();
  // The clock is read after the claim, not at the transaction's start: a timer
  // that committed its wake-up after this transaction began (the claim still
  // sees it, READ COMMITTED) fired later than that start, and decide() must not
  // see its WAIT as not yet due.
  // The completions' writes go first in the claim's round trip: the reads see them.
  std::vector<store::result> rs;
  auto* pending = std::exchange(st.pending, nullptr);
  store::pipeline own{conn};
  auto& p = pending != nullptr ? *pending : own;
  auto reads = store::claim_and_read(p, rs, shards, limit, expected, histories_expected,
                                     stamp_namespaces, st.after);
  if (!reads)
    return std::move(reads.error());
  if (pending != nullptr && st.pending_writes != nullptr)
    if (auto w = store::transition_applied(st.pending_writes->plan, st.pending_writes->at, rs);
        !w)
      return w;
  if (auto* plan = std::exchange(st.pending_starts, nullptr)) {
    // The start statement's result heads the pipeline's.
    std::vector<store::workflow_snapshot> created;
    auto started = store::starts_of(tx, in.starts, std::move(*plan), rs.front(), &created);
    if (!started)
      return std::move(started.error());
    if (auto n = note_starts(std::move(*started), std::move(created), st); !n)
      return n;
  }
  const auto& claims = reads->claims;
  st.claim_full = static_cast<int>(claims.size()) >= limit;
  std::vector<workflow_id> ids;
  std::vector<namespace_id> namespaces;
  auto add = [&](const workflow_id& id, const namespace_id& ns) {
    ids.push_back(id);
    if (std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end())
      namespaces.push_back(ns);
  };
  std::set<std::string> claimed;
  for (const auto& c : claims) {
    // A stale one stays claimed (locked) but undecided: its row survives the commit.
    if (excluded.count(c.id.str()) != 0)
      continue;
    add(c.id, c.ns);
    claimed.insert(c.id.str());
  }
  // Nothing else can see a workflow this transaction started, so no one else can have
  // evaluated it (it is never stale), and it has no row to claim.
  for (const auto& [id, s] : st.rowless_starts)
    add(s.id, s.ns);
  // A rowless completion's workflow is evaluated whether or not the claim holds a row of
  // it. Another evaluation of it committing first makes this one stale (I4): the batch is
  // then retried with the workflow excluded, and its completion writes its row.
  for (const auto& s : reads->snapshots)
    if (st.rowless_completions.count(s.id.str()) != 0 && claimed.count(s.id.str()) == 0)
      add(s.id, s.ns);
  if (ids.empty())
    return {};
  recent_namespaces_ = namespaces;
  auto now_ms = reads->now_ms;
  server_offset_ms_ = now_ms - steady_ms();

  // The snapshots read with the claim, and those of what else it holds.
  std::set<std::string> read_ahead;
  for (const auto& id : expected)
    read_ahead.insert(id.str());
  std::map<std::string, store::workflow_snapshot> by_id;
  for (auto& s : reads->snapshots)
    by_id.emplace(s.id.str(), std::move(s));
  // A workflow read past the rows known_ holds takes them back, unless another evaluation
  // committed since that decision (its version moved): then it is read whole.
  for (size_t i = 0; i < expected.size() && i < st.after.size(); ++i) {
    if (!st.after[i])
      continue;
    auto s = by_id.find(expected[i].str());
    if (s == by_id.end())
      continue;
    auto k = known_.find(s->first);
    if (k != known_.end() && k->second.version == s->second.version) {
      auto& tasks = s->second.tasks;
      tasks.insert(tasks.begin(), k->second.rows.begin(), k->second.rows.end());
    } else {
      read_ahead.erase(s->first);
    }
  }
  for (auto& [id, s] : st.rowless_starts) {
    read_ahead.insert(id);
    by_id.emplace(id, std::move(s));
  }
  std::vector<workflow_id> rest;
  for (const auto& id : ids)
    if (read_ahead.count(id.str()) == 0)
      rest.push_back(id);
  if (!rest.empty()) {
    auto more = store::load_snapshots(tx, rest);
    if (!more)
      return std::move(more.error());
    for (auto& s : *more)
      by_id.insert_or_assign(s.id.str(), std::move(s));
  }
  std::vector<store::workflow_snapshot> snapshots;
  std::vector<workflow_id> orphans;
  for (const auto& id : ids) {
    auto it = by_id.find(id.str());
    if (it == by_id.end())
      orphans.push_back(id);
    else
      snapshots.push_back(std::move(it->second));
  }
  if (auto r = store::drop_decide_rows(tx, orphans); !r)
    return r;
  std::vector<namespace_id> unstamped;
  for (const auto& ns : namespaces)
    if (std::find(stamp_namespaces.begin(), stamp_namespaces.end(), ns) == stamp_namespaces.end())
      unstamped.push_back(ns);
  defs_.apply_stamps(reads->stamps, stamp_namespaces);
  if (auto r = defs_.refresh(conn, unstamped); !r)
    return r;

  // Definitions first: which workflows need history facts depends on them.
  struct item {
    const store::workflow_snapshot* snap;
    std::shared_ptr<const flow::workflow_def> def;
    std::shared_ptr<const flow::task_def_map> tasks;
    std::string def_error;
    bool history = false;  ///< the definition may need history facts (needs_history)
  };
  std::vector<item> items;
  std::vector<workflow_id> need_facts;
  for (const auto& s : snapshots) {
    item it{&s, nullptr, nullptr, {}, false};
    auto tdefs = defs_.task_defs(conn, s.ns);
    if (!tdefs)
      return std::move(tdefs.error());
    it.tasks = *tdefs;
    auto def = defs_.workflow_def(conn, s.ns, s.workflow_name, s.workflow_version);
    if (def) {
      it.def = *def;
      it.history = needs_history(*it.def);
      if (!flow::is_terminal(s.status) && it.history)
        need_facts.push_back(s.id);
    } else if (store::code_of(def.error()) == store::errc::not_found) {
      it.def_error = store::message_of(def.error());
    } else {
      return std::move(def.error());
    }
    items.push_back(std::move(it));
  }
  // A workflow this transaction started has no facts yet: its only event is its start.
  std::set<std::string> facts_read;
  for (const auto& id : histories_expected)
    facts_read.insert(id.str());
  for (const auto& [id, s] : st.rowless_starts)
    facts_read.insert(id);
  std::vector<workflow_id> facts_left;
  for (const auto& id : need_facts)
    if (facts_read.count(id.str()) == 0)
      facts_left.push_back(id);
  auto facts = store::load_history_facts(tx, facts_left);
  if (!facts)
    return std::move(facts.error());
  for (const auto& id : need_facts)
    if (auto f = reads->facts.find(id.str()); f != reads->facts.end())
      facts->insert(*f);

  std::vector<workflow_plan> plans;
  plans.reserve(items.size());
  for (const auto& it : items) {
    auto f = facts->find(it.snap->id.str());
    plans.push_back(plan_evaluation(*it.snap, it.def.get(), it.def_error, *it.tasks,
                                    f == facts->end() ? nullptr : &f->second, now_ms));
    st.decide_again = st.decide_again || plans.back().decide_again;
    if (auto d = st.deferred.find(it.snap->id.str()); d != st.deferred.end()) {
      plans.back().write.preceding = std::move(d->second);
      st.deferred.erase(d);
    }
    if (claimed.count(it.snap->id.str()) == 0) {
      // Only a row this transaction claimed (and holds locked) may be deleted: an unclaimed
      // one may carry a wake committed after the snapshot was read (I2).
      plans.back().write.dequeue = false;
      // Stopped early, it stays due: a rowless start or completion gets the row it was
      // spared.
      if (plans.back().decide_again)
        plans.back().requeue = true;
    }
    note_history_use(*it.snap, it.def && !it.history, plans.back());
  }
  // The first attempt leases to waiting polls; a retry does not, so whatever made the
  // attempt fail cannot be the lending, and the polls are back with their lessors.
  lending lend{st.may_lend ? waiting_.get() : nullptr, now_ms, &st.lent};
  // The decisions' writes are the transaction's last when attempt() has nothing to write
  // after them: no completion's event left without its decision, and no completion of a
  // workflow not evaluated here (whose end it stamps unseen again). Their COMMIT then goes
  // in their round trip: a flush takes three round trips instead of four.
  for (const auto& s : snapshots)
    st.evaluated.insert(s.id.str());
  bool last = st.deferred.empty() && st.unevaluated(in).empty();
  if (auto r = apply_plans(tx, plans, shards_, partition_count_, st.fx, &lend, last); !r)
    return r;
  for (size_t i = 0; i < items.size(); ++i)
    st.learned[items[i].snap->id.str()] = known_after(*items[i].snap, plans[i], st.fx);
  return {};
}

std::optional<decider_core::known_tasks>
decider_core::known_after(const store::workflow_snapshot& s, const workflow_plan& p,
                          const plan_effects& fx) {
  const auto& ends = p.write.status;
  if (flow::is_terminal(s.status) || (ends && flow::is_terminal(*ends)))
    return std::nullopt;  // no evaluation follows
  std::set<task_id> seen(p.write.seen.begin(), p.write.seen.end());
  known_tasks k;
  k.version = p.write.expected_version + 1;
  size_t n = 0;
  for (; n < s.tasks.size(); ++n) {
    const auto& t = s.tasks[n];
    // The write changes only tasks that are not terminal, and stamps seen exactly `seen`.
    if (!flow::is_terminal(t.status) || (t.unprocessed && seen.count(t.id) == 0))
      break;
    k.rows.push_back(t);
    k.rows.back().unprocessed = false;
  }
  // Every row not held must lie past the last one held, the rows this write inserts too:
  // their ids are the clock's, and a clock that stepped back could make one smaller.
  std::optional<task_id> lowest;
  for (size_t i = n; i < s.tasks.size(); ++i)
    if (!lowest || s.tasks[i].id < *lowest)
      lowest = s.tasks[i].id;
  if (auto f = fx.first_inserted.find(s.id.str()); f != fx.first_inserted.end())
    if (!lowest || f->second < *lowest)
      lowest = f->second;
  while (!k.rows.empty() && lowest && !(k.rows.back().id < *lowest))
    k.rows.pop_back();
  if (k.rows.empty())
    return std::nullopt;
  k.bytes = s.id.str().size();
  for (const auto& t : k.rows)
    k.bytes += sizeof(t) + t.input.size() + (t.output ? t.output->size() : 0)
               + (t.reason_for_incompletion ? t.reason_for_incompletion->size() : 0);
  return k;
}

void decider_core::learn(attempt_state& st) {
  // Bounded by the text the rows hold (task outputs can be large): past it, what is known
  // starts again from nothing.
  constexpr size_t max_known_bytes = size_t{32} << 20;
  for (auto& [id, k] : st.learned) {
    if (auto old = known_.find(id); old != known_.end()) {
      known_bytes_ -= old->second.bytes;
      known_.erase(old);
    }
    if (!k)
      continue;
    if (known_bytes_ + k->bytes > max_known_bytes) {
      known_.clear();
      known_bytes_ = 0;
    }
    known_bytes_ += k->bytes;
    known_.emplace(id, std::move(*k));
  }
}

void decider_core::note_history_use(const store::workflow_snapshot& s,
                                    bool defined_without_history, const workflow_plan& plan) {
  // Bounded: past this many running workflows the guesses start again from none.
  constexpr size_t max_remembered = 100000;
  const auto& ends = plan.write.status;
  bool running = !flow::is_terminal(s.status) && !(ends && flow::is_terminal(*ends));
  if (defined_without_history && running) {
    if (without_history_.size() >= max_remembered)
      without_history_.clear();
    without_history_.insert(s.id.str());
  } else {
    without_history_.erase(s.id.str());
  }
}

void decider_core::recover_in_doubt(const batch_input& in, batch_output& out) {
  // The commit's outcome is unknown: nothing is answered as done without reading it
  // back. A start has its id, so its row says whether it committed; a keyed start is
  // idempotent anyway (I10). Completions and commands cannot be told apart from a
  // later writer, so they are answered `unavailable` and the caller retries (a
  // completion that did commit then gets `lease lost`, never a second effect).
  auto doubt = unavailable("the database connection was lost while committing; the outcome "
                           "is unknown: retry");
  fill(out.completions, in.completions.size(), doubt);
  fill(out.commands, in.commands.size(), doubt);
  fill(out.starts, in.starts.size(), doubt);
  std::string why;
  if (in.starts.empty() || !ensure_connected(why))
    return;
  std::vector<workflow_id> ids;
  for (const auto& s : in.starts)
    ids.push_back(*s.id);
  auto existing = store::existing_workflows(*conn_, ids);
  if (!existing)
    return;
  batch_input again;
  std::vector<size_t> where;
  for (size_t i = 0; i < in.starts.size(); ++i) {
    if (existing->count(in.starts[i].id->str()) != 0)
      out.starts[i] = store::start_result{*in.starts[i].id, true,
                                          shard_id{shard_of(in.starts[i].id->str(),
                                                            partition_count_)}};
    else {
      again.starts.push_back(in.starts[i]);
      where.push_back(i);
    }
  }
  if (again.starts.empty())
    return;
  auto retried = run(again);
  for (size_t j = 0; j < where.size(); ++j)
    out.starts[where[j]] = std::move(retried.starts[j]);
  out.hints.merge(retried.hints);
  out.more = true;
}

workflow_id new_workflow_id_in(int16_t shard, int partition_count) {
  auto id = new_uuidv7();
  auto tail = static_cast<int>(std::stoi(id.substr(32), nullptr, 16));
  int p = partition_count;
  int v = tail - tail % p + shard;
  if (v > 0xffff)
    v -= p;
  static constexpr char hex[] = "0123456789abcdef";
  for (int i = 0; i < 4; ++i)
    id[35 - i] = hex[(v >> (4 * i)) & 0xf];
  return workflow_id{std::move(id)};
}

} // namespace nf::actors::decider
