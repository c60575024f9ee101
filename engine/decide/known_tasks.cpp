// What the decider keeps of the task rows it decided last, so that the next snapshot of
// a running workflow reads only the rows that are new.

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

} // namespace nf::engine
