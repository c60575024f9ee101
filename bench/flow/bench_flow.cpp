// bench_flow [--iterations N] [--only PREFIX]: latency of flow's hot paths, one JSON object per
// line with the median and p99 in microseconds and whether the target is met.
//   decide.sequence10  a decide() step in the middle of a 10-task sequence   < 50 µs
//   decide.fork100     the step that fans out a 100-way FORK_JOIN            < 1 ms
//   decide.join100     the step that joins it after the last branch ended    < 1 ms
//   decide.loop50      the step that ends a 50-iteration DO_WHILE            (no target)
//   load.workflow100   parse + validate a 100-task definition                < 200 µs
//   json.parse100      Boost.JSON parse of that same text alone: a yardstick for how
//                      loaded the machine is while the figures above were taken
// The clock is read here, never inside flow/.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>

#include "flow/apply.hpp"
#include "flow/decide.hpp"
#include "flow/validate.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

const char* only = "";

void report(const char* name, int iterations, double target_us,
            const std::function<void()>& body) {
  if (std::strncmp(name, only, std::strlen(only)) != 0)
    return;
  for (int i = 0; i < std::max(1, iterations / 10); ++i)
    body();  // warm up caches and allocators
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    auto t0 = clock_type::now();
    body();
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  double median = us[us.size() / 2];
  double p99 = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  std::string target = target_us > 0 ? std::to_string(target_us) : "null";
  std::string met = target_us > 0 ? (median < target_us ? "true" : "false") : "null";
  std::printf("{\"bench\":\"%s\",\"unit\":\"us\",\"iterations\":%d,\"median\":%.2f,\"p99\":%.2f,"
              "\"target\":%s,\"met\":%s}\n",
              name, iterations, median, p99, target.c_str(), met.c_str());
  std::fflush(stdout);
}

nf::flow::workflow_def load(const std::string& json) {
  auto r = nf::flow::load_workflow_def(json);
  if (!r.ok()) {
    std::fprintf(stderr, "bench definition invalid: %s\n", nf::flow::to_string(r.errors[0]).c_str());
    std::exit(1);
  }
  return r.def;
}

std::string simple(const std::string& ref, const std::string& input) {
  return R"({"name":"work","taskReferenceName":")" + ref + R"(","inputParameters":)" + input + "}";
}

std::string sequence_json(int n) {
  std::string tasks;
  for (int i = 0; i < n; ++i) {
    std::string input = i == 0 ? R"({"id":"${workflow.input.id}"})"
                               : R"({"id":"${workflow.input.id}","prev":"${t)" + std::to_string(i - 1)
                                   + R"(.output.v}","tag":"step-${workflow.workflowId}"})";
    tasks += (i ? "," : "") + simple("t" + std::to_string(i), input);
  }
  return R"({"name":"seq","tasks":[)" + tasks + R"(],"outputParameters":{"v":"${t)"
         + std::to_string(n - 1) + R"(.output.v}"}})";
}

// Completes every active worker task, then decides and applies until quiet.
void finish_active(nf::flow::snapshot& s, nf::flow::time_ms now) {
  for (auto& e : s.tasks)
    if (!nf::flow::is_terminal(e.status) && e.type == nf::flow::task_type::simple) {
      e.status = nf::flow::task_status::completed;
      e.output = {{"v", 1}};
      e.end_time = now;
    }
}

nf::flow::snapshot advance(const nf::flow::workflow_def& def, const nf::flow::task_def_map& defs,
                       nf::flow::snapshot s, nf::flow::time_ms now) {
  for (;;) {
    auto d = nf::flow::decide(def, defs, s, now);
    bool progress = !d.schedule.empty() || !d.updates.empty() || d.status.has_value();
    s = nf::flow::apply(std::move(s), d, now);
    if (!progress)
      return s;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 2000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--iterations") == 0)
      iterations = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--only") == 0)
      only = argv[i + 1];
  const nf::flow::task_def_map defs;
  const nf::flow::time_ms now = 1'700'000'000'000;
  volatile std::size_t sink = 0;

  {  // 10-task sequence: the step after task 5 completed schedules task 6
    auto def = load(sequence_json(10));
    auto s = nf::flow::start_snapshot(def, "wf-bench", {{"id", "order-1"}}, now);
    for (int i = 0; i < 5; ++i) {
      s = advance(def, defs, std::move(s), now);
      finish_active(s, now);
    }
    report("decide.sequence10", iterations, 50,
           [&] { sink += nf::flow::decide(def, defs, s, now).schedule.size(); });
  }
  {  // 100-way fork, then its join
    std::string branches, refs;
    for (int i = 0; i < 100; ++i) {
      branches += std::string(i ? "," : "") + "[" + simple("b" + std::to_string(i), R"({"i":)" + std::to_string(i) + "}") + "]";
      refs += std::string(i ? "," : "") + "\"b" + std::to_string(i) + "\"";
    }
    auto def = load(R"({"name":"fork","tasks":[{"name":"fork","taskReferenceName":"fork","type":"FORK_JOIN","forkTasks":[)"
                    + branches + R"(]},{"name":"join","taskReferenceName":"join","type":"JOIN","joinOn":[)" + refs + "]}]}");
    auto s = nf::flow::start_snapshot(def, "wf-bench", {}, now);
    report("decide.fork100", iterations, 1000,
           [&] { sink += nf::flow::decide(def, defs, s, now).schedule.size(); });
    s = advance(def, defs, std::move(s), now);
    finish_active(s, now);
    report("decide.join100", iterations, 1000,
           [&] { sink += nf::flow::decide(def, defs, s, now).updates.size(); });
  }
  {  // 50-iteration loop: the step that evaluates the last iteration and ends the loop
    auto def = load(R"({"name":"loop","tasks":[{"name":"loop","taskReferenceName":"loop","type":"DO_WHILE",
      "loopCondition":"$.loop['iteration'] < 50","loopOver":[)" + simple("x", R"({"i":"${loop.output.iteration}"})")
                    + "]}]}");
    auto s = nf::flow::start_snapshot(def, "wf-bench", {}, now);
    for (int i = 0; i < 50; ++i) {
      s = advance(def, defs, std::move(s), now);
      finish_active(s, now);
    }
    report("decide.loop50", iterations, 0,
           [&] { sink += nf::flow::decide(def, defs, s, now).updates.size(); });
  }
  {  // parse + validate a 100-task definition
    auto text = sequence_json(100);
    report("load.workflow100", iterations, 200,
           [&] { sink += nf::flow::load_workflow_def(text).def.tasks.size(); });
    report("json.parse100", iterations, 0,
           [&] { sink += boost::json::parse(text).as_object().size(); });
  }
  return sink == 0 ? 1 : 0;
}
