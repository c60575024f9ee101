#include "sim.hpp"

#include <cstdio>
#include <cstdlib>

#include "flow/apply.hpp"
#include "flow/parse.hpp"
#include "flow/validate.hpp"

namespace nf::flow::test {

namespace {

[[noreturn]] void broken(std::string_view what, const problems& errs) {
  std::fprintf(stderr, "broken test fixture: %.*s\n", static_cast<int>(what.size()), what.data());
  for (const auto& p : errs)
    std::fprintf(stderr, "  %s\n", to_string(p).c_str());
  std::abort();
}

}  // namespace

workflow_def workflow(std::string_view json) {
  auto r = load_workflow_def(json);
  if (!r.ok())
    broken(json, r.errors);
  return std::move(r.def);
}

task_def task_definition(std::string_view json) {
  auto r = load_task_def(json);
  if (!r.ok())
    broken(json, r.errors);
  return std::move(r.def);
}

boost::json::object object(std::string_view json) {
  boost::json::value v;
  problems errs;
  if (!parse_json(json, v, errs) || !v.is_object())
    broken(json, errs);
  return v.get_object();
}

std::string label(const task_identity& id) {
  std::string s = id.ref;
  if (id.iteration != 0)
    s += '@' + std::to_string(id.iteration);
  if (id.attempt != 0)
    s += '+' + std::to_string(id.attempt);
  return s;
}

sim::sim(workflow_def d, task_def_map ds, std::string_view input, time_ms start)
  : def(std::move(d)), defs(std::move(ds)), now(start) {
  snap = start_snapshot(def, "wf-1", object(input), now);
  settle();
}

void sim::settle() {
  for (int i = 0; i < 100; ++i) {
    auto d = decide(def, defs, snap, now, nullptr, &ids);
    bool progress = !d.schedule.empty() || !d.updates.empty() || d.status.has_value()
                    || !d.variables.empty() || d.decide_again;
    snap = apply(std::move(snap), d, now);
    decisions.push_back(std::move(d));
    if (!progress)
      return;
  }
  std::fprintf(stderr, "decide() did not settle in 100 rounds\n");
  std::abort();
}

const task_execution* sim::find(std::string_view ref, std::int32_t iteration) const {
  const task_execution* best = nullptr;
  for (const auto& e : snap.tasks)
    if (e.id.ref == ref && e.id.iteration == iteration
        && (best == nullptr || best->id.attempt < e.id.attempt))
      best = &e;
  return best;
}

const task_execution& sim::task(std::string_view ref, std::int32_t iteration) const {
  const auto* e = find(ref, iteration);
  if (e == nullptr) {
    std::fprintf(stderr, "no execution of %.*s@%d\n", static_cast<int>(ref.size()), ref.data(),
                 iteration);
    std::abort();
  }
  return *e;
}

task_execution& sim::active(std::string_view ref, std::int32_t iteration) {
  auto& e = const_cast<task_execution&>(task(ref, iteration));
  if (is_terminal(e.status)) {
    std::fprintf(stderr, "%s is already %s\n", label(e.id).c_str(),
                 std::string(to_string(e.status)).c_str());
    std::abort();
  }
  return e;
}

void sim::start(std::string_view ref, std::int32_t iteration) {
  auto& e = active(ref, iteration);
  e.status = task_status::in_progress;
  e.start_time = now;
}

void sim::complete(std::string_view ref, std::string_view output, std::int32_t iteration) {
  auto& e = active(ref, iteration);
  if (e.start_time == 0)
    e.start_time = now;
  e.status = task_status::completed;
  e.output = object(output);
  e.end_time = now;
  settle();
}

void sim::fail(std::string_view ref, std::string_view reason, std::int32_t iteration,
               task_status status) {
  auto& e = active(ref, iteration);
  if (e.start_time == 0)
    e.start_time = now;
  e.status = status;
  e.reason_for_incompletion = std::string(reason);
  e.end_time = now;
  settle();
}

void sim::advance(std::int64_t ms) {
  now += ms;
  settle();
}

void sim::signal(std::string name, std::string_view payload) {
  snap.signals.push_back({next_signal_++, std::move(name), object(payload), now});
  settle();
}

void sim::update_by_ref(std::string ref, std::string status, std::string_view output) {
  snap.signals.push_back(
    {next_signal_++, {}, object(output), now, std::move(ref), std::move(status)});
  settle();
}

std::string sim::scheduled() const {
  std::string out;
  for (const auto& d : decisions)
    for (const auto& st : d.schedule) {
      if (!out.empty())
        out += ' ';
      out += label(st.id);
    }
  return out;
}

const decision& sim::ending() const {
  for (const auto& d : decisions)
    if (d.status && is_terminal(*d.status))
      return d;
  std::fprintf(stderr, "the workflow has not ended\n");
  std::abort();
}

std::string sim::events() const {
  std::string out;
  for (const auto& d : decisions)
    for (const auto& e : d.events) {
      if (!out.empty())
        out += ' ';
      out += e.type;
    }
  return out;
}

} // namespace nf::flow::test
