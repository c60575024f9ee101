#include "tests/net/fake_node.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "net/client/system_config.hpp"
#include "proto/client_api.hpp"
#include "proto/errors.hpp"

namespace nf::test {

void fake_log::add(std::string line) {
  std::lock_guard<std::mutex> guard{mx};
  lines.push_back(std::move(line));
}

std::vector<std::string> fake_log::take() {
  std::lock_guard<std::mutex> guard{mx};
  return std::exchange(lines, {});
}

namespace {

// How a report is logged, alone or within a batch.
std::string complete_line(const msg::task_result& r) {
  return "complete " + r.task_id + " " + r.status + " output=" + r.output_json
         + " reason=" + r.reason + " token=" + r.lease_token;
}

struct fake_state {
  std::shared_ptr<fake_log> log;
  // Held polls: kept so they are never answered until the node goes away.
  std::vector<caf::typed_response_promise<std::vector<msg::leased_task>>> held;
};

client_api::behavior_type fake(client_api::stateful_pointer<fake_state> self,
                               std::shared_ptr<fake_log> log) {
  self->state.log = log;
  return {
    [log](login_atom, const msg::login_request& r) -> caf::result<msg::session> {
      log->add("login " + r.key_id);
      if (r.key_secret != "right")
        return nf::make_error(nf::errc::unauthenticated, "login: no such key");
      return msg::session{"tok-" + r.key_id, 4102444800, "worker", "default"};
    },
    [log](register_atom, const std::string& text) -> std::string {
      log->add("register " + text);
      return R"({"taskDefs":[{"name":"t","revision":2}],"workflowDefs":[{"name":"w","version":1}]})";
    },
    [log](register_atom, const msg::definitions_registration& r) -> std::string {
      log->add(r.namespace_id.empty() ? "register " + r.text
                                       : "register in " + r.namespace_id + " " + r.text);
      return R"({"taskDefs":[{"name":"t","revision":2}],"workflowDefs":[{"name":"w","version":1}]})";
    },
    [log](namespaces_atom, const msg::namespace_request& r) -> std::string {
      log->add("namespaces " + r.op + " " + r.name);
      return R"({"namespaces":[]})";
    },
    [log](sinks_atom, const msg::sink_request& r) -> std::string {
      log->add("sinks " + r.op + " " + r.id);
      return R"({"sinks":[]})";
    },
    [log](task_history_atom, const msg::task_history_query& q) -> std::string {
      log->add("task history " + q.task_def_name);
      return R"({"taskDefName":"t","executions":[],"next":null})";
    },
    [log](schedules_atom, const msg::schedule_request& r) -> std::string {
      log->add("schedules " + r.op + " " + r.name + " " + r.body + r.workflow_name + r.reason
               + r.cron_expression + " " + r.zone_id + " " + std::to_string(r.limit));
      return "[]";
    },
    [log](definitions_atom, const msg::definitions_query& q) -> std::string {
      log->add("definitions " + q.op + " " + q.kind + " " + q.name);
      return "[]";
    },
    [log](start_atom, const msg::start_request& r) -> msg::start_reply {
      log->add("start " + r.workflow_name + " v" + std::to_string(r.version) + " input=" + r.input_json
               + " key=" + r.idempotency_key + " corr=" + r.correlation_id
               + " prio=" + std::to_string(r.priority));
      return {"01890000-0000-7000-8000-000000000001", r.idempotency_key.empty()};
    },
    [log](get_atom, const msg::workflow_query& q) -> caf::result<std::string> {
      log->add("get " + q.workflow_id);
      if (q.workflow_id == missing_workflow)
        return nf::make_error(nf::errc::not_found, "workflow " + q.workflow_id + " not found");
      return std::string{R"({"workflowId":")"} + q.workflow_id
             + R"(","workflowName":"w","workflowVersion":1,"status":"RUNNING","input":{},)"
               R"("output":null,"startTime":1,"endTime":null,"tasks":[]})";
    },
    [log](count_atom, const msg::search_request& r) -> std::string {
      log->add("count name=" + r.workflow_name);
      return R"({"counts":{"RUNNING":1},"cap":10000})";
    },
    [log](search_atom, const msg::search_request& r) -> msg::search_page {
      log->add("search status=" + r.status + " name=" + r.workflow_name + " limit="
               + std::to_string(r.limit) + " cursor=" + r.cursor);
      return {R"([{"workflowId":"a","status":"RUNNING","workflowName":"w","workflowVersion":1,"startTime":1}])",
              "a"};
    },
    [log](command_atom, const msg::workflow_command& c) -> std::string {
      log->add(c.op + " " + c.workflow_id + " reason=" + c.reason + " task=" + c.task_ref
               + " iteration=" + std::to_string(c.iteration) + " input=" + c.input_json);
      return "{}";
    },
    [log](signal_atom, const msg::signal_request& r) -> caf::result<std::string> {
      log->add("signal " + r.workflow_id + " " + r.name + " payload=" + r.payload_json);
      // A node that loses the first answer of each request: the client sends it again.
      if (r.workflow_id == flaky_workflow) {
        std::lock_guard<std::mutex> g{log->mx};
        log->request_ids.push_back(r.request_id);
        if (log->request_ids.size() % 2 == 1)
          return nf::make_error(nf::errc::unavailable, "decider stopped: retry");
      }
      return std::string{"{}"};
    },
    [self, log](poll_atom, const msg::poll_request& r)
      -> caf::result<std::vector<msg::leased_task>> {
      log->add("poll " + r.queue + " max=" + std::to_string(r.max_tasks));
      bool hold;
      {
        std::lock_guard<std::mutex> guard{log->mx};
        hold = log->hold_polls;
      }
      if (hold) {
        auto rp = self->make_response_promise<std::vector<msg::leased_task>>();
        self->state.held.push_back(rp);
        return rp;
      }
      msg::leased_task t;
      t.task_id = "01890000-0000-7000-8000-0000000000aa";
      t.workflow_id = "01890000-0000-7000-8000-000000000001";
      t.ref = "a";
      t.task_def_name = r.queue;
      t.input_json = R"({"x":1})";
      t.lease_token = "01890000-0000-7000-8000-0000000000bb";
      return std::vector<msg::leased_task>{t};
    },
    [log](complete_atom, const msg::task_result& r) -> std::string {
      log->add(complete_line(r));
      return "{}";
    },
    // One line per result, as if each had come alone; a result of the missing workflow
    // answers `lease lost` in its place.
    [log](complete_atom,
          const std::vector<msg::task_result>& rs) -> std::vector<msg::report_outcome> {
      std::vector<msg::report_outcome> out;
      for (const auto& r : rs) {
        log->add(complete_line(r));
        msg::report_outcome o;
        if (r.workflow_id == missing_workflow)
          o.error = nf::make_error(nf::errc::lease_lost, "lease lost");
        else
          o.answer = "{}";
        out.push_back(std::move(o));
      }
      return out;
    },
    [log](heartbeat_atom, const msg::heartbeat_request& r) -> int64_t {
      log->add("heartbeat " + r.task_id);
      return 123;
    },
    [log](events_atom, const msg::events_request& r) -> std::vector<msg::event_view> {
      log->add("events " + r.workflow_id + " after=" + std::to_string(r.after_seq)
               + " wait=" + std::to_string(r.wait_ms));
      if (r.after_seq >= 2)
        return {};
      return {{1, 1000, "WORKFLOW_STARTED", "", "{}"},
              {2, 2000, "WORKFLOW_COMPLETED", "", R"({"done":true})"}};
    },
    [log](status_atom, const std::string& credential) -> std::string {
      log->add("status with " + credential);
      return "{}";
    },
    [log](status_atom) -> std::string {
      log->add("status");
      return R"({"node":{"id":"n1","partitions":[0,1]},"queues":[{"name":"q","ready":3,"leased":1}],)"
             R"("pendingDecisions":{"total":0,"byShard":{}}})";
    },
    [log](ready_atom) -> std::string {
      log->add("ready");
      return R"({"ready":true,"database":{"ready":true,"lines":[]},"partitionsRunning":2})";
    },
    [log](deadletter_atom, const msg::deadletter_request& r) -> std::string {
      std::string ids;
      for (auto id : r.ids)
        ids += (ids.empty() ? "" : ",") + std::to_string(id);
      log->add("deadletters " + r.op + " after=" + std::to_string(r.after_id) + " ids=" + ids);
      return r.op == "replay" ? R"({"replayed":1})" : R"({"deadLetters":[],"nextAfterId":null})";
    },
    [log](progress_atom, const msg::task_progress& p) -> std::string {
      log->add("progress " + p.task_id);
      return R"({"recorded":true})";
    },
    [log](task_ref_atom, const msg::task_ref_update& u) -> std::string {
      log->add("task_ref " + u.workflow_id + " " + u.task_ref + " " + u.status);
      return R"({"updated":true})";
    },
    [log](metrics_atom) -> std::string {
      log->add("metrics");
      return R"({"cap":100000,"queues":[],"decide":{"pending":0,"oldestAgeMs":null},)"
             R"("outbox":{"backlog":0,"deadLetters":0}})";
    },
    [log](audit_atom, const msg::audit_query& q) -> std::string {
      log->add("audit action=" + q.action + " cursor=" + q.cursor);
      return R"({"events":[],"nextCursor":null})";
    },
    [log](vectors_atom, const msg::vector_request& r) -> std::string {
      log->add("vectors op=" + r.op + " index=" + r.index);
      return R"({"index":")" + r.index + R"(","mode":"exact","distance":"sql","candidates":0,"results":[]})";
    },
    [log](poll_data_atom, const msg::poll_data_query& q) -> std::string {
      log->add("poll data " + q.task_type);
      return R"([{"queueName":"q","domain":"DEFAULT","workerId":"w","lastPollTime":1}])";
    },
  };
}

} // namespace

struct fake_node::impl {
  net::system_config cfg;
  caf::actor_system sys{cfg};
  client_api api;
};

fake_node::fake_node(uint16_t port, std::shared_ptr<fake_log> log)
  : impl_(std::make_unique<impl>()), log_(log ? std::move(log) : std::make_shared<fake_log>()) {
  impl_->api = impl_->sys.spawn(fake, log_);
  auto bound = impl_->sys.middleman().publish(impl_->api, port, "127.0.0.1", true);
  if (!bound)
    throw std::runtime_error("fake node cannot listen: " + caf::to_string(bound.error()));
  port_ = *bound;
}

fake_node::~fake_node() {
  caf::anon_send_exit(impl_->api, caf::exit_reason::user_shutdown);
}

} // namespace nf::test
