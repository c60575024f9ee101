#define CAF_SUITE flow.property
#include "caf/test/unit_test.hpp"

// Random valid definitions, random worker behaviour, under a printed seed:
// NF_FLOW_SEED=<n> replays a run, NF_FLOW_CASES=<n> changes its size.
//   (a) decide() on the same snapshot twice gives the same decision;
//   (b) no decision schedules an identity the snapshot already holds;
//   (c) every workflow reaches a terminal state with nothing left running;
//   (d) no task is scheduled (and no JOIN completes) before its predecessors ended.

#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include <boost/json/serialize.hpp>

#include "flow/apply.hpp"
#include "flow/decide.hpp"
#include "flow/def_index.hpp"
#include "flow/loop_frame.hpp"
#include "flow/parse.hpp"
#include "flow/serialise.hpp"
#include "flow/validate.hpp"

using namespace nf::flow;

namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// -- random definitions -------------------------------------------------------

class generator {
 public:
  explicit generator(std::mt19937_64& rng) : rng_(rng) {
  }

  boost::json::object workflow(boost::json::object& input) {
    input_ = &input;
    next_ = 0;
    budget_ = 3 + pick(10);
    input["k"] = std::string(1, static_cast<char>('a' + pick(3)));
    boost::json::object wf{{"name", "random"}, {"version", 1}};
    wf["tasks"] = block(0, false, true);
    if (pick(4) == 0)
      wf["failureWorkflow"] = "cleanup";
    if (pick(3) == 0)
      wf["outputParameters"] = boost::json::object{{"k", "${workflow.input.k}"}};
    return wf;
  }

  static task_def_map task_defs() {
    task_def_map m;
    auto add = [&](const char* json) {
      auto r = load_task_def(json);
      m.emplace(r.def.name, r.def);
    };
    add(R"({"name":"t1","retryCount":2,"retryLogic":"FIXED","retryDelaySeconds":1})");
    add(R"({"name":"t2","retryCount":1,"retryLogic":"EXPONENTIAL_BACKOFF","retryDelaySeconds":1,
            "backoffJitterMs":500,"pollTimeoutSeconds":30,"timeoutPolicy":"RETRY"})");
    add(R"({"name":"t3","retryCount":1,"retryLogic":"LINEAR_BACKOFF","retryDelaySeconds":2,
            "timeoutSeconds":20,"timeoutPolicy":"TIME_OUT_WF"})");
    return m;
  }

 private:
  std::mt19937_64& rng_;
  boost::json::object* input_ = nullptr;
  int next_ = 0;
  int budget_ = 0;

  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }

  std::string ref(const char* kind) { return kind + std::to_string(next_++); }

  boost::json::object base(const std::string& r, const char* type) {
    boost::json::object t{{"name", r}, {"taskReferenceName", r}, {"type", type}};
    if (pick(8) == 0)
      t["optional"] = true;
    return t;
  }

  boost::json::array block(int depth, bool in_loop, bool top) {
    boost::json::array out;
    int n = 1 + pick(top ? 4 : 3);
    std::vector<std::string> earlier;
    for (int i = 0; i < n && (budget_ > 0 || i == 0); ++i) {
      --budget_;
      int kind = depth >= 3 ? pick(8) : pick(14);
      if (kind == 7 && i + 1 < n)
        kind = 0;  // TERMINATE only ends a list
      add(out, kind, depth, in_loop, earlier);
      earlier.push_back(out.back().as_object().at("taskReferenceName").as_string().c_str());
    }
    return out;
  }

  void add(boost::json::array& out, int kind, int depth, bool in_loop,
           const std::vector<std::string>& earlier) {
    switch (kind) {
      case 0:
      case 1:
      case 2: {  // SIMPLE with one of the task definitions (t0 is unregistered)
        auto r = ref("s");
        auto t = base(r, "SIMPLE");
        t["name"] = "t" + std::to_string(pick(4));
        boost::json::object in{{"k", "${workflow.input.k}"}};
        if (!earlier.empty())
          in["prev"] = "${" + earlier[static_cast<std::size_t>(pick(static_cast<int>(earlier.size())))]
                       + ".output.v}";
        t["inputParameters"] = std::move(in);
        if (pick(10) == 0)
          t["startDelay"] = 1;
        out.push_back(std::move(t));
        return;
      }
      case 3: {
        auto r = ref("h");
        auto t = base(r, "HTTP");
        t["inputParameters"] = boost::json::object{
          {"http_request", boost::json::object{{"uri", "http://example.invalid"}, {"method", "POST"}}}};
        out.push_back(std::move(t));
        return;
      }
      case 4: {
        auto r = ref("w");
        auto t = base(r, "WAIT");
        t["inputParameters"] = pick(2) == 0 ? boost::json::object{{"duration", "1s"}}
                                            : boost::json::object{{"signal", "go"}};
        out.push_back(std::move(t));
        return;
      }
      case 5: {
        auto r = ref("v");
        auto t = base(r, "SET_VARIABLE");
        t["inputParameters"] = boost::json::object{{"last", r}};
        out.push_back(std::move(t));
        return;
      }
      case 6: {
        auto r = ref("j");
        bool transform = pick(2) == 0;
        auto t = base(r, transform ? "JSON_TRANSFORM" : "SUB_WORKFLOW");
        if (transform)
          t["inputParameters"] = boost::json::object{
            {"in", "${workflow.input}"}, {"mapping", boost::json::object{{"k", "$.in.k"}}}};
        else
          t["subWorkflowParam"] = boost::json::object{{"name", "child"}};
        out.push_back(std::move(t));
        return;
      }
      case 7: {
        auto r = ref("x");
        auto t = base(r, "TERMINATE");
        static const char* statuses[] = {"COMPLETED", "FAILED", "TERMINATED"};
        t["inputParameters"] = boost::json::object{{"terminationStatus", statuses[pick(3)]}};
        out.push_back(std::move(t));
        return;
      }
      case 8:
      case 9: {
        auto r = ref("sw");
        auto t = base(r, "SWITCH");
        if (pick(2) == 0) {
          t["evaluatorType"] = "value-param";
          t["expression"] = "k";
        } else {
          t["evaluatorType"] = "javascript";
          t["expression"] = "$.k == 'a' ? 'a' : 'b'";
        }
        t["inputParameters"] = boost::json::object{{"k", "${workflow.input.k}"}};
        t["decisionCases"] = boost::json::object{{"a", block(depth + 1, in_loop, false)},
                                                 {"b", block(depth + 1, in_loop, false)}};
        if (pick(2) == 0)
          t["defaultCase"] = block(depth + 1, in_loop, false);
        out.push_back(std::move(t));
        return;
      }
      case 10:
      case 11: {
        auto r = ref("f");
        auto t = base(r, "FORK_JOIN");
        t.erase("optional");
        boost::json::array branches;
        boost::json::array join_on;
        int n = 2 + pick(2);
        for (int b = 0; b < n; ++b) {
          auto branch = block(depth + 1, in_loop, false);
          const auto& last = branch.back().as_object();
          if (b == 0 || pick(2) == 0)
            join_on.push_back(last.at("taskReferenceName"));
          branches.push_back(std::move(branch));
        }
        t["forkTasks"] = std::move(branches);
        out.push_back(std::move(t));
        auto j = base(ref("jn"), "JOIN");
        j.erase("optional");
        j["joinOn"] = std::move(join_on);
        out.push_back(std::move(j));
        return;
      }
      case 12: {  // loops nest too (their bodies run once per outer iteration)
        auto r = ref("l");
        auto t = base(r, "DO_WHILE");
        t["loopCondition"] = "$." + r + "['iteration'] < " + std::to_string(1 + pick(3));
        t["loopOver"] = block(depth + 1, true, false);
        out.push_back(std::move(t));
        return;
      }
      default: {
        auto r = ref("d");
        auto t = base(r, "FORK_JOIN_DYNAMIC");
        t.erase("optional");
        t["dynamicForkTasksParam"] = "tasks";
        t["dynamicForkTasksInputParamName"] = "inputs";
        t["inputParameters"] = boost::json::object{{"tasks", "${workflow.input." + r + "}"},
                                                   {"inputs", boost::json::object{}}};
        boost::json::array children;
        for (int c = 0, n = pick(4); c < n; ++c)
          children.push_back(boost::json::object{{"name", "t" + std::to_string(pick(4))},
                                                 {"taskReferenceName", r + "c" + std::to_string(c)}});
        (*input_)[r] = std::move(children);
        out.push_back(std::move(t));
        auto j = base(ref("jn"), "JOIN");
        j.erase("optional");
        out.push_back(std::move(j));
        return;
      }
    }
  }
};

// -- checking one run ----------------------------------------------------------

struct checker {
  const workflow_def& def;
  const def_index index;
  std::string failure;

  explicit checker(const workflow_def& d) : def(d), index(d) {
  }

  static const task_execution* latest(const snapshot& s, std::string_view ref,
                                      std::int32_t iteration) {
    const task_execution* best = nullptr;
    for (const auto& e : s.tasks)
      if (e.id.ref == ref && e.id.iteration == iteration
          && (best == nullptr || best->id.attempt < e.id.attempt))
        best = &e;
    return best;
  }

  bool ended_ok(const snapshot& s, std::string_view ref, std::int32_t iteration) const {
    const auto* e = latest(s, ref, iteration);
    return e != nullptr && is_successful(e->status);
  }

  // Where an execution stands: the definition's task and its loop frame.
  std::pair<const task_info*, loop_frame> where(const task_identity& id) const {
    auto s = split_stored_ref(id.ref, index);
    return {s.info, frame_of(s, id.iteration)};
  }

  static bool has_prefix(const loop_frame& f, const loop_frame& p) {
    return f.path().size() >= p.path().size()
           && std::equal(p.path().begin(), p.path().end(), f.path().begin());
  }

  // Everything inside `t` (run in frame `fr`) has ended: its content cannot still run.
  bool content_ended(const snapshot& s, const workflow_task& t, const loop_frame& fr) const {
    std::vector<const workflow_task*> inside;
    for (const auto& c : t.decision_cases)
      def_index::subtree(c.tasks, inside);
    def_index::subtree(t.default_case, inside);
    def_index::subtree(t.loop_over, inside);
    std::set<std::string_view> refs;
    for (const auto* x : inside)
      refs.insert(x->task_reference_name);
    for (const auto& e : s.tasks) {
      auto [info, f] = where(e.id);
      if (info == nullptr || refs.count(info->task->task_reference_name) == 0)
        continue;
      // A loop's content runs in its iterations' frames, any other in its own.
      bool same = has_prefix(f, fr)
                  && (t.type == task_type::do_while || f.path().size() == fr.path().size());
      if (same && !is_terminal(latest(s, e.id.ref, e.id.iteration)->status))
        return false;
    }
    return true;
  }

  void fail(std::string what) {
    if (failure.empty())
      failure = std::move(what);
  }

  // (d) for one inserted execution, against the snapshot with the decision applied.
  void predecessors(const snapshot& after, const scheduled_task& st) {
    const auto& id = st.id;
    auto who = to_string(id);
    if (id.attempt > 0) {
      bool previous_ended = false;
      for (const auto& e : after.tasks)
        if (e.id.ref == id.ref && e.id.iteration == id.iteration && e.id.attempt == id.attempt - 1)
          previous_ended = is_terminal(e.status);
      if (!previous_ended)
        fail(who + " retried before its previous attempt ended");
      return;
    }
    auto [info, fr] = where(id);
    if (info == nullptr) {  // a dynamically forked task: its fork must have completed
      for (const auto& e : after.tasks)
        if (e.type == task_type::fork_join_dynamic && e.id.iteration == id.iteration
            && e.status == task_status::completed)
          if (const auto* f = e.output.if_contains("forkedTasks"))
            for (const auto& c : f->as_array())  // named in the fork's frame
              if (std::string(c.as_string()) + where(e.id).second.suffix() == id.ref)
                return;
      fail(who + " scheduled without a completed FORK_JOIN_DYNAMIC");
      return;
    }
    if (info->index > 0) {
      const auto& prev = (*info->block)[info->index - 1];
      if (!ended_ok(after, fr.ref(prev.task_reference_name), id.iteration))
        fail(who + " scheduled before " + prev.task_reference_name + " ended");
      else if (prev.type != task_type::fork_join && prev.type != task_type::fork_join_dynamic
               && !content_ended(after, prev, fr))
        fail(who + " scheduled while tasks inside " + prev.task_reference_name + " still run");
      return;
    }
    if (info->parent == nullptr)
      return;
    const auto& parent = *info->parent;
    if (parent.type == task_type::do_while) {
      auto around = fr.outer(info->depth - 1);
      const auto* loop = latest(after, around.ref(parent.task_reference_name), around.iteration());
      if (loop == nullptr)
        fail(who + " scheduled before its DO_WHILE");
      auto before = around.inner(id.iteration - 1);
      if (id.iteration > 1)
        for (const auto* b : index.frame_body(&parent))
          if (const auto* e = latest(after, before.ref(b->task_reference_name), id.iteration - 1);
              e != nullptr && !is_terminal(e->status))
            fail(who + " started an iteration while " + b->task_reference_name + " still runs");
    } else if (!ended_ok(after, fr.ref(parent.task_reference_name), id.iteration)) {
      fail(who + " scheduled before " + parent.task_reference_name + " completed");
    }
  }

  // (d) for JOINs: completed only once every joined task has ended.
  void joins(const snapshot& after, const task_update& u) {
    if (u.status != task_status::completed)
      return;
    auto [info, fr] = where(u.id);
    if (info == nullptr || info->task->type != task_type::join)
      return;
    for (const auto& ref : info->task->join_on)
      if (const auto* e = latest(after, fr.ref(ref), u.id.iteration);
          e != nullptr && !is_terminal(e->status))
        fail(u.id.ref + " completed while " + ref + " still runs");
  }
};

struct run_result {
  std::string failure;
  workflow_status status = workflow_status::running;
  int steps = 0;
};

run_result run_one(const workflow_def& def, const task_def_map& defs, boost::json::object input,
                   std::mt19937_64& rng) {
  checker check(def);
  time_ms now = 1'700'000'000'000;
  snapshot snap = start_snapshot(def, "wf-" + std::to_string(rng() % 1000), std::move(input), now);
  std::map<std::pair<timer_kind, task_identity>, time_ms> timers;
  std::int64_t signal_seq = 0;
  run_result res;
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (; res.steps < 3000; ++res.steps) {
    auto d = decide(def, defs, snap, now);
    if (!(decide(def, defs, snap, now) == d)) {  // (a)
      check.fail("decide() is not deterministic");
      break;
    }
    std::set<task_identity> existing;
    for (const auto& e : snap.tasks)
      existing.insert(e.id);
    for (const auto& st : d.schedule)  // (b)
      if (!existing.insert(st.id).second)
        check.fail("scheduled " + to_string(st.id) + " twice");
    for (const auto& c : d.cancel)
      timers.erase({c.kind, c.task});
    for (const auto& t : d.arm)
      timers[{t.kind, t.task}] = t.fire_at;
    snap = apply(std::move(snap), d, now);
    for (const auto& st : d.schedule)  // (d)
      check.predecessors(snap, st);
    for (const auto& u : d.updates)
      check.joins(snap, u);
    if (!check.failure.empty())
      break;
    if (d.decide_again)
      continue;
    if (is_terminal(snap.status))
      break;
    // The world acts: a worker finishes, fails or starts a task, a signal
    // arrives, or time passes.
    std::vector<task_execution*> ready;
    bool waits_for_signal = false;
    time_ms next_time = INT64_MAX;
    for (auto& e : snap.tasks) {
      if (is_terminal(e.status) || check.latest(snap, e.id.ref, e.id.iteration) != &e)
        continue;
      if (e.type == task_type::wait)
        waits_for_signal |= e.input.contains("signal");
      if (e.type != task_type::simple && e.type != task_type::http
          && e.type != task_type::sub_workflow)
        continue;
      time_ms available = e.scheduled_time + e.start_delay_ms;
      if (available <= now)
        ready.push_back(&e);
      else
        next_time = std::min(next_time, available);
    }
    for (const auto& [k, at] : timers)
      if (at > now)
        next_time = std::min(next_time, at);
    auto roll = pick(100);
    if (waits_for_signal && (ready.empty() || roll < 10)) {
      snap.signals.push_back({++signal_seq, "go", boost::json::object{{"n", signal_seq}}, now});
    } else if (!ready.empty() && roll >= 5) {
      auto& e = *ready[pick(ready.size())];
      auto what = pick(100);
      if (e.start_time == 0) {
        e.start_time = now;
      }
      if (what < 12 && e.status == task_status::scheduled) {
        e.status = task_status::in_progress;
      } else if (what < 30) {
        e.status = what < 27 ? task_status::failed : task_status::failed_with_terminal_error;
        e.reason_for_incompletion = "random failure";
        e.end_time = now;
      } else {
        e.status = task_status::completed;
        e.output = boost::json::object{{"v", static_cast<std::int64_t>(pick(10))}};
        e.end_time = now;
      }
    } else if (next_time != INT64_MAX) {
      now = roll < 5 && !ready.empty() ? now + 1 + static_cast<time_ms>(pick(5000)) : next_time;
    } else if (!ready.empty()) {
      now += 1 + static_cast<time_ms>(pick(5000));
    } else {
      check.fail("stuck: RUNNING with nothing to run and no timer");  // (c)
      break;
    }
  }
  if (check.failure.empty() && !is_terminal(snap.status))
    check.fail("did not end within " + std::to_string(res.steps) + " steps");  // (c)
  if (check.failure.empty())
    for (const auto& e : snap.tasks)
      if (!is_terminal(e.status) && check.latest(snap, e.id.ref, e.id.iteration) == &e)
        check.fail(to_string(e.id) + " still " + std::string(to_string(e.status))
                   + " after the workflow ended");
  res.failure = check.failure;
  res.status = snap.status;
  return res;
}

}  // namespace

CAF_TEST(random definitions and orderings) {
  const auto seed = env_number("NF_FLOW_SEED", std::random_device{}());
  const auto cases = env_number("NF_FLOW_CASES", 10'000);
  CAF_MESSAGE("seed " << seed << " (replay: NF_FLOW_SEED=" << seed << "), cases " << cases);
  std::mt19937_64 rng(seed);
  const auto defs = generator::task_defs();
  std::size_t failures = 0, invalid = 0, round_trip = 0;
  std::map<std::string, std::size_t> endings;
  for (std::uint64_t i = 0; i < cases && failures < 5; ++i) {
    boost::json::object input;
    generator gen(rng);
    auto text = boost::json::serialize(gen.workflow(input));
    auto loaded = load_workflow_def(text);
    if (!loaded.ok()) {
      if (++invalid <= 3)
        CAF_MESSAGE("generated invalid definition " << text << ": "
                                                    << to_string(loaded.errors.front()));
      continue;
    }
    problems errs;
    if (read_workflow_def(to_json(loaded.def), "", errs) != loaded.def || !errs.empty())
      ++round_trip;
    auto res = run_one(loaded.def, defs, input, rng);
    ++endings[std::string(to_string(res.status))];
    if (!res.failure.empty()) {
      ++failures;
      CAF_MESSAGE("case " << i << " (seed " << seed << "): " << res.failure << "\n  definition "
                          << text << "\n  input " << boost::json::serialize(input));
    }
  }
  for (const auto& [status, n] : endings)
    CAF_MESSAGE(status << ": " << n);
  CAF_CHECK_EQUAL(invalid, 0u);
  CAF_CHECK_EQUAL(round_trip, 0u);
  CAF_CHECK_EQUAL(failures, 0u);
  // A generator that only ever fails would check little: every ending occurs.
  CAF_CHECK_GREATER(endings["COMPLETED"], 0u);
  CAF_CHECK_GREATER(endings["FAILED"], 0u);
}
