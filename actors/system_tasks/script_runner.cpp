#include "actors/system_tasks/script_runner.hpp"

#include <cassert>
#include <chrono>
#include <variant>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/system_tasks/completion.hpp"
#include "actors/system_tasks/queue_runner.hpp"
#include "config/folder_logger.hpp"
#include "engine/system_tasks/script_task.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

using std::chrono::milliseconds;


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

} // namespace

caf::actor spawn_script_task_runner(caf::actor_system& sys, const script_task_options& opt) {
  assert(opt.node);
  auto scripts = opt.scripts ? opt.scripts : make_script_pool(opt.settings);
  queue_runner_options q;
  q.node = opt.node;
  q.queue = engine::script_task_queue;
  q.worker_id = opt.worker_id;
  q.log_name = "script_task";
  // More tasks in flight than sandboxes: while one task's result commits, the next task
  // already runs in the sandbox it left (the others wait in the pool).
  q.concurrency = 4 * scripts->options().processes;
  q.poll_timeout = milliseconds{opt.settings.get(config::keys::system_tasks_poll_timeout_ms)};
  auto log = folder_logger("system_tasks");
  q.start = [node = opt.node, scripts, log](caf::event_based_actor* self, msg::leased_task t) {
    self->spawn<caf::detached + caf::monitored>(script_task_worker, std::move(t), node, scripts,
                                               log);
  };
  return spawn_queue_runner(sys, std::move(q));
}

std::shared_ptr<engine::script::pool> make_script_pool(const config::values& settings) {
  engine::script::pool_options p;
  p.processes = static_cast<int>(settings.get(config::keys::scripts_processes));
  p.timeout = milliseconds{settings.get(config::keys::scripts_timeout_ms)};
  p.memory_mb = static_cast<std::uint32_t>(settings.get(config::keys::scripts_memory_mb));
  return std::make_shared<engine::script::pool>(std::move(p));
}

} // namespace nf::actors
