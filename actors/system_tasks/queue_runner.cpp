#include "actors/system_tasks/queue_runner.hpp"

#include <cassert>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <spdlog/spdlog.h>

#include "config/folder_logger.hpp"
#include "proto/errors.hpp"
#include "proto/type_ids.hpp"

namespace nf::actors {

namespace {

using std::chrono::milliseconds;

// A poll answers within its timeout; this covers the hops through the node on top.
constexpr milliseconds poll_margin{10000};
// How long the runner waits before polling again after a failed poll.
constexpr milliseconds poll_retry{1000};

struct runner_state {
  queue_runner_options opt;
  std::shared_ptr<spdlog::logger> log;
  int in_flight = 0;
  bool polling = false;
  warn_limiter poll_warn;

  static inline const char* name = "nf.queue_runner";
};

using runner_actor = caf::stateful_actor<runner_state>;

/// Polls for as many tasks as there are free slots, unless a poll is out already.
void poll_more(runner_actor* self) {
  auto& st = self->state;
  if (st.polling || st.in_flight >= st.opt.concurrency)
    return;
  st.polling = true;
  msg::poll_request req;
  req.queue = st.opt.queue;
  req.worker_id = st.opt.worker_id;
  req.max_tasks = st.opt.concurrency - st.in_flight;
  req.timeout_ms = st.opt.poll_timeout.count();
  self->request(st.opt.node, st.opt.poll_timeout + poll_margin, poll_atom_v, req)
    .then(
      [self](std::vector<msg::leased_task>& tasks) {
        auto& st = self->state;
        st.polling = false;
        for (auto& t : tasks) {
          ++st.in_flight;
          st.opt.start(self, std::move(t));
        }
        poll_more(self);
      },
      [self](caf::error& err) {
        auto& st = self->state;
        st.polling = false;
        if (st.poll_warn.allow())
          st.log->warn("{}_poll_failed queue={} error=\"{}\" suppressed={}", st.opt.log_name,
                       st.opt.queue,
                       nf::message_of(err).empty() ? to_string(err) : nf::message_of(err),
                       st.poll_warn.suppressed());
        self->delayed_send(self, poll_retry, tick_atom_v);
      });
}

caf::behavior runner(runner_actor* self, queue_runner_options opt) {
  assert(opt.node && opt.start && opt.concurrency > 0);
  auto& st = self->state;
  st.opt = std::move(opt);
  st.log = folder_logger("system_tasks");
  self->set_down_handler([self](caf::down_msg&) {
    --self->state.in_flight; // a task worker finished
    poll_more(self);
  });
  self->send(self, tick_atom_v);
  return {
    [self](tick_atom) { poll_more(self); },
  };
}

} // namespace

caf::actor spawn_queue_runner(caf::actor_system& sys, queue_runner_options opt) {
  return sys.spawn(runner, std::move(opt));
}

} // namespace nf::actors
