#include "engine/decide/batch.hpp"

#include <utility>

#include "proto/errors.hpp"

// Group commit makes every request of a flush share one transaction, so a value Postgres
// refuses (a 3 KB idempotency key past the btree row limit, a NUL in an output) would fail
// every start and completion committed with it. The batch is run again in halves: a half
// without the culprit commits, the half with it splits again, down to the request that
// fails alone. log2(n) extra transactions per culprit, and none while nothing fails.

namespace nf::engine {

namespace {

size_t requests(const batch_input& in) {
  return in.starts.size() + in.completions.size() + in.commands.size();
}

/// The requests of `in` from `from` (in the order starts, completions, commands) up to `to`.
batch_input slice(const batch_input& in, size_t from, size_t to) {
  batch_input out;
  size_t at = 0;
  auto take = [&](const auto& xs, auto& into) {
    for (const auto& x : xs) {
      if (at >= from && at < to)
        into.push_back(x);
      ++at;
    }
  };
  take(in.starts, out.starts);
  take(in.completions, out.completions);
  take(in.commands, out.commands);
  return out;
}

template <class T>
void append(std::vector<T>& to, std::vector<T>& from) {
  for (auto& x : from)
    to.push_back(std::move(x));
}

void merge(batch_output& into, batch_output& o) {
  append(into.starts, o.starts);
  append(into.completions, o.completions);
  append(into.commands, o.commands);
  into.hints.merge(o.hints);
  append(into.lent, o.lent);
  auto& s = into.stats;
  s.starts += o.stats.starts;
  s.completions += o.stats.completions;
  s.commands += o.stats.commands;
  s.workflows += o.stats.workflows;
  s.tasks_scheduled += o.stats.tasks_scheduled;
  s.leased += o.stats.leased;
  s.recalled += o.stats.recalled;
  s.stale += o.stats.stale;
  s.attempts += o.stats.attempts;
  s.db_ms += o.stats.db_ms;
  into.more = into.more || o.more;
}

/// The field a refused value most likely came from, named by the index or column in
/// Postgres's message ("" when it names none of them).
std::string field_of(const std::string& message) {
  if (message.find("IdempotencyKeys") != std::string::npos)
    return "idempotency_key";
  if (message.find("correlation") != std::string::npos)
    return "correlation_id";
  if (message.find("workflowName") != std::string::npos
      || message.find("ns_name") != std::string::npos
      || message.find("active_idx") != std::string::npos)
    return "workflow_name";
  return {};
}

/// `err` as the answer of the one request that failed alone.
caf::error alone(const caf::error& err) {
  auto state = nf::sqlstate_of(err);
  if (state.empty())  // the engine's own refusal already says what is wrong
    return err;
  auto why = nf::message_of(err);
  auto field = field_of(why);
  std::string text = (field.empty() ? std::string{} : field + ": ") + "refused by the database, "
                     "nothing of this request was applied (" + why + ")";
  // A program limit (54000: a value too wide for its index) is the caller's input too.
  auto code = state.rfind("54", 0) == 0 ? nf::errc::invalid : nf::code_of(err);
  return nf::make_error(code, std::move(text), std::move(state));
}

} // namespace

bool one_request_may_fail(const caf::error& err) {
  auto code = nf::code_of(err);
  if (code == nf::errc::invalid || code == nf::errc::conflict)
    return true;
  auto s = nf::sqlstate_of(err);
  return s.size() == 5
         && (s.rfind("22", 0) == 0 || s.rfind("23", 0) == 0 || s.rfind("54", 0) == 0);
}

batch_output decider_core::run_apart(const batch_input& in, const caf::error& err) {
  auto n = requests(in);
  batch_output out;
  if (n <= 1) {
    auto e = alone(err);
    for (size_t i = 0; i < in.starts.size(); ++i)
      out.starts.emplace_back(e);
    for (size_t i = 0; i < in.completions.size(); ++i)
      out.completions.emplace_back(e);
    for (size_t i = 0; i < in.commands.size(); ++i)
      out.commands.emplace_back(e);
    out.stats.starts = in.starts.size();
    out.stats.completions = in.completions.size();
    out.stats.commands = in.commands.size();
    return out;
  }
  // Each half claims too: what the served shards left pending is decided either way.
  auto first = run(slice(in, 0, n / 2));
  auto second = run(slice(in, n / 2, n));
  merge(out, first);
  merge(out, second);
  return out;
}

} // namespace nf::engine
