#include "net/api/store_worker.hpp"

#include <optional>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/spdlog.h>

#include "proto/type_ids.hpp"
#include "config/folder_logger.hpp"
#include "engine/audit_trail.hpp"
#include "engine/lease/hand_back.hpp"
#include "engine/operations.hpp"
#include "engine/poll_data.hpp"
#include "engine/task_history.hpp"
#include "engine/webhook_sinks.hpp"
#include "engine/workflow_removal.hpp"
#include "engine/schedules/schedules.hpp"
#include "engine/vectors/vectors.hpp"
#include "engine/metrics/node_metrics.hpp"
#include "engine/metrics/store_part.hpp"
#include "proto/errors.hpp"
#include "store/pg/link_settings.hpp"
#include "store/pg/session.hpp"

namespace nf::net {

namespace {

struct worker_state {
  store_worker_options opts;
  std::optional<store::session> db;
  std::shared_ptr<spdlog::logger> log = folder_logger("net");
  engine::metrics::histogram& wait_seconds =
    engine::metrics::node_metrics().store_worker_wait_seconds.with();
  static inline const char* name = "nf.api_store_worker";

  // Runs `op` on the session's connection. `conn_broken` means nothing was
  // committed (store errc), so the operation is retried once on a fresh
  // connection; a database that cannot be reached is `unavailable`.
  template <class F>
  auto run(F&& op) -> decltype(op(std::declval<store::connection&>())) {
    if (opts.waits)
      if (auto waited = opts.waits->taken())
        wait_seconds.observe(std::chrono::duration<double>(*waited).count());
    for (int pass = 0; pass < 2; ++pass) {
      auto conn = db->get();
      if (!conn) {
        log->warn("db_unreachable error=\"{}\"", nf::message_of(conn.error()));
        return nf::make_error(nf::errc::unavailable,
                                 "database: " + nf::message_of(conn.error()));
      }
      auto r = op(**conn);
      if (r)
        return r;
      db->on_error(r.error());
      if (nf::code_of(r.error()) != nf::errc::conn_broken)
        return r;
      log->warn("db_connection_lost error=\"{}\"", nf::message_of(r.error()));
    }
    return nf::make_error(nf::errc::unavailable, "database: connection lost twice");
  }
};

caf::behavior store_worker(caf::stateful_actor<worker_state>* self, store_worker_options opts) {
  self->state.opts = std::move(opts);
  self->state.db.emplace(self->state.opts.dsn, &store::plan_each_execution);
  auto& st = self->state;
  return {
    [&st](register_atom, const msg::definitions_registration& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::register_definitions(c, r); });
    },
    [&st](audit_atom, const msg::audit_query& q) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::read_audit(c, q); });
    },
    [&st](namespaces_atom, const msg::namespace_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::namespaces(c, r); });
    },
    // A namespace's id by its name (the api's lookup, cached there).
    [&st](namespaces_atom, const std::string& name) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::resolve_namespace(c, name); });
    },
    [&st](schedules_atom, const msg::schedule_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::schedules::handle(c, r); });
    },
    [&st](definitions_atom, const msg::definitions_query& q) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::definitions(c, q); });
    },
    [&st](get_atom, const msg::workflow_query& q) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::get_execution(c, q); });
    },
    [&st](search_atom, const msg::search_request& r) -> caf::result<msg::search_page> {
      return st.run([&](store::connection& c) { return engine::search_executions(c, r); });
    },
    [&st](count_atom, const msg::search_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::count_executions(c, r); });
    },
    [&st](signal_atom, const msg::signal_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::deliver_signal(c, r); });
    },
    [&st](heartbeat_atom, const msg::heartbeat_request& r) -> caf::result<int64_t> {
      return st.run(
        [&](store::connection& c) { return engine::heartbeat(c, r, st.opts.default_lease_seconds); });
    },
    [&st](lent_atom, const std::vector<msg::leased_task>& tasks)
      -> caf::result<std::vector<std::string>> {
      return st.run([&](store::connection& c) { return engine::hand_back(c, tasks); });
    },
    [&st](progress_atom, const msg::task_progress& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::record_task_progress(c, r); });
    },
    [&st](task_ref_atom, const msg::task_ref_update& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::update_task_by_ref(c, r); });
    },
    [&st](events_atom, const msg::events_request& r)
      -> caf::result<std::vector<msg::event_view>> {
      return st.run([&](store::connection& c) { return engine::read_events(c, r); });
    },
    [&st](status_atom) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::store_status(c, st.opts.node_silent_after_ms); });
    },
    [&st](ready_atom) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::database_readiness(c); });
    },
    [&st](deadletter_atom, const msg::deadletter_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::dead_letters(c, r); });
    },
    [&st](sinks_atom, const msg::sink_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::webhook_sinks(c, r, st.opts.sink_allow_plain_http); });
    },
    [&st](task_history_atom, const msg::task_history_query& q) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::task_history(c, q); });
    },
    [&st](vectors_atom, const msg::vector_request& r) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::vectors(c, r); });
    },
    // Only "remove" comes here (the api sends every other op to the node's deciders).
    [&st](command_atom, const msg::workflow_command& c) -> caf::result<std::string> {
      return st.run([&](store::connection& conn) { return engine::remove_workflow(conn, c); });
    },
    [&st](poll_data_atom, const std::vector<msg::poll_seen>& seen) -> caf::result<void> {
      return st.run([&](store::connection& c) { return engine::record_polls(c, seen); });
    },
    [&st](poll_data_atom, const msg::poll_data_query& q,
          const std::vector<msg::poll_seen>& pending) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::poll_data(c, q, pending); });
    },
    [&st](metrics_atom) -> caf::result<std::string> {
      return st.run([&](store::connection& c) { return engine::store_metrics(c); });
    },
  };
}

} // namespace

caf::actor spawn_store_worker(caf::actor_system& sys, store_worker_options opts) {
  return sys.spawn<caf::detached>(store_worker, std::move(opts));
}

} // namespace nf::net
