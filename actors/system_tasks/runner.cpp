#include "actors/system_tasks/runner.hpp"

#include <algorithm>
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
#include "engine/secrets/placeholders.hpp"
#include "engine/system_tasks/http_task.hpp"
#include "proto/type_ids.hpp"
#include "proto/errors.hpp"

namespace nf::actors {

namespace {

using std::chrono::milliseconds;

// A poll answers within its timeout; this covers the hops through the node on top.
constexpr milliseconds poll_margin{10000};
// How long the runner waits before polling again after a failed poll.
constexpr milliseconds poll_retry{1000};
// A request ends this long before its task's lease, leaving time to report the result.
constexpr milliseconds lease_margin{2000};

/// The request as sent: its `${secrets.NAME}` replaced (engine/secrets/placeholders.hpp),
/// or the task's result when a secret cannot be had. The task's stored input keeps the
/// placeholders; the values live only in this copy and in `used`.
std::variant<http::request, msg::task_result>
with_secrets(const msg::leased_task& task, const http::request& r,
             const std::shared_ptr<engine::secrets::source>& secrets,
             std::vector<std::string>& used) {
  // Every task is of namespace "default" until tasks carry their namespace here.
  auto lookup = [&](const std::string& name) -> caf::expected<std::string> {
    if (!secrets)
      return nf::make_error(nf::errc::invalid, "secret " + name
                                                 + ": this node has no secrets "
                                                   "(secrets.master_key_file is not set)");
    return secrets->value(nf::default_namespace, name);
  };
  auto sent = engine::secrets::resolve_request(r, lookup, used);
  if (sent)
    return std::move(*sent);
  // The database may come back: only a lookup that can never succeed as things stand
  // (an unknown secret, no key) fails the task for good.
  if (nf::code_of(sent.error()) == nf::errc::unavailable)
    return engine::http_task_failed(task, nf::message_of(sent.error()));
  return engine::http_task_rejected(task, nf::message_of(sent.error()));
}

/// One leased HTTP task: performs the request (blocking: this actor is detached),
/// then completes the task through the node.
caf::behavior http_task_worker(caf::event_based_actor* self, msg::leased_task task,
                               caf::actor node, std::shared_ptr<http::port> http,
                               milliseconds default_timeout,
                               std::shared_ptr<engine::secrets::source> secrets,
                               std::shared_ptr<spdlog::logger> log) {
  auto req = engine::read_http_task(task.input_json, default_timeout);
  msg::task_result result;
  if (auto* problem = std::get_if<std::string>(&req)) {
    result = engine::http_task_rejected(task, *problem);
  } else {
    auto& r = std::get<http::request>(req);
    auto now_ms = std::chrono::duration_cast<milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    engine::fit_into_lease(r, task.lease_expires_at_ms, now_ms, lease_margin);
    std::vector<std::string> used;
    auto sent = with_secrets(task, r, secrets, used);
    if (auto* failed = std::get_if<msg::task_result>(&sent)) {
      result = std::move(*failed);
    } else {
      result = engine::http_task_result(task, http->perform(std::get<http::request>(sent)));
      engine::secrets::scrub(result.output_json, used);
      engine::secrets::scrub(result.reason, used);
    }
    // The URL as the task wrote it: the placeholders, never the values.
    log->debug("http_task_done task={} method={} url={} status={} result={}", task.task_id,
               r.method, r.url, result.status == "COMPLETED" ? "ok" : result.reason, result.status);
  }
  complete_system_task(self, node, result, 1, log);
  return {
    [=](tick_atom, int32_t attempt) { complete_system_task(self, node, result, attempt, log); },
  };
}

struct runner_state {
  system_task_options opt;
  std::shared_ptr<spdlog::logger> log;
  int concurrency = 8;
  milliseconds poll_timeout{10000};
  milliseconds request_timeout{10000};
  int in_flight = 0;
  bool polling = false;
  warn_limiter poll_warn;

  static inline const char* name = "nf.system_tasks";
};

using runner_actor = caf::stateful_actor<runner_state>;

/// Polls for as many tasks as there are free slots, unless a poll is out already.
void poll_more(runner_actor* self) {
  auto& st = self->state;
  if (st.polling || st.in_flight >= st.concurrency)
    return;
  st.polling = true;
  msg::poll_request req;
  req.queue = engine::http_task_queue;
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
          self->spawn<caf::detached + caf::monitored>(http_task_worker, std::move(t), st.opt.node,
                                                     st.opt.http, st.request_timeout,
                                                     st.opt.secrets, st.log);
        }
        poll_more(self);
      },
      [self](caf::error& err) {
        auto& st = self->state;
        st.polling = false;
        if (st.poll_warn.allow())
          st.log->warn("system_task_poll_failed queue={} error=\"{}\" suppressed={}",
                       engine::http_task_queue, nf::message_of(err).empty() ? to_string(err)
                                                                       : nf::message_of(err),
                       st.poll_warn.suppressed());
        self->delayed_send(self, poll_retry, tick_atom_v);
      });
}

caf::behavior runner(runner_actor* self, system_task_options opt) {
  assert(opt.node); // the runner reaches its queue only through the node
  assert(opt.http);
  auto& st = self->state;
  st.opt = std::move(opt);
  st.log = folder_logger("system_tasks");
  const auto& s = st.opt.settings;
  st.concurrency = st.opt.concurrency > 0
                     ? st.opt.concurrency
                     : static_cast<int>(s.get(config::keys::system_tasks_concurrency));
  st.poll_timeout = milliseconds{s.get(config::keys::system_tasks_poll_timeout_ms)};
  st.request_timeout = milliseconds{s.get(config::keys::system_tasks_request_timeout_ms)};
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

caf::actor spawn_system_task_runner(caf::actor_system& sys, const system_task_options& opt) {
  return sys.spawn(runner, opt);
}

} // namespace nf::actors
