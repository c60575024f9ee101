#include "engine/decide/batch.hpp"
#include "engine/decide/attempt_state.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "engine/decide/counting.hpp"
#include "engine/decide/plans.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "config/folder_logger.hpp"
#include "store/decide_reads.hpp"
#include "store/decide_support.hpp"
#include "store/decisions.hpp"
#include "store/index_scans.hpp"
#include "store/partition_fence.hpp"
#include "proto/errors.hpp"
#include "store/sharding.hpp"

namespace nf::engine {

namespace {

constexpr int max_attempts = 8;

caf::error unavailable(const std::string& why) {
  return nf::make_error(nf::errc::unavailable, why);
}

std::string completion_json(const store::task_result& r) {
  const char* status = r.outcome == store::task_outcome::completed ? "COMPLETED"
                       : r.outcome == store::task_outcome::failed  ? "FAILED"
                                                                   : "FAILED_WITH_TERMINAL_ERROR";
  return boost::json::serialize(boost::json::object{
    {"taskId", r.task.str()}, {"workflowId", r.workflow.str()}, {"status", status}});
}


template <class T>
void fill(std::vector<caf::expected<T>>& xs, size_t n, const caf::error& err) {
  xs.clear();
  for (size_t i = 0; i < n; ++i)
    xs.emplace_back(err);
}

} // namespace


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
                           std::shared_ptr<lease_memory> leases,
                           steady_now now)
  : partition_count_(partition_count), dsn_(std::move(dsn)), batch_size_(batch_size),
    now_(now ? std::move(now) : steady_now{std::chrono::steady_clock::now}),
    waiting_(std::move(waiting)),
    leases_(leases ? std::move(leases) : std::make_shared<lease_memory>()),
    counting_(std::make_unique<decide_counting>()) {
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
    why = nf::message_of(c.error());
    return false;
  }
  if (auto s = store::prefer_index_scans(*c); !s) {
    why = nf::message_of(s.error());
    return false;
  }
  conn_ = std::make_unique<store::connection>(std::move(*c));
  return true;
}

batch_output decider_core::run(const batch_input& in) {
  auto t0 = now_();
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
      std::chrono::duration<double, std::milli>(now_() - t0).count();
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
    st.rules = attempt_rules::for_pass(pass, in);
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
          for (size_t i = 0; i < st.starts.size(); ++i)
            if (st.starts[i] && st.starts[i]->created)
              counting_->started(in.starts[i].name);
          counting_->record(st.fx.counts);
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
    if (store::is_fenced(err)) {
      // Another node owns these shards now: the batch runs again without them, so the
      // starts and completions it carries are answered as any node's are.
      drop_fenced(err, out);
      continue;
    }
    switch (nf::code_of(err)) {
      case nf::errc::stale:
        // I4: another owner evaluated these first. Their rows were rolled back with
        // ours; a fresh "DecideQueues" row makes sure they are evaluated again.
        if (!st.fx.stale.empty()) {
          out.stats.stale += st.fx.stale.size();
          for (const auto& id : st.fx.stale)
            excluded.insert(id.str());
          if (auto q = store::requeue(*conn_, st.fx.stale, "stale"); !q)
            folder_logger("decider")->warn("requeue_failed reason=\"{}\"",
                                           nf::message_of(q.error()));
        }
        continue;
      case nf::errc::retry_tx: continue;
      case nf::errc::conn_broken: conn_.reset(); continue;
      case nf::errc::in_doubt:
        conn_.reset();
        recover_in_doubt(in, out);
        return finish();
      default:
        if (one_request_may_fail(err)) {
          auto apart = run_apart(in, err);
          apart.stats.attempts += out.stats.attempts;
          apart.stats.stale += out.stats.stale;
          apart.stats.db_ms += out.stats.db_ms;
          apart.stats.leased += out.stats.leased;
          for (auto& l : out.lent)
            apart.lent.push_back(std::move(l));
          out = std::move(apart);
          return finish();
        }
        fail_all(err);
        return finish();
    }
  }
  fail_all(unavailable("decider gave up after " + std::to_string(max_attempts)
                       + " attempts: " + nf::message_of(last)));
  return finish();
}

void decider_core::drop_fenced(const caf::error& err, batch_output& out) {
  auto parts = store::fenced_partitions(err);
  if (parts.empty())
    parts.assign(shards_.begin(), shards_.end());  // unreadable: claim none until re-served
  auto& refused = metrics::node_metrics().stale_writes_refused.with({"decider"});
  for (auto p : parts) {
    auto e = fence_.epochs.find(p);
    folder_logger("decider")->warn("stale_write_refused writer=decider partition={} epoch={} "
                                   "detail=\"{}\"",
                                   p, e == fence_.epochs.end() ? 0 : e->second,
                                   nf::message_of(err));
    refused.inc();
    shards_.erase(p);
    if (e != fence_.epochs.end())
      fence_.epochs.erase(e);
    out.fenced.push_back(p);
  }
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
    int64_t now_ms = server_offset_ms_ ? *server_offset_ms_ + ms_of(now_()) : 0;
    for (size_t i = 0; i < in.completions.size(); ++i) {
      if (st.rules.recall)
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
    st.unsent.pipeline = &first;
    st.unsent.starts = &start_plan;
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
                                                     st.rules.defer);
    st.deferred = std::move(completion_writes.deferred);
    st.unsent.pipeline = &into;
    st.unsent.writes = &completion_writes;
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
          st.completions.emplace_back(nf::make_error(nf::errc::lease_lost, "lease lost"));
          break;
        case store::completion::not_found:
          st.completions.emplace_back(nf::make_error(
            nf::errc::not_found,
            "task " + r.task.str() + " of workflow " + r.workflow.str() + " not found"));
          break;
      }
    }
  }
  if (!in.commands.empty()) {
    // Commands read what the completions wrote.
    if (auto r = st.unsent.flush(); !r)
      return r;
    if (auto r = run_commands(tx, in, st); !r)
      return r;
  }
  auto ahead = claim_ahead_of(in, excluded, st);
  if (auto r = decide_claimed(tx, in, ahead, st); !r)
    return r;
  // A completion's event no decision took would be lost: the attempt is made again, its
  // events written where the completion is (a retry defers nothing).
  if (!st.deferred.empty())
    return nf::make_error(nf::errc::retry_tx,
                             "the completions' events of " + std::to_string(st.deferred.size())
                               + " workflows were left to decisions that did not happen");
  if (auto r = st.unsent.flush(); !r)
    return r;
  return store::unsee_tasks(tx, st.unevaluated(in));
}


decider_core::claim_ahead decider_core::claim_ahead_of(const batch_input& in,
                                                       const std::set<std::string>& excluded,
                                                       const attempt_state& st) const {
  // The claim makes room for every workflow this batch enqueued itself, so each
  // start and completion is decided in its own commit (fast path a), whatever
  // older rows decider.batch_size lets in first. Those workflows are read with the
  // claim (store/decide_reads.hpp), and so are the stamps of their namespaces.
  claim_ahead ahead{excluded};
  ahead.limit = batch_size_ + static_cast<int>(in.starts.size() + in.completions.size());
  std::set<std::string> seen;
  auto expect = [&](const workflow_id& id) {
    if (excluded.count(id.str()) == 0 && seen.insert(id.str()).second)
      ahead.expected.push_back(id);
  };
  // The starts' executions come back from their own statement (note_starts): only their
  // namespaces' stamps are read with the claim.
  auto& namespaces = ahead.stamp_namespaces;
  namespaces = recent_namespaces_;
  auto note_namespace = [&](const namespace_id& ns) {
    if (std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end())
      namespaces.push_back(ns);
  };
  if (st.unsent.starts != nullptr) {
    for (auto i : st.unsent.starts->ok)
      note_namespace(in.starts[i].ns);
  } else {
    for (size_t i = 0; i < st.starts.size(); ++i)
      if (st.starts[i])
        note_namespace(in.starts[i].ns);
  }
  for (size_t i = 0; i < st.completions.size(); ++i)
    if (st.completions[i])
      expect(in.completions[i].workflow);
  for (const auto& id : ahead.expected) {
    if (without_history_.count(id.str()) == 0)
      ahead.histories.push_back(id);
    auto k = known_.find(id.str());
    ahead.after.push_back(k == known_.end() ? std::nullopt
                                            : std::optional<task_id>{k->second.rows.back().id});
  }
  return ahead;
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
    {
      out.starts[i] = store::start_result{*in.starts[i].id, true,
                                          shard_id{shard_of(in.starts[i].id->str(),
                                                            partition_count_)}};
      counting_->started(in.starts[i].name);
    }
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

} // namespace nf::engine
