#include "tests/fault/harness/load.hpp"

#include <boost/json.hpp>

namespace nf::fault {

namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

json::object step(const std::string& ref, const std::string& n_from) {
  return {{"name", "fh_step"},
          {"taskReferenceName", ref},
          {"inputParameters", json::object{{"n", n_from}}}};
}

} // namespace

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

std::string workload_definitions(int fan_width, int wait_s, int response_timeout_s) {
  json::array defs;
  // A lease lost with its node (kill, pause, cut link) times out and is retried as a
  // new attempt; retries are plentiful so a run of faults never fails a workflow.
  for (const char* name : {"fh_step", "fh_poison_step"})
    defs.push_back(json::object{{"name", name},
                                {"retryCount", 20},
                                {"retryDelaySeconds", 0},
                                {"responseTimeoutSeconds", response_timeout_s},
                                {"timeoutSeconds", 0},
                                {"timeoutPolicy", "RETRY"}});
  json::array chain;
  for (int i = 0; i < 10; ++i)
    chain.push_back(step("s" + std::to_string(i), i == 0 ? "${workflow.input.n}"
                                                         : "${s" + std::to_string(i - 1)
                                                             + ".output.n}"));
  defs.push_back(json::object{{"name", "fh_chain"},
                              {"version", 1},
                              {"inputParameters", json::array{"n"}},
                              {"tasks", chain},
                              {"outputParameters", json::object{{"n", "${s9.output.n}"}}}});
  json::array branches, join_on;
  for (int i = 0; i < fan_width; ++i) {
    auto ref = "b" + std::to_string(i);
    branches.push_back(json::array{step(ref, "${workflow.input.n}")});
    join_on.push_back(json::value(ref));
  }
  defs.push_back(json::object{
    {"name", "fh_fan"},
    {"version", 1},
    {"inputParameters", json::array{"n"}},
    {"tasks", json::array{json::object{{"name", "fan"},
                                       {"taskReferenceName", "fan"},
                                       {"type", "FORK_JOIN"},
                                       {"forkTasks", branches}},
                          json::object{{"name", "join"},
                                       {"taskReferenceName", "join"},
                                       {"type", "JOIN"},
                                       {"joinOn", join_on}}}}});
  defs.push_back(json::object{
    {"name", "fh_wait"},
    {"version", 1},
    {"inputParameters", json::array{"n"}},
    {"tasks",
     json::array{json::object{{"name", "nap"},
                              {"taskReferenceName", "nap"},
                              {"type", "WAIT"},
                              {"inputParameters",
                               json::object{{"duration", std::to_string(wait_s) + "s"}}}},
                 step("after", "${workflow.input.n}")}}});
  defs.push_back(json::object{
    {"name", "fh_poison"},
    {"version", 1},
    {"tasks", json::array{json::object{{"name", "fh_poison_step"},
                                       {"taskReferenceName", "p"}}}}});
  return json::serialize(defs);
}

std::map<std::string, std::string> expected_ends() {
  return {{"fh_chain", "COMPLETED"},
          {"fh_fan", "COMPLETED"},
          {"fh_wait", "COMPLETED"},
          {"fh_poison", "FAILED"}};
}

// -- starter ------------------------------------------------------------------

starter::starter(std::vector<client_options> nodes, int threads) : threads_(threads) {
  for (auto& o : nodes)
    clients_.push_back(std::make_unique<client>(o));
}

starter::~starter() {
  wait();
}

void starter::run(start_plan plan, std::chrono::seconds deadline) {
  auto next = std::make_shared<std::atomic<int>>(0);
  auto until = std::chrono::steady_clock::now() + deadline;
  if (plan.nodes.empty())
    for (size_t i = 0; i < clients_.size(); ++i)
      plan.nodes.push_back(static_cast<int>(i));
  for (int t = 0; t < threads_; ++t)
    running_.emplace_back([this, plan, next, until] {
      for (int i = (*next)++; i < plan.count; i = (*next)++) {
        msg::start_request r;
        r.workflow_name = !plan.workflow.empty()        ? plan.workflow
                          : (i % plan.fan_every) == plan.fan_every - 1 ? "fh_fan"
                                                                       : "fh_chain";
        r.input_json = "{\"n\": " + std::to_string(i) + "}";
        r.idempotency_key = plan.prefix + "-" + std::to_string(i);
        r.correlation_id = plan.prefix;
        size_t node = static_cast<size_t>(i) % plan.nodes.size();
        for (;;) {
          auto rep = clients_[static_cast<size_t>(plan.nodes[node])]->start(r);
          if (rep) {
            std::lock_guard<std::mutex> g{mx_};
            acked_[rep->workflow_id] = now_ms();
            break;
          }
          if (!is_unavailable(rep.error())) {
            std::lock_guard<std::mutex> g{mx_};
            refused_[r.idempotency_key] = describe(rep.error());
            break;
          }
          if (std::chrono::steady_clock::now() > until) {
            ++abandoned_;
            break;
          }
          ++retries_;
          node = (node + 1) % plan.nodes.size();
          std::this_thread::sleep_for(100ms);
        }
        if (plan.pace.count() > 0)
          std::this_thread::sleep_for(plan.pace);
      }
    });
}

void starter::wait() {
  for (auto& t : running_)
    if (t.joinable())
      t.join();
  running_.clear();
}

std::map<std::string, int64_t> starter::acknowledged() const {
  std::lock_guard<std::mutex> g{mx_};
  return acked_;
}

std::map<std::string, std::string> starter::refused() const {
  std::lock_guard<std::mutex> g{mx_};
  return refused_;
}

// -- workers ------------------------------------------------------------------

workers::workers(std::vector<client_options> nodes, int threads) {
  for (auto& o : nodes)
    clients_.push_back(std::make_unique<client>(o));
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this, i] { loop(i); });
}

workers::~workers() {
  stop();
}

void workers::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable())
      t.join();
}

std::map<workers::identity, std::set<std::string>> workers::accepted() const {
  std::lock_guard<std::mutex> g{mx_};
  return accepted_;
}

std::string workers::rejected_example() const {
  std::lock_guard<std::mutex> g{mx_};
  return rejected_example_;
}

void workers::loop(int idx) {
  size_t node = static_cast<size_t>(idx) % clients_.size();
  auto worker_id = "fault-harness-" + std::to_string(idx);
  while (!stop_) {
    msg::poll_request req;
    req.queue = "fh_step";
    req.worker_id = worker_id;
    req.max_tasks = 16;
    req.timeout_ms = 500;
    auto got = clients_[node]->poll(req);
    if (!got) {
      // This node does not answer (killed, paused, cut off): the next one may.
      node = (node + 1) % clients_.size();
      std::this_thread::sleep_for(50ms);
      continue;
    }
    if (got->empty())
      continue;
    std::vector<msg::task_result> results;
    for (const auto& t : *got) {
      msg::task_result r;
      r.task_id = t.task_id;
      r.workflow_id = t.workflow_id;
      r.lease_token = t.lease_token;
      r.status = "COMPLETED";
      r.output_json = t.input_json.empty() ? "{}" : t.input_json;
      results.push_back(std::move(r));
    }
    // A batch the node did not answer is sent again, with the same tokens, to the
    // next node: the fence makes a repeat harmless. So is each result answered
    // `unavailable` on its own (its partition moving). Given up when the harness stops
    // (the lease then times out and the task is retried).
    std::vector<msg::leased_task> tasks = *got;
    while (!results.empty()) {
      auto rep = clients_[node]->report_batch(results);
      if (!rep && !is_unavailable(rep.error())) {
        std::lock_guard<std::mutex> g{mx_};
        rejected_ += static_cast<int64_t>(results.size());
        if (rejected_example_.empty())
          rejected_example_ = describe(rep.error());
        break;
      }
      std::vector<msg::task_result> again;
      std::vector<msg::leased_task> again_tasks;
      if (rep) {
        std::lock_guard<std::mutex> g{mx_};
        for (size_t i = 0; i < rep->size() && i < tasks.size(); ++i) {
          const auto& t = tasks[i];
          if ((*rep)[i]) {
            accepted_[{t.workflow_id, t.ref, t.iteration}].insert(t.task_id);
            ++accepted_count_;
            last_accept_ms_ = now_ms();
          } else if (is_unavailable((*rep)[i].error())) {
            again.push_back(results[i]);
            again_tasks.push_back(t);
          } else if (describe((*rep)[i].error()).find("lease lost") != std::string::npos) {
            ++lease_lost_;
          } else {
            ++rejected_;
            if (rejected_example_.empty())
              rejected_example_ = describe((*rep)[i].error());
          }
        }
      } else {
        again = results;
        again_tasks = tasks;
      }
      results = std::move(again);
      tasks = std::move(again_tasks);
      if (results.empty() || stop_)
        break;
      node = (node + 1) % clients_.size();
      std::this_thread::sleep_for(100ms);
    }
  }
}

} // namespace nf::fault
