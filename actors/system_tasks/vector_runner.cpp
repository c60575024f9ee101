#include "actors/system_tasks/vector_runner.hpp"

#include <cassert>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/system_tasks/completion.hpp"
#include "actors/system_tasks/queue_runner.hpp"
#include "config/folder_logger.hpp"
#include "engine/system_tasks/task_result.hpp"
#include "engine/system_tasks/vector_task.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"
#include "store/pg/session.hpp"

namespace nf::actors {

namespace {

// The runner's connections: a worker takes one (or a new one) and gives it back when done,
// so there are never more than the tasks in flight, and a connection outlives its task.
class sessions {
public:
  explicit sessions(std::string dsn) : dsn_(std::move(dsn)) {}
  std::unique_ptr<store::session> take() {
    std::lock_guard<std::mutex> lock{m_};
    if (idle_.empty())
      return std::make_unique<store::session>(dsn_);
    auto s = std::move(idle_.back());
    idle_.pop_back();
    return s;
  }
  void give_back(std::unique_ptr<store::session> s) {
    std::lock_guard<std::mutex> lock{m_};
    idle_.push_back(std::move(s));
  }

private:
  std::string dsn_;
  std::mutex m_;
  std::vector<std::unique_ptr<store::session>> idle_;
};

msg::task_result run(sessions& pool, const msg::leased_task& task) {
  auto s = pool.take();
  caf::expected<msg::task_result> r = [&]() -> caf::expected<msg::task_result> {
    auto conn = s->get();
    if (!conn)
      return std::move(conn.error());
    return engine::run_vector_task(**conn, task);
  }();
  if (!r)
    s->on_error(r.error());
  pool.give_back(std::move(s));
  if (r)
    return std::move(*r);
  // A database that failed now may not later: FAILED, which the task's retries take.
  return engine::system_task_result(task, "FAILED",
                                    boost::json::object{{"error", message_of(r.error())}},
                                    task.task_type + ": database: " + message_of(r.error()));
}

/// One leased vector task: runs it on a connection of the pool (blocking: this actor is
/// detached), then completes it through the node.
caf::behavior vector_task_worker(caf::event_based_actor* self, msg::leased_task task,
                                 caf::actor node, std::shared_ptr<sessions> pool,
                                 std::shared_ptr<spdlog::logger> log) {
  auto result = run(*pool, task);
  log->debug("vector_task_done task={} type={} status={} reason=\"{}\"", task.task_id,
             task.task_type, result.status, result.reason);
  complete_system_task(self, node, result, 1, log);
  return {
    [=](tick_atom, int32_t attempt) { complete_system_task(self, node, result, attempt, log); },
  };
}

} // namespace

caf::actor spawn_vector_task_runner(caf::actor_system& sys, const vector_task_options& opt) {
  assert(opt.node);
  auto pool = std::make_shared<sessions>(opt.dsn);
  queue_runner_options q;
  q.node = opt.node;
  q.queue = engine::vector_task_queue;
  q.worker_id = opt.worker_id;
  q.log_name = "vector_task";
  q.concurrency = std::max(1, opt.concurrency);
  q.poll_timeout =
    std::chrono::milliseconds{opt.settings.get(config::keys::system_tasks_poll_timeout_ms)};
  auto log = folder_logger("system_tasks");
  q.start = [node = opt.node, pool, log](caf::event_based_actor* self, msg::leased_task t) {
    self->spawn<caf::detached + caf::monitored>(vector_task_worker, std::move(t), node, pool,
                                               log);
  };
  return spawn_queue_runner(sys, std::move(q));
}

} // namespace nf::actors
