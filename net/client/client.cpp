#include "net/client/client.hpp"

#include <atomic>
#include <cstdlib>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "net/client/system_config.hpp"
#include "proto/client_api.hpp"
#include "proto/errors.hpp"

namespace nf {

namespace {

using clock_type = std::chrono::steady_clock;

bool is_answer(const caf::error& err) {
  return nf::is_nodeflow_error(err)
         && nf::code_of(err) != nf::errc::unavailable;
}

caf::error unavailable(std::string what) {
  return nf::make_error(nf::errc::unavailable, std::move(what));
}

// A client needs few threads: its actors only wait for answers.
net::system_config& client_config(net::system_config& cfg) {
  cfg.set("scheduler.max-threads", 2);
  return cfg;
}

} // namespace

// Every request struct carries the session's token (msg::carries_credential).
template <class T>
void put_credential(T& x, const std::string& cred) {
  if constexpr (msg::carries_credential<T>::value)
    x.credential = cred;
}

void put_credential(std::vector<msg::task_result>& rs, const std::string& cred) {
  for (auto& r : rs)
    r.credential = cred;
}

struct client::impl {
  client_options opts;
  std::string address;

  mutable std::mutex mx;
  client_api api;                        // the live connection's handle; null = reconnect
  clock_type::time_point next_attempt{}; // no connect attempt before this (backoff)
  std::chrono::milliseconds backoff;
  std::string last_connect_error;
  std::unordered_map<uint64_t, caf::actor> calls; // in flight, stopped on destruction
  std::string token;          // the session's: every request's credential
  int64_t token_expires_s = 0;
  std::atomic<uint64_t> next_call{1};

  // Declared last: destroyed first, after every call actor has stopped.
  net::system_config cfg;
  caf::actor_system sys;

  explicit impl(client_options o)
    : opts(std::move(o)),
      address(opts.host + ":" + std::to_string(opts.port)),
      backoff(opts.min_backoff),
      sys(client_config(cfg)) {
  }

  ~impl() {
    std::vector<caf::actor> live;
    {
      std::lock_guard<std::mutex> guard{mx};
      for (auto& [id, a] : calls)
        live.push_back(a);
    }
    for (auto& a : live)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  // The live handle, connecting (with backoff between failed attempts) until
  // `deadline` if there is none.
  caf::expected<client_api> handle(clock_type::time_point deadline) {
    std::unique_lock<std::mutex> lock{mx};
    for (;;) {
      if (api) {
        if (auto refused = renew_if_due(deadline))
          return refused;
        return api;
      }
      auto now = clock_type::now();
      if (now < next_attempt) {
        if (next_attempt > deadline)
          return unavailable("cannot reach node " + address + ": " + last_connect_error);
        auto wake = next_attempt;
        lock.unlock();
        std::this_thread::sleep_until(wake);
        lock.lock();
        continue;
      }
      auto h = sys.middleman().remote_actor<client_api>(opts.host, opts.port);
      if (h) {
        // Nothing is sent before the login: a node that checks credentials serves nothing
        // else to a connection without them.
        if (auto refused = log_in(*h, deadline))
          return refused;
        api = std::move(*h);
        backoff = opts.min_backoff;
        next_attempt = {};
        return api;
      }
      last_connect_error = caf::to_string(h.error());
      next_attempt = clock_type::now() + backoff;
      backoff = std::min(backoff * 2, opts.max_backoff);
      // An attempt can outlast its backoff (a connect that waits for its own timeout): the
      // deadline is checked after each, not only while waiting for the next.
      if (next_attempt > deadline)
        return unavailable("cannot reach node " + address + ": " + last_connect_error);
    }
  }

  static int64_t unix_now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
  }

  // Logs in with the client's key (when it has one) and keeps the session's token; `mx` held.
  // A refused key is an answer (`unauthenticated: …`), not a reason to retry.
  caf::error log_in(const client_api& h, clock_type::time_point deadline) {
    if (opts.key_id.empty())
      return {};
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline
                                                                      - clock_type::now());
    caf::scoped_actor self{sys};
    caf::error err;
    self
      ->request(h, std::max(wait, std::chrono::milliseconds{1}), login_atom_v,
                msg::login_request{opts.key_id, opts.key_secret})
      .receive(
        [&](msg::session& s) {
          token = std::move(s.token);
          token_expires_s = s.expires_at_s;
        },
        [&](caf::error& e) { err = std::move(e); });
    if (err && !nf::is_nodeflow_error(err))
      return unavailable("node " + address + ": login: " + caf::to_string(err));
    return err;
  }

  // A session that ends within the minute is renewed first (`mx` held).
  caf::error renew_if_due(clock_type::time_point deadline) {
    if (opts.key_id.empty() || token_expires_s - unix_now_s() > 60)
      return {};
    return log_in(api, deadline);
  }

  std::string credential() {
    std::lock_guard<std::mutex> guard{mx};
    return token;
  }

  // Forgets `lost` so the next call reconnects (unless a newer handle exists).
  void forget(const client_api& lost) {
    std::lock_guard<std::mutex> guard{mx};
    if (api == lost)
      api = nullptr;
  }

  caf::error translate(caf::error err, std::chrono::milliseconds timeout) {
    if (nf::is_nodeflow_error(err))
      return err;
    if (err == caf::sec::request_timeout)
      return unavailable("node " + address + " did not answer within "
                         + std::to_string(timeout.count()) + " ms");
    return unavailable("node " + address + ": " + caf::to_string(err));
  }

  // Sends one request from a short-lived actor that also watches the
  // connection, so a dropped link fails the call at once instead of at its
  // timeout; `done` runs exactly once (unless the client is destroyed first).
  template <class T, class... Ts>
  void call(std::chrono::milliseconds timeout, callback<T> done, Ts... xs) {
    auto h = handle(clock_type::now() + timeout);
    if (!h) {
      done(h.error());
      return;
    }
    client_api dest = *h;
    auto cred = credential();
    (put_credential(xs, cred), ...);
    uint64_t id = next_call++;
    auto shared_done = std::make_shared<callback<T>>(std::move(done));
    sys.spawn([this, id, dest, timeout, shared_done, xs...](caf::event_based_actor* self) {
      {
        std::lock_guard<std::mutex> guard{mx};
        calls.emplace(id, caf::actor_cast<caf::actor>(self));
      }
      auto finish = [this, id, self, shared_done](caf::expected<T> r) {
        {
          std::lock_guard<std::mutex> guard{mx};
          calls.erase(id);
        }
        self->quit();
        (*shared_done)(std::move(r));
      };
      self->monitor(dest);
      self->set_down_handler([this, dest, finish](caf::down_msg&) {
        forget(dest);
        finish(unavailable("lost the connection to node " + address));
      });
      self->request(dest, timeout, xs...)
        .then([finish](T& r) { finish(std::move(r)); },
              [this, dest, timeout, finish](caf::error& e) {
                if (!is_answer(e))
                  forget(dest);
                finish(translate(std::move(e), timeout));
              });
    });
  }

  template <class T, class... Ts>
  caf::expected<T> call_sync(std::chrono::milliseconds timeout, Ts... xs) {
    auto p = std::make_shared<std::promise<caf::expected<T>>>();
    auto f = p->get_future();
    call<T>(timeout, [p](caf::expected<T> r) { p->set_value(std::move(r)); }, std::move(xs)...);
    // The call's own request timeout answers first; this only guards against
    // a call actor stopped from outside.
    if (f.wait_for(timeout + std::chrono::seconds(5)) != std::future_status::ready)
      return unavailable("node " + address + ": no answer");
    return f.get();
  }

  std::chrono::milliseconds with_wait(int64_t wait_ms) const {
    return opts.timeout + std::chrono::milliseconds{wait_ms};
  }
};

void key_from_environment(client_options& opts) {
  const char* id = std::getenv("NODEFLOW_KEY_ID");
  const char* secret = std::getenv("NODEFLOW_KEY_SECRET");
  if (id != nullptr && *id != '\0' && secret != nullptr && *secret != '\0') {
    opts.key_id = id;
    opts.key_secret = secret;
  }
}

caf::expected<client_options> parse_node_address(const std::string& host_port,
                                                  client_options opts) {
  auto bad = [&](const std::string& why) {
    return nf::make_error(nf::errc::invalid,
                             "node address: expected HOST:PORT, got \"" + host_port + "\" (" + why
                               + ")");
  };
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return bad("no host or no port");
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  std::string port = host_port.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad("the port must be a number 1 … 65535");
  auto n = std::stoi(port);
  if (n < 1 || n > 65535)
    return bad("the port must be a number 1 … 65535");
  opts.host = host;
  opts.port = static_cast<uint16_t>(n);
  return opts;
}

std::string describe(const caf::error& err) {
  if (!err)
    return "ok";
  if (!nf::is_nodeflow_error(err))
    return "unavailable: " + caf::to_string(err);
  auto code = nf::code_of(err);
  auto text = nf::message_of(err);
  std::string label = nf::to_string(code);
  if (text.empty() || text == label)
    return label;
  return label + ": " + text;
}

bool is_unavailable(const caf::error& err) {
  return err && !is_answer(err);
}

client::client(client_options opts) : impl_(std::make_unique<impl>(std::move(opts))) {
}

client::~client() = default;

namespace {

// What the client's namespace option fills in where a request names none.
template <class Message>
Message scoped_by(const client_options& o, Message m) {
  if (m.namespace_id.empty())
    m.namespace_id = o.namespace_name;
  return m;
}

// A fresh request id (migration 0037): 128 bits from the system's CSPRNG (getrandom behind
// std::random_device), in hex.
std::string fresh_request_id() {
  static thread_local std::random_device rd;
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 4; ++i) {
    auto x = static_cast<uint32_t>(rd());
    for (int k = 0; k < 8; ++k)
      id.push_back(hex[(x >> (4 * k)) & 0xf]);
  }
  return id;
}

// Requests with a request id are safe to send again: the node applies one of them once. A
// node that answers `unavailable` (a partition moving, the database briefly away) gets the
// same request, with the same id, up to this many times more.
constexpr int request_id_retries = 2;

template <class Message>
Message with_request_id(Message m) {
  if (m.request_id.empty())
    m.request_id = fresh_request_id();
  return m;
}

template <class T, class Call>
caf::expected<T> retried(std::chrono::milliseconds timeout, Call call) {
  // One timeout bounds the call and its resends: each gets what is left of it, and none is
  // sent once it ran out (a node that cannot be reached is reported within the timeout).
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto r = call(timeout);
  for (int i = 0; i < request_id_retries && !r && nf::is_nodeflow_error(r.error())
                  && nf::code_of(r.error()) == nf::errc::unavailable;
       ++i) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      break;
    r = call(left);
  }
  return r;
}

} // namespace

template <class Message>
Message client::scoped(Message m) const {
  return scoped_by(impl_->opts, std::move(m));
}

std::vector<msg::task_result> client::scoped_all(std::vector<msg::task_result> rs) const {
  for (auto& r : rs)
    r = scoped(std::move(r));
  return rs;
}

const client_options& client::options() const {
  return impl_->opts;
}

caf::expected<void> client::connect() {
  auto h = impl_->handle(clock_type::now() + impl_->opts.timeout);
  if (!h)
    return h.error();
  return caf::unit;
}

caf::expected<std::string> client::register_definitions(const std::string& json_text) {
  msg::definitions_registration r;
  r.text = json_text;
  return impl_->call_sync<std::string>(impl_->opts.timeout, register_atom_v, scoped(r));
}

caf::expected<msg::start_reply> client::start(const msg::start_request& r) {
  auto m = scoped(r);
  if (!m.idempotency_key.empty())
    return impl_->call_sync<msg::start_reply>(impl_->opts.timeout, start_atom_v, m);
  m = with_request_id(std::move(m));
  return retried<msg::start_reply>(impl_->opts.timeout, [&](std::chrono::milliseconds t) {
    return impl_->call_sync<msg::start_reply>(t, start_atom_v, m);
  });
}

caf::expected<std::string> client::get(const std::string& workflow_id, bool include_tasks) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, get_atom_v,
                                       scoped(msg::workflow_query{workflow_id, include_tasks}));
}

caf::expected<msg::search_page> client::search(const msg::search_request& r) {
  return impl_->call_sync<msg::search_page>(impl_->opts.timeout, search_atom_v, scoped(r));
}

caf::expected<std::string> client::command(const msg::workflow_command& c) {
  auto m = with_request_id(scoped(c));
  return retried<std::string>(impl_->opts.timeout, [&](std::chrono::milliseconds t) {
    return impl_->call_sync<std::string>(t, command_atom_v, m);
  });
}

caf::expected<std::string> client::pause(const std::string& id, const std::string& reason) {
  return command({"pause", id, reason, {}, 0, {}});
}

caf::expected<std::string> client::resume(const std::string& id, const std::string& reason) {
  return command({"resume", id, reason, {}, 0, {}});
}

caf::expected<std::string> client::terminate(const std::string& id, const std::string& reason) {
  return command({"terminate", id, reason, {}, 0, {}});
}

caf::expected<std::string> client::retry(const std::string& id, const std::string& reason) {
  return command({"retry", id, reason, {}, 0, {}});
}

caf::expected<std::string> client::rerun(const std::string& id, const std::string& task_ref,
                                         int32_t iteration, const std::string& input_json) {
  return command({"rerun", id, {}, task_ref, iteration, input_json});
}

caf::expected<std::string> client::restart(const std::string& id, const std::string& input_json) {
  return command({"restart", id, {}, {}, 0, input_json});
}

caf::expected<std::string> client::signal(const std::string& id, const std::string& name,
                                          const std::string& payload_json) {
  msg::signal_request r{id, name, payload_json};
  return signal(r);
}

caf::expected<std::string> client::signal(const msg::signal_request& r) {
  auto m = with_request_id(scoped(r));
  return retried<std::string>(impl_->opts.timeout, [&](std::chrono::milliseconds t) {
    return impl_->call_sync<std::string>(t, signal_atom_v, m);
  });
}

caf::expected<std::vector<msg::leased_task>> client::poll(const msg::poll_request& r) {
  return impl_->call_sync<std::vector<msg::leased_task>>(impl_->with_wait(r.timeout_ms),
                                                         poll_atom_v, scoped(r));
}

caf::expected<std::string> client::complete(const msg::leased_task& t,
                                            const std::string& output_json) {
  return report({t.task_id, t.workflow_id, t.lease_token, "COMPLETED", output_json, {}});
}

caf::expected<std::string> client::fail(const msg::leased_task& t, const std::string& reason,
                                        bool terminal, const std::string& output_json) {
  return report({t.task_id, t.workflow_id, t.lease_token,
                 terminal ? "FAILED_WITH_TERMINAL_ERROR" : "FAILED", output_json, reason});
}

caf::expected<std::string> client::report(const msg::task_result& r) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, complete_atom_v, scoped(r));
}

caf::expected<int64_t> client::heartbeat(const msg::leased_task& t) {
  return impl_->call_sync<int64_t>(impl_->opts.timeout, heartbeat_atom_v,
                                   scoped(msg::heartbeat_request{t.task_id, t.workflow_id,
                                                                 t.lease_token}));
}

caf::expected<int64_t> client::postpone(const msg::leased_task& t, int64_t seconds) {
  msg::heartbeat_request r{t.task_id, t.workflow_id, t.lease_token};
  r.callback_after_seconds = seconds;
  return impl_->call_sync<int64_t>(impl_->opts.timeout, heartbeat_atom_v, scoped(std::move(r)));
}

caf::expected<std::string> client::progress(const msg::task_progress& p) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, progress_atom_v, scoped(p));
}

caf::expected<std::string> client::update_task(const msg::task_ref_update& u) {
  auto m = with_request_id(scoped(u));
  return retried<std::string>(impl_->opts.timeout, [&](std::chrono::milliseconds t) {
    return impl_->call_sync<std::string>(t, task_ref_atom_v, m);
  });
}

caf::expected<std::vector<msg::event_view>> client::events(const msg::events_request& r) {
  return impl_->call_sync<std::vector<msg::event_view>>(impl_->with_wait(r.wait_ms),
                                                        events_atom_v, scoped(r));
}

caf::expected<std::string> client::status() {
  if (!impl_->opts.key_id.empty()) {
    // With a key, the status request carries the session's token as its argument.
    if (auto h = impl_->handle(clock_type::now() + impl_->opts.timeout); !h)
      return h.error();
    return impl_->call_sync<std::string>(impl_->opts.timeout, status_atom_v,
                                         impl_->credential());
  }
  return impl_->call_sync<std::string>(impl_->opts.timeout, status_atom_v);
}

caf::expected<std::string> client::definitions(const msg::definitions_query& q) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, definitions_atom_v, scoped(q));
}

caf::expected<std::string> client::task_history(const msg::task_history_query& q) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, task_history_atom_v, scoped(q));
}

caf::expected<std::string> client::poll_data(const msg::poll_data_query& q) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, poll_data_atom_v, scoped(q));
}

caf::expected<std::string> client::deadletters(const msg::deadletter_request& r) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, deadletter_atom_v, scoped(r));
}

void client::poll_async(const msg::poll_request& r, callback<std::vector<msg::leased_task>> cb) {
  impl_->call<std::vector<msg::leased_task>>(impl_->with_wait(r.timeout_ms), std::move(cb),
                                             poll_atom_v, scoped(r));
}

void client::report_async(const msg::task_result& r, callback<std::string> cb) {
  impl_->call<std::string>(impl_->opts.timeout, std::move(cb), complete_atom_v, scoped(r));
}

namespace {

client::report_answers answers_of(std::vector<msg::report_outcome>&& outcomes) {
  client::report_answers out;
  out.reserve(outcomes.size());
  for (auto& o : outcomes) {
    if (o.error)
      out.emplace_back(std::move(o.error));
    else
      out.emplace_back(std::move(o.answer));
  }
  return out;
}

} // namespace

caf::expected<client::report_answers>
client::report_batch(const std::vector<msg::task_result>& rs) {
  auto r = impl_->call_sync<std::vector<msg::report_outcome>>(impl_->opts.timeout, complete_atom_v,
                                                              scoped_all(rs));
  if (!r)
    return r.error();
  return answers_of(std::move(*r));
}

void client::report_batch_async(const std::vector<msg::task_result>& rs,
                                callback<report_answers> cb) {
  impl_->call<std::vector<msg::report_outcome>>(
    impl_->opts.timeout,
    [cb = std::move(cb)](caf::expected<std::vector<msg::report_outcome>> r) {
      if (!r)
        cb(r.error());
      else
        cb(answers_of(std::move(*r)));
    },
    complete_atom_v, scoped_all(rs));
}

void client::start_async(const msg::start_request& r, callback<msg::start_reply> cb) {
  impl_->call<msg::start_reply>(impl_->opts.timeout, std::move(cb), start_atom_v, scoped(r));
}

caf::expected<std::string> client::namespaces(const msg::namespace_request& r) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, namespaces_atom_v, r);
}

caf::expected<std::string> client::schedules(const msg::schedule_request& r) {
  return impl_->call_sync<std::string>(impl_->opts.timeout, schedules_atom_v, scoped(r));
}

size_t client::in_flight() const {
  std::lock_guard<std::mutex> guard{impl_->mx};
  return impl_->calls.size();
}

} // namespace nf
