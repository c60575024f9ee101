#include "actors/system_tasks/runner.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <variant>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/system_tasks/completion.hpp"
#include "actors/system_tasks/queue_runner.hpp"
#include "config/folder_logger.hpp"
#include "engine/secrets/placeholders.hpp"
#include "engine/system_tasks/http_task.hpp"
#include "proto/type_ids.hpp"
#include "proto/errors.hpp"
#include "store/db_clock.hpp"

namespace nf::actors {

namespace {

using std::chrono::milliseconds;

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
    // The lease's expiry is Postgres's time: compare it with Postgres's clock.
    auto now_ms = db_clock_now_ms();
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

} // namespace

caf::actor spawn_system_task_runner(caf::actor_system& sys, const system_task_options& opt) {
  assert(opt.node); // the runner reaches its queue only through the node
  assert(opt.http);
  const auto& s = opt.settings;
  queue_runner_options q;
  q.node = opt.node;
  q.queue = engine::http_task_queue;
  q.worker_id = opt.worker_id;
  q.log_name = "system_task";
  q.concurrency = opt.concurrency > 0
                    ? opt.concurrency
                    : static_cast<int>(s.get(config::keys::system_tasks_concurrency));
  q.poll_timeout = milliseconds{s.get(config::keys::system_tasks_poll_timeout_ms)};
  auto request_timeout = milliseconds{s.get(config::keys::system_tasks_request_timeout_ms)};
  auto log = folder_logger("system_tasks");
  q.start = [opt, request_timeout, log](caf::event_based_actor* self, msg::leased_task t) {
    self->spawn<caf::detached + caf::monitored>(http_task_worker, std::move(t), opt.node,
                                               opt.http, request_timeout, opt.secrets, log);
  };
  return spawn_queue_runner(sys, std::move(q));
}

} // namespace nf::actors
