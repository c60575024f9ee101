#include "actors/system_tasks/script_runner.hpp"

#include <cassert>
#include <chrono>
#include <variant>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <spdlog/spdlog.h>

#include "actors/system_tasks/completion.hpp"
#include "config/folder_logger.hpp"
#include "engine/system_tasks/script_task.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

using std::chrono::milliseconds;

// A poll answers within its timeout; this covers the hops through the node on top.
constexpr milliseconds poll_margin{10000};
// How long the runner waits before polling again after a failed poll.
constexpr milliseconds poll_retry{1000};

/// One leased script task: runs it in a sandbox process (blocking: this actor is
/// detached), then completes it through the node.
caf::behavior script_task_worker(caf::event_based_actor* self, msg::leased_task task,
                                 caf::actor node, std::shared_ptr<engine::script::pool> scripts,
                                 std::shared_ptr<spdlog::logger> log) {
  auto call = engine::read_script_task(task);
  msg::task_result result;
  if (auto* done = std::get_if<msg::task_result>(&call))
    result = std::move(*done);
  else
    result = engine::script_task_result(task, scripts->run(std::get<engine::script::request>(call)));
  log->debug("script_task_done task={} type={} status={} reason=\"{}\"", task.task_id,
             task.task_type, result.status, result.reason);
  complete_system_task(self, node, result, 1, log);
  return {
    [=](tick_atom, int32_t attempt) { complete_system_task(self, node, result, attempt, log); },
  };
}

struct runner_state {
  script_task_options opt;
  std::shared_ptr<spdlog::logger> log;
  int concurrency = 2;
  milliseconds poll_timeout{10000};
  int in_flight = 0;
  bool polling = false;
  warn_limiter poll_warn;

  static inline const char* name = "nf.script_tasks";
};

using runner_actor = caf::stateful_actor<runner_state>;

void poll_more(runner_actor* self) {
  auto& st = self->state;
  if (st.polling || st.in_flight >= st.concurrency)
    return;
  st.polling = true;
  msg::poll_request req;
  req.queue = engine::script_task_queue;
  req.worker_id = st.opt.worker_id;
  req.max_tasks = st.concurrency - st.in_flight;
  req.timeout_ms = st.poll_timeout.count();
  self->request(st.opt.node, st.poll_timeout + poll_margin, poll_atom_v, req)
    .then(
      [self](std::vector<msg::leased_task>& tasks) {
        auto& st = self->state;
        st.polling = false;
        for (auto& t : tasks) {
          ++st.in_flight;
          self->spawn<caf::detached + caf::monitored>(script_task_worker, std::move(t),
                                                     st.opt.node, st.opt.scripts, st.log);
        }
        poll_more(self);
      },
      [self](caf::error& err) {
        auto& st = self->state;
        st.polling = false;
        if (st.poll_warn.allow())
          st.log->warn("script_task_poll_failed queue={} error=\"{}\" suppressed={}",
                       engine::script_task_queue,
                       nf::message_of(err).empty() ? to_string(err) : nf::message_of(err),
                       st.poll_warn.suppressed());
        self->delayed_send(self, poll_retry, tick_atom_v);
      });
}

caf::behavior runner(runner_actor* self, script_task_options opt) {
  assert(opt.node);
  auto& st = self->state;
  st.opt = std::move(opt);
  st.log = folder_logger("system_tasks");
  if (!st.opt.scripts)
    st.opt.scripts = make_script_pool(st.opt.settings);
  // More tasks in flight than sandboxes: while one task's result commits, the next task
  // already runs in the sandbox it left (the others wait in the pool).
  st.concurrency = 4 * st.opt.scripts->options().processes;
  st.poll_timeout = milliseconds{st.opt.settings.get(config::keys::system_tasks_poll_timeout_ms)};
  self->set_down_handler([self](caf::down_msg&) {
    --self->state.in_flight;
    poll_more(self);
  });
  self->send(self, tick_atom_v);
  return {
    [self](tick_atom) { poll_more(self); },
  };
}

} // namespace

caf::actor spawn_script_task_runner(caf::actor_system& sys, const script_task_options& opt) {
  return sys.spawn(runner, opt);
}

std::shared_ptr<engine::script::pool> make_script_pool(const config::values& settings) {
  engine::script::pool_options p;
  p.processes = static_cast<int>(settings.get(config::keys::scripts_processes));
  p.timeout = milliseconds{settings.get(config::keys::scripts_timeout_ms)};
  p.memory_mb = static_cast<std::uint32_t>(settings.get(config::keys::scripts_memory_mb));
  return std::make_shared<engine::script::pool>(std::move(p));
}

} // namespace nf::actors
