#include "net/api/api.hpp"

#include <algorithm>
#include <map>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <boost/json.hpp>
#include <caf/actor_proxy.hpp>
#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "net/api/poll_notes.hpp"
#include "net/api/poll_requesters.hpp"
#include "net/api/store_worker.hpp"
#include "net/client/request_deadlines.hpp"
#include "config/folder_logger.hpp"
#include "store/ids.hpp"
#include "proto/domains.hpp"
#include "proto/errors.hpp"
#include "proto/namespaces.hpp"
#include "proto/roles.hpp"

namespace nf::net {

namespace {

// The published interface plus the api's own messages: its timers (re-reading the history
// for events requests that wait; the sweep of its requests' deadlines), the node arriving
// after the api was published, and what another node forwards to this one (docs/engine.md §2:
// a completion, command or poll for a partition this node owns, and the hints it
// routes here; served here, never forwarded again). Only `client_api` is
// published; a peer node sends through an untyped handle.
using api_actor = client_api::extend<
  caf::reacts_to<tick_atom, uint64_t>, caf::reacts_to<tick_atom>, caf::reacts_to<caf::actor>,
  caf::reacts_to<poll_data_atom>,
  caf::replies_to<forward_atom, msg::task_result>::with<std::string>,
  caf::replies_to<forward_atom, std::vector<msg::task_result>>::with<
    std::vector<msg::report_outcome>>,
  caf::replies_to<forward_atom, msg::workflow_command>::with<std::string>,
  caf::replies_to<forward_atom, msg::poll_request>::with<std::vector<msg::leased_task>>,
  caf::replies_to<forward_atom, msg::start_request>::with<msg::start_reply>,
  caf::reacts_to<forward_atom, work_atom, std::string, std::string>,
  caf::reacts_to<forward_atom, decide_atom, int16_t, std::string>,
  caf::reacts_to<login_atom, uint64_t, msg::session, std::string>,
  caf::reacts_to<forward_atom, peer_atom, std::string, caf::actor, std::string>,
  caf::reacts_to<lent_atom, std::vector<msg::leased_task>>>;

// An events request waiting for its first new event.
struct pending_events {
  caf::typed_response_promise<std::vector<msg::event_view>> rp;
  msg::events_request req;
  caf::actor_clock::time_point deadline;
  caf::timespan interval; ///< until the next read; grows while nothing comes
};

struct api_state {
  api_options opts;
  std::vector<caf::actor> workers;
  /// Per worker, when each request was sent to it (mailbox_clock.hpp).
  std::vector<std::shared_ptr<mailbox_clock>> worker_waits;
  size_t next_worker = 0;
  uint64_t next_wait_id = 1;
  std::map<uint64_t, pending_events> waits;
  /// The relayed requests in flight (request_deadlines.hpp), and whether a sweep of them is
  /// due: one timer for all of them, not two wake-ups of the clock's thread per request.
  request_deadlines deadlines;
  bool sweep_pending = false;
  /// Requests sent on and not yet answered (api.max_pending counts these and `waits`).
  size_t pending = 0;
  /// Polls open, on the node and by queue (api.max_open_polls, api.max_open_polls_per_queue).
  size_t open_polls = 0;
  std::unordered_map<std::string, size_t> polls_by_queue;
  /// The network senders of those polls, watched while one is open (poll_requesters.hpp).
  poll_requesters requesters;
  /// The polls taken since they were last written to "PollData" (poll_notes.hpp).
  poll_notes polls_seen;
  /// Namespace ids by name, each as read at `read` (namespace_ttl): a namespace removed
  /// elsewhere is forgotten here within that time; one removed through this api at once.
  struct known_namespace {
    std::string id;
    caf::actor_clock::time_point read;
  };
  std::map<std::string, known_namespace> namespaces;
  /// Tokens checked lately, by token: a worker's stream of polls and reports presents one
  /// token, checked once per `holder_ttl` instead of once per request.
  struct checked_token {
    holder who;
    caf::actor_clock::time_point at;
  };
  std::unordered_map<std::string, checked_token> checked;
  /// Logins waiting for the checker (credentials.hpp), which answers on a thread of its own.
  std::map<uint64_t, caf::typed_response_promise<msg::session>> logins;
  uint64_t next_login = 1;
  static inline const char* name = "nf.api";

  /// The next worker, for a request sent to it at once (every caller sends one).
  const caf::actor& worker() {
    auto i = next_worker++ % workers.size();
    worker_waits[i]->sent();
    return workers[i];
  }
};

using api_pointer = api_actor::stateful_pointer<api_state>;

// Errors raised by CAF itself (a timeout, an unreachable or stopped actor)
// reach clients as `unavailable`; store errors pass through unchanged, except a
// database connection lost under a request (`conn_broken`: nothing committed;
// `in_doubt`: the commit's outcome unknown) that the work behind it did not recover:
// that is the node's trouble, not an answer, so the client retries it (with its
// request id, which makes the repeat harmless).
caf::error as_protocol_error(caf::error err, const char* what) {
  if (nf::is_nodeflow_error(err)) {
    auto code = nf::code_of(err);
    if (code == nf::errc::conn_broken || code == nf::errc::in_doubt)
      return nf::make_error(nf::errc::unavailable,
                            std::string{what} + ": the database connection was lost: "
                              + nf::message_of(err));
    return err;
  }
  return nf::make_error(nf::errc::unavailable,
                        std::string{what} + ": " + caf::to_string(err));
}

// How late a relayed request may time out: an eighth of the request timeout, between 10 ms
// and half a second (30 s requests end at most 1.7% late).
caf::timespan sweep_interval(std::chrono::milliseconds timeout) {
  return std::clamp<caf::timespan>(timeout / 8, std::chrono::milliseconds{10},
                                   std::chrono::milliseconds{500});
}

void schedule_sweep(api_pointer self) {
  auto& st = self->state;
  if (st.sweep_pending || st.deadlines.size() == 0)
    return;
  st.sweep_pending = true;
  self->delayed_send(self, sweep_interval(st.opts.request_timeout), tick_atom_v);
}

void sweep(api_pointer self) {
  auto& st = self->state;
  st.sweep_pending = false;
  st.deadlines.expire(self->clock().now());
  schedule_sweep(self);
}

// Sends a request on and delivers its answer (or error) to the client. The request carries
// no timeout of its own: its deadline is the api's (request_deadlines.hpp). An answer that
// never comes (an actor stopped while it held the request) leaves CAF's handler for it
// registered after the client was answered `unavailable`: a few bytes per such request, for
// as long as the api lives.
// What the node's requests name in their errors.
constexpr const char* engine_node = "engine node";

// The answer to a request this process has nowhere to send.
caf::error no_destination(const char* what) {
  return nf::make_error(nf::errc::unavailable,
                           std::string{what} + ": no engine node in this process");
}

// Whether the request being handled came from another process: a remote sender reaches
// the api through a proxy. Two actor systems of one process share a node id, so the proxy,
// not the node id, is what tells them apart.
bool from_network(api_pointer self) {
  const auto& sender = self->current_sender();
  return !sender || dynamic_cast<caf::actor_proxy*>(sender->get()) != nullptr;
}

// How long a token's check stands: a revoked key's tokens are refused within this plus the
// checker's own refresh (auth.key_refresh_ms).
constexpr auto holder_ttl = std::chrono::seconds{1};

// Who holds `token`, as the checker said within holder_ttl.
const holder& holder_of(api_pointer self, const std::string& token) {
  auto& checked = self->state.checked;
  auto now = self->clock().now();
  auto it = checked.find(token);
  if (it != checked.end() && now - it->second.at < holder_ttl)
    return it->second.who;
  if (checked.size() >= 4096) // many clients at once: start again rather than grow
    checked.clear();
  auto& slot = checked[token];
  slot = {self->state.opts.auth->holder_of(token), now};
  return slot.who;
}

// The door's check of a request before anything reads it. From this process (the HTTP
// door, which authenticated it; an embedding test) a request is taken as it says. From
// another one its credential decides who sends it, whether that holder's role may do it
// (`needs`), and in which namespace, whatever the request claims; the audit record's
// actor and origin are set here too. Without a checker (`--auth off`) every request is
// taken, from "anonymous".
template <class Msg>
caf::error admit(api_pointer self, Msg& m, access needs, const char* what) {
  if (!from_network(self)) {
    if constexpr (msg::names_its_sender<Msg>::value) {
      if (m.actor.empty())
        m.actor = "anonymous";
      if (m.origin.empty())
        m.origin = "caf " + caf::to_string(self->node());
    }
    return {};
  }
  const auto& sender = self->current_sender();
  auto origin = "caf " + (sender ? caf::to_string(sender->node()) : std::string{"unknown"});
  const auto& auth = self->state.opts.auth;
  if (!auth) {
    if constexpr (msg::names_its_sender<Msg>::value) {
      m.actor = "anonymous";
      m.origin = std::move(origin);
    }
    return {};
  }
  const auto& h = holder_of(self, m.credential);
  if (!h.ok)
    return nf::make_error(nf::errc::unauthenticated, std::string{what} + ": " + h.refusal);
  if (!role_allows(h.role, needs))
    return nf::make_error(nf::errc::forbidden, std::string{what} + " needs the role "
                                                 + access_name(needs)
                                                 + " or above; this credential's is " + h.role);
  if constexpr (msg::names_a_namespace<Msg>::value)
    m.namespace_id = h.namespace_name;
  if constexpr (msg::names_its_sender<Msg>::value) {
    m.actor = h.subject;
    m.origin = std::move(origin);
  }
  return {};
}

// What another node forwards is taken only with the cluster's node credential: a client
// that connects to the same port cannot pass its requests off as a node's.
caf::error admit_peer(api_pointer self, const std::string& credential, const char* what) {
  const auto& auth = self->state.opts.auth;
  if (!auth || !from_network(self) || auth->is_node_credential(credential))
    return {};
  const auto& sender = self->current_sender();
  folder_logger("net")->warn("forward_refused what={} from={}", what,
                             sender ? caf::to_string(sender->node()) : "anonymous");
  return nf::make_error(nf::errc::forbidden,
                        std::string{what} + ": forwarded requests are taken from nodes only");
}

// Leases whose tasks reached no worker go back to their queues at once (a store worker
// runs engine/lease/hand_back.hpp), and the node hears of each queue, so a parked poll
// takes its task again without waiting for the lease to expire.
void hand_back(api_pointer self, std::vector<msg::leased_task> tasks, const char* why) {
  if (tasks.empty())
    return;
  folder_logger("net")->info("leases_handed_back n={} why={}", tasks.size(), why);
  self->request(self->state.worker(), self->state.opts.request_timeout, lent_atom_v,
                std::move(tasks))
    .then(
      [self](std::vector<std::string>& queues) {
        if (self->state.opts.node)
          for (auto& q : queues)
            caf::anon_send(self->state.opts.node, work_atom_v, std::move(q));
      },
      [](caf::error& e) {
        folder_logger("net")->warn("lease_hand_back_failed error=\"{}\" (the leases expire "
                                   "on their own)",
                                   nf::message_of(e));
      });
}

// The refusal of a request beyond api.max_pending: the api answers it at once rather than
// queue it behind work it cannot finish sooner (a backlog only grows the wait of everyone).
caf::error over_backlog(api_pointer self, const char* what) {
  const auto& st = self->state;
  if (st.pending + st.waits.size() < st.opts.max_pending)
    return {};
  return nf::make_error(nf::errc::unavailable,
                        std::string{what} + ": the node holds "
                          + std::to_string(st.pending + st.waits.size())
                          + " requests not yet answered (api.max_pending "
                          + std::to_string(st.opts.max_pending) + "): retry");
}

// Sends a request on and delivers its answer (or error) to the client; `done` runs once it is
// answered, however (the open polls' counts).
// `requester_gone`, for a poll: set when its sender went away, so that what it leased goes
// back rather than to nobody.
template <class Reply, class Done, class... Ts>
caf::result<Reply> relay_then(api_pointer self, const caf::actor& dest, const char* what,
                              std::chrono::milliseconds timeout, Done done,
                              std::shared_ptr<const bool> requester_gone, Ts&&... xs) {
  if (!dest) {
    done();
    return no_destination(what);
  }
  if (auto refused = over_backlog(self, what)) {
    done();
    return refused;
  }
  ++self->state.pending;
  auto rp = self->make_response_promise<Reply>();
  // The one way the client hears of a failure: the node's error, or the deadline's.
  auto fail = [self, rp, what, done](caf::error e) mutable {
    --self->state.pending;
    done();
    rp.deliver(as_protocol_error(std::move(e), what));
  };
  auto id = self->state.deadlines.add(self->clock().now() + timeout, fail);
  schedule_sweep(self);
  self->request(dest, caf::infinite, std::forward<Ts>(xs)...)
    .then(
      [self, id, rp, done, requester_gone](Reply& r) mutable {
        if (self->state.deadlines.settle(id)) {
          --self->state.pending;
          done();
          if constexpr (std::is_same_v<Reply, std::vector<msg::leased_task>>)
            if (requester_gone && *requester_gone && !r.empty()) {
              hand_back(self, std::move(r), "client_gone");
              rp.deliver(Reply{}); // to a stopped proxy: dropped
              return;
            }
          rp.deliver(std::move(r));
          return;
        }
        // Past the deadline the client was told `unavailable`: what a poll leased now
        // would be leased to nobody.
        if constexpr (std::is_same_v<Reply, std::vector<msg::leased_task>>)
          hand_back(self, std::move(r), "answered_after_deadline");
      },
      [self, id, fail](caf::error& e) mutable {
        if (self->state.deadlines.settle(id))
          fail(std::move(e));
      });
  return rp;
}

template <class Reply, class... Ts>
caf::result<Reply> relay(api_pointer self, const caf::actor& dest, const char* what,
                         std::chrono::milliseconds timeout, Ts&&... xs) {
  return relay_then<Reply>(self, dest, what, timeout, [] {}, nullptr, std::forward<Ts>(xs)...);
}

// A poll on to the node, counted while it is open: beyond api.max_open_polls for the node or
// api.max_open_polls_per_queue for its queue it is refused at once, so clients that park
// polls and never come back cannot hold the node's memory without bound.
caf::result<std::vector<msg::leased_task>> open_poll(api_pointer self, caf::error rejected,
                                                     std::chrono::milliseconds timeout,
                                                     bool forwarded, msg::poll_request m) {
  using reply = std::vector<msg::leased_task>;
  if (rejected)
    return rejected;
  auto& st = self->state;
  if (st.open_polls >= st.opts.max_open_polls)
    return nf::make_error(nf::errc::unavailable,
                          "poll: the node holds " + std::to_string(st.open_polls)
                            + " polls open (api.max_open_polls): retry");
  auto& of_queue = st.polls_by_queue[m.queue];
  if (of_queue >= st.opts.max_open_polls_per_queue)
    return nf::make_error(nf::errc::unavailable,
                          "poll: the node holds " + std::to_string(of_queue)
                            + " polls open for this queue (api.max_open_polls_per_queue): retry");
  ++st.open_polls;
  ++of_queue;
  // A client's call, or a peer node relaying its own client's poll: watched until answered.
  caf::actor_addr requester;
  std::shared_ptr<const bool> gone;
  if (const auto& sender = self->current_sender(); sender && from_network(self)) {
    requester = caf::actor_cast<caf::actor_addr>(sender);
    auto opened = st.requesters.open(requester);
    if (opened.first)
      self->monitor(sender);
    gone = std::move(opened.gone);
  }
  auto done = [self, queue = m.queue, requester] {
    auto& st = self->state;
    --st.open_polls;
    auto it = st.polls_by_queue.find(queue);
    if (it != st.polls_by_queue.end() && --it->second == 0)
      st.polls_by_queue.erase(it);
    if (requester && st.requesters.close(requester))
      self->demonitor(requester);
  };
  if (forwarded)
    return relay_then<reply>(self, st.opts.node, engine_node, timeout, done, std::move(gone),
                             forward_atom_v, std::move(m));
  return relay_then<reply>(self, st.opts.node, engine_node, timeout, done, std::move(gone),
                           poll_atom_v, std::move(m));
}

// How often the polls noted are written to "PollData": Conductor's poll data is read in
// seconds, and a worker polls many times a second.
constexpr auto poll_data_interval = std::chrono::seconds{5};

// A poll taken, for Conductor's poll data; the first one since the last write schedules the
// next (write_polls).
void note_poll(api_pointer self, const msg::poll_request& m) {
  if (self->state.polls_seen.note(m.namespace_id, m.queue, m.domain, m.worker_id,
                                  poll_notes::clock::now()))
    self->delayed_send(self, poll_data_interval, poll_data_atom_v);
}

void write_polls(api_pointer self) {
  if (auto dropped = self->state.polls_seen.dropped())
    folder_logger("net")->warn("poll_data_keys_dropped n={} (more workers and task types in one "
                               "interval than the api notes; they show at their next poll)",
                               dropped);
  auto seen = self->state.polls_seen.take(poll_notes::clock::now());
  if (seen.empty())
    return;
  self->request(self->state.worker(), self->state.opts.request_timeout, poll_data_atom_v,
                std::move(seen))
    .then([] {},
          [](caf::error& e) {
            folder_logger("net")->warn("poll_data_write_failed error=\"{}\"", nf::message_of(e));
          });
}

// A checked request on to a store worker, or its rejection.
template <class Reply, class... Ts>
caf::result<Reply> to_store(api_pointer self, caf::error rejected, Ts&&... xs) {
  if (rejected)
    return rejected;
  return relay<Reply>(self, self->state.worker(), "database", self->state.opts.request_timeout,
                      std::forward<Ts>(xs)...);
}

// As to_store, for a write that leaves a "DecideQueues" row for `workflow` (a signal, a
// WAIT or HUMAN task updated by its reference): once the store answered, the node hints
// the workflow's decider, which would otherwise find the row only at its next poll (up to
// poll.idle_max_ms later). A hint after a failed write costs one evaluation, nothing more.
template <class Reply, class... Ts>
caf::result<Reply> to_store_then_decide(api_pointer self, caf::error rejected,
                                        std::string workflow, Ts&&... xs) {
  if (rejected)
    return rejected;
  auto hint = [self, workflow = std::move(workflow)] {
    if (self->state.opts.node)
      caf::anon_send(self->state.opts.node, decide_atom_v, workflow);
  };
  return relay_then<Reply>(self, self->state.worker(), "database",
                           self->state.opts.request_timeout, std::move(hint), nullptr,
                           std::forward<Ts>(xs)...);
}

// A checked request on to the node (which routes it to the owning actor).
template <class Reply, class... Ts>
caf::result<Reply> to_node(api_pointer self, caf::error rejected,
                           std::chrono::milliseconds timeout, Ts&&... xs) {
  if (rejected)
    return rejected;
  return relay<Reply>(self, self->state.opts.node, engine_node, timeout,
                      std::forward<Ts>(xs)...);
}

// A batch of reports: each result goes on to the node as a report of its own, exactly as if
// it had come alone, and its answer or error takes its place in the batch's answer. The batch
// is answered when every result is, or at the deadline, with `unavailable` for those still
// out (applied or not, as a lone report that timed out: completions are fenced by the lease
// token). Why a batch: a worker that finished a poll's worth of tasks sends one message each
// way over the network instead of one per task (and the node sends those of workflows
// another node decides on to it together: forward_reports in actors/node).
// `forwarded`: another node's batch of reports for partitions of this one, each given to
// the node as a lone forwarded report would be (served here, never forwarded again).
caf::result<std::vector<msg::report_outcome>>
report_all(api_pointer self, std::chrono::milliseconds timeout,
           std::vector<msg::task_result> results, bool forwarded = false) {
  if (auto err = check_report_count(results.size()))
    return err;
  if (results.empty())
    return std::vector<msg::report_outcome>{};
  const auto& node = self->state.opts.node;
  if (!node)
    return no_destination(engine_node);
  struct batch {
    std::vector<msg::report_outcome> outcomes;
    std::vector<bool> answered;
    size_t open = 0;
    uint64_t deadline_id = 0;
  };
  if (auto refused = over_backlog(self, "task results"))
    return refused;
  auto b = std::make_shared<batch>();
  b->outcomes.resize(results.size());
  b->answered.resize(results.size(), false);
  auto rp = self->make_response_promise<std::vector<msg::report_outcome>>();
  auto answer = [self, b, rp](size_t i, std::string text, caf::error err) mutable {
    if (b->answered[i])
      return;
    b->answered[i] = true;
    b->outcomes[i].answer = std::move(text);
    b->outcomes[i].error = std::move(err);
    if (--b->open == 0 && self->state.deadlines.settle(b->deadline_id)) {
      --self->state.pending;
      rp.deliver(std::move(b->outcomes));
    }
  };
  b->open = results.size();
  ++self->state.pending;
  b->deadline_id = self->state.deadlines.add(
    self->clock().now() + timeout, [self, b, rp](caf::error e) mutable {
      --self->state.pending;
      auto late = as_protocol_error(std::move(e), engine_node);
      for (size_t i = 0; i < b->outcomes.size(); ++i)
        if (!b->answered[i]) {
          b->answered[i] = true;
          b->outcomes[i].error = late;
        }
      b->open = 0;
      rp.deliver(std::move(b->outcomes));
    });
  schedule_sweep(self);
  for (size_t i = 0; i < results.size(); ++i) {
    if (auto err = check(results[i], self->state.opts.limits)) {
      answer(i, {}, std::move(err));
      continue;
    }
    auto sent = forwarded ? self->request(node, caf::infinite, forward_atom_v, std::move(results[i]))
                          : self->request(node, caf::infinite, complete_atom_v, std::move(results[i]));
    std::move(sent).then([answer, i](std::string& r) mutable { answer(i, std::move(r), caf::error{}); },
            [answer, i](caf::error& e) mutable {
              answer(i, {}, as_protocol_error(std::move(e), engine_node));
            });
  }
  return rp;
}

// How long the api trusts a namespace id it looked up.
constexpr auto namespace_ttl = std::chrono::seconds{5};

// The name a request's namespace field holds (empty = "default").
std::string namespace_name(const std::string& field) {
  return field.empty() ? std::string{default_namespace_name} : field;
}

// The id of namespace `name` if this api looked it up lately, else nullptr.
const std::string* known_namespace(api_pointer self, const std::string& name) {
  auto& known = self->state.namespaces;
  auto it = known.find(name);
  if (it == known.end())
    return nullptr;
  if (self->clock().now() - it->second.read > namespace_ttl) {
    known.erase(it);
    return nullptr;
  }
  return &it->second.id;
}

// Looks namespace `name` up, then hands the request (`xs`, as the client sent it) back to
// this actor, which then knows the name: the client's answer comes from that second pass.
// A malformed name is `invalid`, an unknown one `not_found`.
template <class Reply, class... Ts>
caf::result<Reply> look_up_namespace(api_pointer self, const std::string& name, Ts... xs) {
  if (!valid_namespace_name(name))
    return nf::make_error(nf::errc::invalid,
                          "namespace_id: expected a namespace name (a-z, 0-9, '_', '-'; "
                          "starting with a letter; at most 63), got \""
                            + name.substr(0, 64) + "\"");
  auto rp = self->make_response_promise<Reply>();
  self->request(self->state.worker(), self->state.opts.request_timeout, namespaces_atom_v, name)
    .then(
      [self, name, rp, xs...](std::string& id) mutable {
        self->state.namespaces[name] = {std::move(id), self->clock().now()};
        rp.delegate(caf::actor_cast<caf::actor>(self), std::move(xs)...);
      },
      [rp](caf::error& e) mutable {
        rp.deliver(as_protocol_error(std::move(e), "namespace lookup"));
      });
  return rp;
}

// Admits request `m` (admit: `needs`, `what`), then runs `go` on it with its namespace name
// replaced by the namespace's id, or looks the name up first (look_up_namespace, after which
// the request comes here again). Every client request passes here before its checks.
template <class Reply, class Atom, class Msg, class F>
caf::result<Reply> in_namespace(api_pointer self, access needs, const char* what, Atom atom,
                                Msg& m, F go) {
  if (auto refused = admit(self, m, needs, what))
    return refused;
  auto name = namespace_name(m.namespace_id);
  if (const auto* id = known_namespace(self, name)) {
    m.namespace_id = *id;
    return go(m);
  }
  return look_up_namespace<Reply>(self, name, atom, std::move(m));
}

// Definitions into the request's namespace, by an admin.
caf::result<std::string> register_definitions(api_pointer self,
                                              msg::definitions_registration& r) {
  return in_namespace<std::string>(
    self, access::admin, "register definitions", register_atom_v, r, [self](auto& m) {
      return to_store<std::string>(self, check_definitions_text(m.text), register_atom_v,
                                   std::move(m));
    });
}

void read_events_or_wait(api_pointer self, uint64_t wait_id) {
  auto it = self->state.waits.find(wait_id);
  if (it == self->state.waits.end())
    return;
  self->request(self->state.worker(), self->state.opts.request_timeout, events_atom_v,
                it->second.req)
    .then(
      [self, wait_id](std::vector<msg::event_view>& evs) {
        auto it = self->state.waits.find(wait_id);
        if (it == self->state.waits.end())
          return;
        auto& w = it->second;
        auto now = self->clock().now();
        if (!evs.empty() || now >= w.deadline) {
          w.rp.deliver(std::move(evs));
          self->state.waits.erase(it);
          return;
        }
        auto delay = std::min<caf::timespan>(w.interval, w.deadline - now);
        w.interval = std::min<caf::timespan>(w.interval * 2,
                                             self->state.opts.events_max_poll_interval);
        self->delayed_send(self, delay, tick_atom_v, wait_id);
      },
      [self, wait_id](caf::error& e) {
        auto it = self->state.waits.find(wait_id);
        if (it == self->state.waits.end())
          return;
        it->second.rp.deliver(as_protocol_error(std::move(e), "history read"));
        self->state.waits.erase(it);
      });
}

// Polls parked at this node by queue, beside the store's depths: who is waiting for work.
void add_open_polls(const std::unordered_map<std::string, size_t>& polls, boost::json::object& out) {
  auto* queues = out.if_contains("queues");
  if (queues == nullptr || !queues->is_array())
    return;
  for (auto& q : queues->as_array()) {
    auto* o = q.if_object();
    const auto* name = o ? o->if_contains("name") : nullptr;
    if (name == nullptr || !name->is_string())
      continue;
    auto it = polls.find(std::string{name->as_string()});
    (*o)["polling"] = it == polls.end() ? 0 : static_cast<int64_t>(it->second);
  }
}

// The node's status (node id, owned partitions) joined with the store's
// (queue depths, pending decisions) into one JSON object. A node that does not
// answer shows as `"node": {"error": …}`: status is a diagnosis tool and must
// answer even then.
caf::result<std::string> status(api_pointer self) {
  auto rp = self->make_response_promise<std::string>();
  auto timeout = self->state.opts.request_timeout;
  self->request(self->state.worker(), timeout, status_atom_v)
    .then(
      [self, rp, timeout](std::string& store_json) mutable {
        auto finish = [self, rp, store_json](boost::json::value node) mutable {
          boost::json::error_code ec;
          auto store_part = boost::json::parse(store_json, ec);
          boost::json::object out;
          out["node"] = std::move(node);
          if (!ec && store_part.is_object())
            for (auto& kv : store_part.as_object())
              out[kv.key()] = std::move(kv.value());
          add_open_polls(self->state.polls_by_queue, out);
          rp.deliver(boost::json::serialize(out));
        };
        const auto& node = self->state.opts.node;
        if (!node) {
          finish(boost::json::object{{"error", "no engine node in this process"}});
          return;
        }
        self->request(node, timeout, status_atom_v)
          .then(
            [finish](std::string& node_json) mutable {
              boost::json::error_code ec;
              auto v = boost::json::parse(node_json, ec);
              finish(ec ? boost::json::value(node_json) : std::move(v));
            },
            [finish](caf::error& e) mutable {
              finish(boost::json::object{{"error", caf::to_string(e)}});
            });
      },
      [rp](caf::error& e) mutable { rp.deliver(as_protocol_error(std::move(e), "database")); });
  return rp;
}

// The database's readiness (`nodeflow readiness`) and whether the node serves: it runs a
// partition, or owns none by cluster.deciding_nodes and knows a node that does. Ready when
// both hold; a node that does not answer is not ready.
caf::result<std::string> readiness(api_pointer self) {
  auto rp = self->make_response_promise<std::string>();
  auto timeout = self->state.opts.request_timeout;
  self->request(self->state.worker(), timeout, ready_atom_v)
    .then(
      [self, rp, timeout](std::string& db_json) mutable {
        boost::json::error_code ec;
        auto db = boost::json::parse(db_json, ec);
        bool db_ready = !ec && db.is_object() && db.as_object().contains("ready")
                        && db.as_object().at("ready").is_bool()
                        && db.as_object().at("ready").as_bool();
        auto finish = [rp, db, db_ready](int64_t running, bool forwarding,
                                         std::string node_error) mutable {
          boost::json::object out;
          out["ready"] = db_ready && (running > 0 || forwarding);
          out["database"] = db;
          out["partitionsRunning"] = running;
          out["forwardsToDecidingNodes"] = forwarding;
          if (!node_error.empty())
            out["nodeError"] = node_error;
          rp.deliver(boost::json::serialize(out));
        };
        const auto& node = self->state.opts.node;
        if (!node)
          return finish(0, false, "no engine node in this process");
        self->request(node, timeout, status_atom_v)
          .then(
            [finish](std::string& node_json) mutable {
              boost::json::error_code ec2;
              auto v = boost::json::parse(node_json, ec2);
              const auto* o = ec2 ? nullptr : v.if_object();
              const auto* parts = o ? o->if_contains("running") : nullptr;
              const auto* forwards = o ? o->if_contains("forwardsToDecidingNodes") : nullptr;
              finish(parts && parts->is_array() ? static_cast<int64_t>(parts->as_array().size())
                                                : 0,
                     forwards && forwards->is_bool() && forwards->as_bool(), {});
            },
            [finish](caf::error& e) mutable { finish(0, false, caf::to_string(e)); });
      },
      [rp](caf::error& e) mutable { rp.deliver(as_protocol_error(std::move(e), "database")); });
  return rp;
}

api_actor::behavior_type api(api_pointer self, api_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  int n = std::max(1, st.opts.store_workers);
  for (int i = 0; i < n; ++i) {
    st.worker_waits.push_back(std::make_shared<mailbox_clock>());
    st.workers.push_back(spawn_store_worker(
      self->system(),
      store_worker_options{st.opts.dsn, st.opts.default_lease_seconds, st.opts.node_silent_after_ms,
                           st.worker_waits.back(), st.opts.sink_allow_plain_http}));
  }
  // Workers have no other owner: they stop with the api, whatever its exit reason.
  self->attach_functor([workers = st.workers] {
    for (const auto& w : workers)
      caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  });
  folder_logger("net")->info("api_started store_workers={} node={}", n,
                                     st.opts.node ? "yes" : "no");
  // Only the senders of open polls are monitored (poll_requesters.hpp).
  self->set_down_handler([self](caf::down_msg& down) {
    if (self->state.requesters.went_away(down.source))
      folder_logger("net")->info("poll_requester_gone from={} (what its open polls lease goes "
                                 "back to the queues)",
                                 caf::to_string(down.source.node()));
  });
  auto timeout = st.opts.request_timeout;
  const auto& limits = st.opts.limits;
  return {
    [self](login_atom, msg::login_request& r) -> caf::result<msg::session> {
      const auto& auth = self->state.opts.auth;
      if (!auth) // nothing is checked: a session with no token does
        return msg::session{{}, 0, "admin", std::string{default_namespace_name}};
      auto id = self->state.next_login++;
      auto rp = self->make_response_promise<msg::session>();
      self->state.logins.emplace(id, rp);
      auth->session_for_key(
        std::move(r.key_id), std::move(r.key_secret),
        [api = caf::actor_cast<caf::actor>(self), id](holder h, std::string token,
                                                      int64_t expires) {
          msg::session s{std::move(token), expires, h.role, h.namespace_name};
          // As the api itself: it takes this answer only from this process.
          caf::send_as(api, api, login_atom_v, id, std::move(s),
                       h.ok ? std::string{} : h.refusal);
        });
      return rp;
    },
    [self](login_atom, uint64_t id, msg::session& s, std::string& refusal) {
      if (from_network(self))
        return;
      auto it = self->state.logins.find(id);
      if (it == self->state.logins.end())
        return;
      if (refusal.empty())
        it->second.deliver(std::move(s));
      else
        it->second.deliver(nf::make_error(nf::errc::unauthenticated, "login: " + refusal));
      self->state.logins.erase(it);
    },
    [self](register_atom, std::string& text) -> caf::result<std::string> {
      msg::definitions_registration r;
      r.text = std::move(text);
      return register_definitions(self, r);
    },
    [self](register_atom, msg::definitions_registration& r) -> caf::result<std::string> {
      return register_definitions(self, r);
    },
    [self](namespaces_atom, msg::namespace_request& r) -> caf::result<std::string> {
      if (auto refused = admit(self, r, access::admin, "namespaces"))
        return refused;
      // Forgotten at once here; other nodes' apis forget it within namespace_ttl.
      if (r.op == "remove")
        self->state.namespaces.erase(r.name);
      return to_store<std::string>(self, check(r), namespaces_atom_v, std::move(r));
    },
    [self](definitions_atom, msg::definitions_query& q) -> caf::result<std::string> {
      return in_namespace<std::string>(self, q.op == "delete" ? access::admin : access::reader,
                                       "definitions", definitions_atom_v, q, [self](auto& m) {
        return to_store<std::string>(self, check(m), definitions_atom_v, std::move(m));
      });
    },
    [self](sinks_atom, msg::sink_request& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::admin, "webhook sinks", sinks_atom_v, r,
                                       [self](auto& m) {
        return to_store<std::string>(self, check(m), sinks_atom_v, std::move(m));
      });
    },
    [self](task_history_atom, msg::task_history_query& q) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::reader, "task executions",
                                       task_history_atom_v, q, [self](auto& m) {
        return to_store<std::string>(self, check(m), task_history_atom_v, std::move(m));
      });
    },
    [self](schedules_atom, msg::schedule_request& r) -> caf::result<std::string> {
      bool reads = r.op == "list" || r.op == "get" || r.op == "next";
      return in_namespace<std::string>(self, reads ? access::reader : access::admin,
                                       "schedules", schedules_atom_v, r, [self](auto& m) {
        if (auto rejected = check(m))
          return caf::result<std::string>{rejected};
        if (m.op != "save" && m.op != "resume")
          return to_store<std::string>(self, caf::error{}, schedules_atom_v, std::move(m));
        // A saved or resumed schedule may now be due before the node's scheduler next
        // looks: tell it once the change committed (a lost hint costs its poll interval).
        auto rp = self->make_response_promise<std::string>();
        self->request(self->state.worker(), self->state.opts.request_timeout, schedules_atom_v,
                      std::move(m))
          .then(
            [self, rp](std::string& answer) mutable {
              if (self->state.opts.node)
                caf::anon_send(self->state.opts.node, schedules_atom_v);
              rp.deliver(std::move(answer));
            },
            [rp](caf::error& e) mutable {
              rp.deliver(as_protocol_error(std::move(e), "database"));
            });
        return caf::result<std::string>{rp};
      });
    },
    // Searching reads (a reader may); putting, deleting and dropping documents change them.
    [self](vectors_atom, msg::vector_request& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, r.op == "search" ? access::reader : access::operator_,
                                       "vectors", vectors_atom_v, r, [self](auto& m) {
        return to_store<std::string>(self, caf::error{}, vectors_atom_v, std::move(m));
      });
    },
    [self](audit_atom, msg::audit_query& q) -> caf::result<std::string> {
      if (auto refused = admit(self, q, access::admin, "audit"))
        return refused;
      return to_store<std::string>(self, check(q), audit_atom_v, std::move(q));
    },
    [self, timeout](start_atom, msg::start_request& r) -> caf::result<msg::start_reply> {
      return in_namespace<msg::start_reply>(self, access::operator_, "start", start_atom_v, r,
                                            [self, timeout](auto& m) {
        return to_node<msg::start_reply>(self, check(m, self->state.opts.limits), timeout, start_atom_v, std::move(m));
      });
    },
    [self](get_atom, msg::workflow_query& q) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::reader, "get", get_atom_v, q, [self](auto& m) {
        return to_store<std::string>(self, check(m), get_atom_v, std::move(m));
      });
    },
    [self](search_atom, msg::search_request& r) -> caf::result<msg::search_page> {
      return in_namespace<msg::search_page>(self, access::reader, "search", search_atom_v, r,
                                            [self](auto& m) {
        return to_store<msg::search_page>(self, check(m), search_atom_v, std::move(m));
      });
    },
    [self](count_atom, msg::search_request& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::reader, "count", count_atom_v, r,
                                       [self](auto& m) {
        return to_store<std::string>(self, check(m), count_atom_v, std::move(m));
      });
    },
    [self, timeout](command_atom, msg::workflow_command& c) -> caf::result<std::string> {
      // A removal deletes the execution and its history: an admin's, done by a store worker
      // (nothing is left to decide).
      if (c.op == "remove")
        return in_namespace<std::string>(self, access::admin, "workflow removal", command_atom_v,
                                         c, [self](auto& m) {
          return to_store<std::string>(self, check_removal(m), command_atom_v, std::move(m));
        });
      return in_namespace<std::string>(self, access::operator_, "workflow command",
                                       command_atom_v, c, [self, timeout](auto& m) {
        return to_node<std::string>(self, check(m, self->state.opts.limits), timeout, command_atom_v, std::move(m));
      });
    },
    [self](signal_atom, msg::signal_request& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::operator_, "signal", signal_atom_v, r,
                                       [self](auto& m) {
        auto rejected = check(m, self->state.opts.limits);
        auto workflow = m.workflow_id;
        return to_store_then_decide<std::string>(self, std::move(rejected), std::move(workflow),
                                                 signal_atom_v, std::move(m));
      });
    },
    [self, timeout, limits](poll_atom,
                            msg::poll_request& r) -> caf::result<std::vector<msg::leased_task>> {
      using reply = std::vector<msg::leased_task>;
      return in_namespace<reply>(self, access::worker, "poll", poll_atom_v, r,
                                 [self, timeout, limits](auto& m) {
        auto rejected = check(m, limits);
        if (!rejected)
          note_poll(self, m);
        // The queue as stored: a namespace polls only its own (proto/namespaces.hpp), and
        // a domain only its own tasks (proto/domains.hpp).
        m.queue = namespace_queue(m.namespace_id, domain_queue(m.domain, m.queue));
        // A long poll legitimately takes its whole timeout: wait that long plus the margin.
        auto wait = timeout + std::chrono::milliseconds{m.timeout_ms};
        return open_poll(self, std::move(rejected), wait, false, std::move(m));
      });
    },
    [self, timeout](complete_atom, msg::task_result& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::worker, "task result", complete_atom_v, r,
                                       [self, timeout](auto& m) {
        return to_node<std::string>(self, check(m, self->state.opts.limits), timeout, complete_atom_v, std::move(m));
      });
    },
    [self, timeout](complete_atom, std::vector<msg::task_result>& rs)
      -> caf::result<std::vector<msg::report_outcome>> {
      for (auto& r : rs)
        if (auto refused = admit(self, r, access::worker, "task results"))
          return refused;
      // Every report's namespace known first (a batch names one, in practice).
      for (auto& r : rs)
        if (!known_namespace(self, namespace_name(r.namespace_id)))
          return look_up_namespace<std::vector<msg::report_outcome>>(
            self, namespace_name(r.namespace_id), complete_atom_v, std::move(rs));
      for (auto& r : rs)
        r.namespace_id = *known_namespace(self, namespace_name(r.namespace_id));
      return report_all(self, timeout, std::move(rs));
    },
    [self](heartbeat_atom, msg::heartbeat_request& r) -> caf::result<int64_t> {
      return in_namespace<int64_t>(self, access::worker, "heartbeat", heartbeat_atom_v, r,
                                   [self](auto& m) {
        return to_store<int64_t>(self, check(m), heartbeat_atom_v, std::move(m));
      });
    },
    [self](progress_atom, msg::task_progress& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::worker, "task progress", progress_atom_v, r,
                                       [self](auto& m) {
        return to_store<std::string>(self, check(m, self->state.opts.limits), progress_atom_v, std::move(m));
      });
    },
    [self](task_ref_atom, msg::task_ref_update& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::worker, "task update by reference",
                                       task_ref_atom_v, r, [self](auto& m) {
        auto rejected = check(m, self->state.opts.limits);
        auto workflow = m.workflow_id;
        return to_store_then_decide<std::string>(self, std::move(rejected), std::move(workflow),
                                                 task_ref_atom_v, std::move(m));
      });
    },
    [self, limits](events_atom, msg::events_request& r)
      -> caf::result<std::vector<msg::event_view>> {
      using reply = std::vector<msg::event_view>;
      return in_namespace<reply>(self, access::reader, "events", events_atom_v, r,
                                 [self, limits](auto& m)
                                   -> caf::result<reply> {
        if (auto err = check(m, limits))
          return err;
        if (m.wait_ms == 0)
          return to_store<reply>(self, caf::error{}, events_atom_v, std::move(m));
        if (self->state.waits.size() >= self->state.opts.max_event_waits)
          return nf::make_error(nf::errc::unavailable,
                                "events: the node holds "
                                  + std::to_string(self->state.waits.size())
                                  + " waiting event reads (api.max_event_waits): retry");
        if (auto refused = over_backlog(self, "events"))
          return refused;
        auto id = self->state.next_wait_id++;
        auto deadline = self->clock().now() + std::chrono::milliseconds{m.wait_ms};
        auto rp = self->make_response_promise<reply>();
        self->state.waits.emplace(
          id, pending_events{rp, std::move(m), deadline, self->state.opts.events_poll_interval});
        read_events_or_wait(self, id);
        return rp;
      });
    },
    [self](tick_atom, uint64_t wait_id) { read_events_or_wait(self, wait_id); },
    [self](tick_atom) { sweep(self); },
    [self](poll_data_atom) { write_polls(self); },
    [self](poll_data_atom, msg::poll_data_query& q) -> caf::result<std::string> {
      return in_namespace<std::string>(self, access::reader, "poll data", poll_data_atom_v, q,
                                       [self](auto& m) {
        if (auto rejected = check(m))
          return caf::result<std::string>{rejected};
        // What this node noted goes with the read: its own polls show at once.
        auto pending = self->state.polls_seen.take(poll_notes::clock::now());
        return to_store<std::string>(self, caf::error{}, poll_data_atom_v, std::move(m),
                                     std::move(pending));
      });
    },
    [self](caf::actor& node) {
      // Only this process hands the api its node (attach_node): a handle sent by a peer on
      // the network would otherwise receive every start, completion and poll from then on.
      // A remote sender reaches the api through a proxy; two actor systems of one process
      // share a node id, so the proxy, not the node id, is what tells them apart.
      if (from_network(self)) {
        const auto& sender = self->current_sender();
        folder_logger("net")->warn("api_node_refused from={}",
                                   sender ? caf::to_string(sender->node()) : "anonymous");
        return;
      }
      folder_logger("net")->info("api_node_attached");
      self->state.opts.node = std::move(node);
    },
    [self](status_atom) -> caf::result<std::string> {
      if (self->state.opts.auth && from_network(self))
        return nf::make_error(nf::errc::unauthenticated,
                              "status: send it with a credential (status_atom, token)");
      return status(self);
    },
    [self](status_atom, std::string& credential) -> caf::result<std::string> {
      struct {
        std::string credential;
      } m{std::move(credential)};
      if (auto refused = admit(self, m, access::reader, "status"))
        return refused;
      return status(self);
    },
    [self](ready_atom) -> caf::result<std::string> { return readiness(self); },
    [self](deadletter_atom, msg::deadletter_request& r) -> caf::result<std::string> {
      return in_namespace<std::string>(self, r.op == "replay" ? access::operator_ : access::reader,
                                       "dead letters", deadletter_atom_v, r, [self](auto& m) {
        return to_store<std::string>(self, check(m), deadletter_atom_v, std::move(m));
      });
    },
    [self](metrics_atom) -> caf::result<std::string> {
      // For this process's HTTP door, which checks its callers itself.
      if (self->state.opts.auth && from_network(self))
        return nf::make_error(nf::errc::unauthenticated,
                              "metrics: served over HTTP (GET /metrics) only");
      return to_store<std::string>(self, caf::error{}, metrics_atom_v);
    },
    // From another node, with the cluster's node credential (admit_peer): admitted and
    // checked there, and checked again here. A command keeps the actor and origin the first
    // node's door stamped on it.
    [self, timeout](forward_atom, msg::task_result& r) -> caf::result<std::string> {
      if (auto refused = admit_peer(self, r.credential, "forwarded task result"))
        return refused;
      return to_node<std::string>(self, check(r, self->state.opts.limits), timeout, forward_atom_v, std::move(r));
    },
    [self, timeout](forward_atom, std::vector<msg::task_result>& rs)
      -> caf::result<std::vector<msg::report_outcome>> {
      for (const auto& r : rs)
        if (auto refused = admit_peer(self, r.credential, "forwarded task results"))
          return refused;
      return report_all(self, timeout, std::move(rs), true);
    },
    [self, timeout](forward_atom, msg::workflow_command& c) -> caf::result<std::string> {
      if (auto refused = admit_peer(self, c.credential, "forwarded workflow command"))
        return refused;
      return to_node<std::string>(self, check(c, self->state.opts.limits), timeout, forward_atom_v, std::move(c));
    },
    [self, timeout, limits](forward_atom,
                            msg::poll_request& r) -> caf::result<std::vector<msg::leased_task>> {
      if (auto refused = admit_peer(self, r.credential, "forwarded poll"))
        return refused;
      auto wait = timeout + std::chrono::milliseconds{r.timeout_ms};
      auto rejected = check(r, limits); // before r is moved into the call
      return open_poll(self, std::move(rejected), wait, true, std::move(r));
    },
    // A start its first node forwarded to a deciding node (cluster.deciding_nodes): the
    // namespace is the id that node resolved.
    [self, timeout](forward_atom, msg::start_request& r) -> caf::result<msg::start_reply> {
      if (auto refused = admit_peer(self, r.credential, "forwarded start"))
        return refused;
      return to_node<msg::start_reply>(self, check(r, self->state.opts.limits), timeout,
                                       forward_atom_v, std::move(r));
    },
    [self](lent_atom, std::vector<msg::leased_task>& tasks) {
      // From inside the process only (the HTTP door, whose client went away): a lease
      // token names the task, but not who may give its lease up.
      if (from_network(self)) {
        folder_logger("net")->warn("lease_hand_back_refused n={}: taken from this process "
                                   "only",
                                   tasks.size());
        return;
      }
      hand_back(self, std::move(tasks), "client_gone");
    },
    [self](forward_atom, work_atom, std::string& queue, std::string& credential) {
      if (!admit_peer(self, credential, "forwarded work hint") && self->state.opts.node)
        caf::anon_send(self->state.opts.node, forward_atom_v, work_atom_v, std::move(queue));
    },
    // A node that opened the link to this one introduces its api (net/cluster/middleman_peers).
    [self](forward_atom, peer_atom, std::string& address, caf::actor& peer,
           std::string& credential) {
      if (!admit_peer(self, credential, "peer introduction") && self->state.opts.node)
        caf::anon_send(self->state.opts.node, peer_atom_v, std::move(address), std::move(peer));
    },
    [self](forward_atom, decide_atom, int16_t shard, std::string& credential) {
      if (!admit_peer(self, credential, "forwarded decide hint") && self->state.opts.node)
        caf::anon_send(self->state.opts.node, forward_atom_v, decide_atom_v, shard);
    },
  };
}

} // namespace

api_options make_api_options(const config::values& settings, std::string dsn, caf::actor node) {
  api_options o;
  o.dsn = std::move(dsn);
  o.node = std::move(node);
  o.store_workers = static_cast<int>(settings.get(config::keys::db_connections_per_role));
  o.default_lease_seconds = static_cast<int>(settings.get(config::keys::lessor_lease_seconds));
  o.node_silent_after_ms = settings.get(config::keys::membership_lease_ms);
  o.sink_allow_plain_http = settings.get(config::keys::relay_allow_plain_http);
  o.limits.max_poll_timeout_ms = settings.get(config::keys::lessor_max_poll_timeout_ms);
  o.limits.max_events_wait_ms = settings.get(config::keys::lessor_max_poll_timeout_ms);
  o.limits.max_payload_bytes = settings.get(config::keys::payloads_max_bytes);
  o.request_timeout = std::chrono::milliseconds{settings.get(config::keys::client_timeout_ms)};
  o.max_pending = static_cast<size_t>(settings.get(config::keys::api_max_pending));
  o.max_open_polls = static_cast<size_t>(settings.get(config::keys::api_max_open_polls));
  o.max_open_polls_per_queue =
    static_cast<size_t>(settings.get(config::keys::api_max_open_polls_per_queue));
  o.max_event_waits = static_cast<size_t>(settings.get(config::keys::api_max_event_waits));
  return o;
}

client_api spawn_api(caf::actor_system& sys, api_options opts) {
  return caf::actor_cast<client_api>(sys.spawn(api, std::move(opts)));
}

void attach_node(const client_api& api, caf::actor node) {
  // Sent by a local actor, the only sender the api takes a node from.
  caf::scoped_actor self{api->home_system()};
  self->send(caf::actor_cast<api_actor>(api), std::move(node));
}

} // namespace nf::net
