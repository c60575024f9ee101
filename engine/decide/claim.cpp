// The claim of pending evaluations and their decisions: read the snapshots, run
// flow::decide(), write the plans, in the transaction the batch shares.

#include "engine/decide/attempt_state.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "config/folder_logger.hpp"
#include "store/decide_reads.hpp"
#include "store/index_scans.hpp"
#include "store/sharding.hpp"

namespace nf::engine {

namespace {

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

} // namespace

caf::expected<void> decider_core::decide_claimed(store::transaction& tx, const batch_input& in,
                                                 const claim_ahead& ahead, attempt_state& st) {
  const auto& excluded = ahead.excluded;
  const auto limit = ahead.limit;
  const auto& expected = ahead.expected;
  const auto& histories_expected = ahead.histories;
  const auto& stamp_namespaces = ahead.stamp_namespaces;
  auto& conn = tx.conn();
  if (shards_.empty())
    return st.unsent.flush();
  auto shards = served_shards();
  // The clock is read after the claim, not at the transaction's start: a timer
  // that committed its wake-up after this transaction began (the claim still
  // sees it, READ COMMITTED) fired later than that start, and decide() must not
  // see its WAIT as not yet due.
  // The completions' writes go first in the claim's round trip: the reads see them.
  std::vector<store::result> rs;
  auto unsent = st.unsent.take();
  store::pipeline own{conn};
  auto& p = unsent.pipeline != nullptr ? *unsent.pipeline : own;
  auto reads = store::claim_and_read(p, rs, shards, limit, expected, histories_expected,
                                     stamp_namespaces, ahead.after);
  if (!reads)
    return std::move(reads.error());
  if (unsent.writes != nullptr)
    if (auto w = store::transition_applied(unsent.writes->plan, unsent.writes->at, rs); !w)
      return w;
  if (auto* plan = unsent.starts) {
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
  server_offset_ms_ = now_ms - clock_->now_ms();

  // The snapshots read with the claim, and those of what else it holds.
  std::set<std::string> read_ahead;
  for (const auto& id : expected)
    read_ahead.insert(id.str());
  std::map<std::string, store::workflow_snapshot> by_id;
  for (auto& s : reads->snapshots)
    by_id.emplace(s.id.str(), std::move(s));
  // A workflow read past the rows known_ holds takes them back, unless another evaluation
  // committed since that decision (its version moved): then it is read whole.
  for (size_t i = 0; i < expected.size() && i < ahead.after.size(); ++i) {
    if (!ahead.after[i])
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
    } else if (nf::code_of(def.error()) == nf::errc::not_found) {
      it.def_error = nf::message_of(def.error());
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
  lending lend{st.rules.lend ? waiting_.get() : nullptr, now_ms, &st.lent};
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

} // namespace nf::engine
