// The claim of pending evaluations and their decisions: read the snapshots, run
// flow::decide(), write the plans, in the transaction the batch shares.

#include "engine/decide/attempt_state.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "config/folder_logger.hpp"
#include "engine/decide/cached_outputs.hpp"
#include "store/decide_reads.hpp"
#include "store/index_scans.hpp"
#include "store/partition_fence.hpp"
#include "store/sharding.hpp"

namespace nf::engine {

namespace {

bool may_wait(const std::vector<flow::workflow_task>& tasks) {
  for (const auto& t : tasks) {
    // A dynamic fork may fork WAIT tasks the definition does not name.
    if (t.type == flow::task_type::wait || t.type == flow::task_type::human
        || t.type == flow::task_type::fork_join_dynamic
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

/// Signals matter only to WAIT and HUMAN tasks, and a reset timeout clock only to workflows
/// with a timeout: the others skip the history read.
bool needs_history(const flow::workflow_def& def) {
  return def.timeout_seconds > 0 || may_wait(def.tasks);
}

} // namespace

/// What one claim holds to evaluate, filled in by decide_claimed's steps in turn.
struct decider_core::claimed_work {
  store::decide_reads reads;  ///< the claim's round trip (its snapshots move to `snapshots`)
  std::vector<workflow_id> ids;          ///< the workflows to evaluate, in order
  std::vector<namespace_id> namespaces;  ///< theirs, each once
  std::set<std::string> claimed;  ///< of `ids`, those whose "DecideQueues" row the claim holds
  std::vector<store::workflow_snapshot> snapshots;  ///< of `ids` that exist, in order

  /// A snapshot with its definitions.
  struct evaluation {
    const store::workflow_snapshot* snap;  ///< into `snapshots`
    std::shared_ptr<const flow::workflow_def> def;
    std::shared_ptr<const flow::task_def_map> tasks;
    std::string def_error;
    bool history = false;  ///< the definition may need history facts (needs_history)
  };
  std::vector<evaluation> evaluations;  ///< one per snapshot, in order
  std::vector<workflow_id> need_facts;  ///< running workflows whose definitions may need facts
  std::map<std::string, store::history_facts> facts;  ///< of `need_facts`, those with any
};

caf::expected<void> decider_core::decide_claimed(store::transaction& tx, const batch_input& in,
                                                 const claim_ahead& ahead, attempt_state& st) {
  if (shards_.empty())
    return st.unsent.flush();
  claimed_work work;
  if (auto r = read_claim(tx, in, ahead, work, st); !r)
    return r;
  choose_workflows(ahead, work, st);
  if (work.ids.empty())
    return {};
  recent_namespaces_ = work.namespaces;
  server_offset_ms_ = work.reads.now_ms - ms_of(now_());
  if (auto r = read_snapshots(tx, ahead, work, st); !r)
    return r;
  if (auto r = read_definitions(tx.conn(), ahead, work); !r)
    return r;
  if (auto r = read_history_facts(tx, ahead, work, st); !r)
    return r;
  auto plans = plan_evaluations(tx.conn(), work, st);
  if (!plans)
    return std::move(plans.error());
  return write_evaluations(tx, in, work, *plans, st);
}

caf::expected<void> decider_core::read_claim(store::transaction& tx, const batch_input& in,
                                             const claim_ahead& ahead, claimed_work& work,
                                             attempt_state& st) {
  // The clock is read after the claim, not at the transaction's start: a timer
  // that committed its wake-up after this transaction began (the claim still
  // sees it, READ COMMITTED) fired later than that start, and decide() must not
  // see its WAIT as not yet due.
  // The completions' writes go first in the claim's round trip: the reads see them.
  std::vector<store::result> rs;
  auto unsent = st.unsent.take();
  store::pipeline own{tx.conn()};
  auto& p = unsent.pipeline != nullptr ? *unsent.pipeline : own;
  // The claim and what this transaction writes for the served shards hold only while
  // this node still owns them at their epochs: a stale owner's attempt is refused here.
  store::add_fence_check(p, fence_);
  auto reads = store::claim_and_read(p, rs, served_shards(), ahead.limit, ahead.expected,
                                     ahead.histories, ahead.stamp_namespaces, ahead.after);
  if (!reads)
    return std::move(reads.error());
  if (unsent.writes != nullptr)
    if (auto w = store::transition_applied(unsent.writes->plan, unsent.writes->at, rs); !w)
      return w;
  if (unsent.starts != nullptr) {
    // The start statement's result heads the pipeline's.
    std::vector<store::workflow_snapshot> created;
    auto started = store::starts_of(tx, in.starts, std::move(*unsent.starts), rs.front(),
                                    &created);
    if (!started)
      return std::move(started.error());
    if (auto n = note_starts(std::move(*started), std::move(created), st); !n)
      return n;
  }
  work.reads = std::move(*reads);
  st.claim_full = static_cast<int>(work.reads.claims.size()) >= ahead.limit;
  return {};
}

void decider_core::choose_workflows(const claim_ahead& ahead, claimed_work& work,
                                    const attempt_state& st) {
  auto add = [&](const workflow_id& id, const namespace_id& ns) {
    work.ids.push_back(id);
    auto& nss = work.namespaces;
    if (std::find(nss.begin(), nss.end(), ns) == nss.end())
      nss.push_back(ns);
  };
  for (const auto& c : work.reads.claims) {
    // A stale one stays claimed (locked) but undecided: its row survives the commit.
    if (ahead.excluded.count(c.id.str()) != 0)
      continue;
    add(c.id, c.ns);
    work.claimed.insert(c.id.str());
  }
  // Nothing else can see a workflow this transaction started, so no one else can have
  // evaluated it (it is never stale), and it has no row to claim.
  for (const auto& [id, s] : st.rowless_starts)
    add(s.id, s.ns);
  // A rowless completion's workflow is evaluated whether or not the claim holds a row of
  // it. Another evaluation of it committing first makes this one stale (I4): the batch is
  // then retried with the workflow excluded, and its completion writes its row.
  for (const auto& s : work.reads.snapshots)
    if (st.rowless_completions.count(s.id.str()) != 0 && work.claimed.count(s.id.str()) == 0)
      add(s.id, s.ns);
}

caf::expected<void> decider_core::read_snapshots(store::transaction& tx, const claim_ahead& ahead,
                                                 claimed_work& work, attempt_state& st) {
  // The snapshots read with the claim, and those of what else it holds.
  std::set<std::string> read_ahead;
  for (const auto& id : ahead.expected)
    read_ahead.insert(id.str());
  std::map<std::string, store::workflow_snapshot> by_id;
  for (auto& s : work.reads.snapshots)
    by_id.emplace(s.id.str(), std::move(s));
  // A workflow read past the rows known_ holds takes them back, unless another evaluation
  // committed since that decision (its version moved): then it is read whole.
  for (size_t i = 0; i < ahead.expected.size() && i < ahead.after.size(); ++i) {
    if (!ahead.after[i])
      continue;
    auto s = by_id.find(ahead.expected[i].str());
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
  for (const auto& id : work.ids)
    if (read_ahead.count(id.str()) == 0)
      rest.push_back(id);
  if (!rest.empty()) {
    auto more = store::load_snapshots(tx, rest);
    if (!more)
      return std::move(more.error());
    for (auto& s : *more)
      by_id.insert_or_assign(s.id.str(), std::move(s));
  }
  std::vector<workflow_id> orphans;
  for (const auto& id : work.ids) {
    auto it = by_id.find(id.str());
    if (it == by_id.end())
      orphans.push_back(id);
    else
      work.snapshots.push_back(std::move(it->second));
  }
  return store::drop_decide_rows(tx, orphans);
}

caf::expected<void> decider_core::read_definitions(store::connection& conn,
                                                   const claim_ahead& ahead,
                                                   claimed_work& work) {
  const auto& stamped = ahead.stamp_namespaces;
  std::vector<namespace_id> unstamped;
  for (const auto& ns : work.namespaces)
    if (std::find(stamped.begin(), stamped.end(), ns) == stamped.end())
      unstamped.push_back(ns);
  defs_.apply_stamps(work.reads.stamps, stamped);
  if (auto r = defs_.refresh(conn, unstamped); !r)
    return r;
  // Definitions first: which workflows need history facts depends on them.
  for (const auto& s : work.snapshots) {
    claimed_work::evaluation e{&s, nullptr, nullptr, {}, false};
    auto tdefs = defs_.task_defs(conn, s.ns);
    if (!tdefs)
      return std::move(tdefs.error());
    e.tasks = *tdefs;
    auto def = defs_.workflow_def(conn, s.ns, s.workflow_name, s.workflow_version);
    if (def) {
      e.def = *def;
      e.history = needs_history(*e.def);
      if (!flow::is_terminal(s.status) && e.history)
        work.need_facts.push_back(s.id);
    } else if (nf::code_of(def.error()) == nf::errc::not_found) {
      e.def_error = nf::message_of(def.error());
    } else {
      return std::move(def.error());
    }
    work.evaluations.push_back(std::move(e));
  }
  return {};
}

caf::expected<void> decider_core::read_history_facts(store::transaction& tx,
                                                     const claim_ahead& ahead,
                                                     claimed_work& work,
                                                     const attempt_state& st) {
  // A workflow this transaction started has no facts yet: its only event is its start.
  std::set<std::string> facts_read;
  for (const auto& id : ahead.histories)
    facts_read.insert(id.str());
  for (const auto& [id, s] : st.rowless_starts)
    facts_read.insert(id);
  std::vector<workflow_id> facts_left;
  for (const auto& id : work.need_facts)
    if (facts_read.count(id.str()) == 0)
      facts_left.push_back(id);
  auto facts = store::load_history_facts(tx, facts_left);
  if (!facts)
    return std::move(facts.error());
  work.facts = std::move(*facts);
  for (const auto& id : work.need_facts)
    if (auto f = work.reads.facts.find(id.str()); f != work.reads.facts.end())
      work.facts.insert(*f);
  return {};
}

caf::expected<std::vector<workflow_plan>>
decider_core::plan_evaluations(store::connection& conn, const claimed_work& work,
                               attempt_state& st) {
  auto plan_one = [&](std::size_t i, const flow::cached_outputs* cached) {
    const auto& e = work.evaluations[i];
    auto f = work.facts.find(e.snap->id.str());
    return plan_evaluation(*e.snap, e.def.get(), e.def_error, *e.tasks,
                           f == work.facts.end() ? nullptr : &f->second, work.reads.now_ms,
                           cached);
  };
  std::vector<workflow_plan> plans;
  plans.reserve(work.evaluations.size());
  for (std::size_t i = 0; i < work.evaluations.size(); ++i)
    plans.push_back(plan_one(i, nullptr));
  // Before anything is written: a task completed from the cache is inserted COMPLETED in the
  // decision's own write, so no worker can see it.
  auto from_cache = complete_from_cache(conn, plans,
                                        [&](std::size_t i, const flow::cached_outputs& found) {
                                          return plan_one(i, &found);
                                        });
  if (!from_cache)
    return std::move(from_cache.error());
  for (std::size_t i = 0; i < work.evaluations.size(); ++i) {
    const auto& e = work.evaluations[i];
    auto& plan = plans[i];
    st.decide_again = st.decide_again || plan.decide_again;
    if (auto d = st.deferred.find(e.snap->id.str()); d != st.deferred.end()) {
      plan.write.preceding = std::move(d->second);
      st.deferred.erase(d);
    }
    if (work.claimed.count(e.snap->id.str()) == 0) {
      // Only a row this transaction claimed (and holds locked) may be deleted: an unclaimed
      // one may carry a wake committed after the snapshot was read (I2).
      plan.write.dequeue = false;
      // Stopped early, it stays due: a rowless start or completion gets the row it was
      // spared.
      if (plan.decide_again)
        plan.requeue = true;
    }
    note_history_use(*e.snap, e.def && !e.history, plan);
  }
  return plans;
}

/// The task ends this attempt's completions applied, of the workflows it evaluates: their
/// rows were stamped seen with the completion (I3), so note_task_ends (plans.cpp), which
/// counts the rows read unprocessed, does not see them. A completion of a workflow not
/// evaluated here is stamped unseen again, and counted by the evaluation that takes it in.
void decider_core::count_completed(const batch_input& in, const claimed_work& work,
                                   attempt_state& st) {
  std::map<std::string, std::set<std::string>> done;  // workflow → tasks
  for (size_t i = 0; i < in.completions.size() && i < st.completions.size(); ++i)
    if (st.completions[i])
      done[in.completions[i].workflow.str()].insert(in.completions[i].task.str());
  if (done.empty())
    return;
  for (const auto& e : work.evaluations) {
    auto d = done.find(e.snap->id.str());
    if (d == done.end())
      continue;
    for (const auto& t : e.snap->tasks)
      if (!t.unprocessed && flow::is_terminal(t.status) && d->second.count(t.id.str()) != 0)
        st.fx.counts.task_ends.emplace_back(t.task_def_name, t.status);
  }
}

caf::expected<void> decider_core::write_evaluations(store::transaction& tx, const batch_input& in,
                                                    const claimed_work& work,
                                                    const std::vector<workflow_plan>& plans,
                                                    attempt_state& st) {
  lending lend{st.rules.lend ? waiting_.get() : nullptr, work.reads.now_ms, &st.lent};
  // The decisions' writes are the transaction's last when attempt() has nothing to write
  // after them: no completion's event left without its decision, and no completion of a
  // workflow not evaluated here (whose end it stamps unseen again). Their COMMIT then goes
  // in their round trip: a flush takes three round trips instead of four.
  for (const auto& s : work.snapshots)
    st.evaluated.insert(s.id.str());
  bool last = st.deferred.empty() && st.unevaluated(in).empty();
  if (auto r = apply_plans(tx, plans, shards_, partition_count_, st.fx, &lend, last); !r)
    return r;
  const auto& evs = work.evaluations;
  count_completed(in, work, st);
  for (size_t i = 0; i < evs.size(); ++i)
    st.learned[evs[i].snap->id.str()] = known_after(*evs[i].snap, plans[i], st.fx);
  return {};
}

} // namespace nf::engine
