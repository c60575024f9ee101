#include "net/web/event_hub.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "config/folder_logger.hpp"
#include "engine/operations.hpp"
#include "net/web/history_json.hpp"
#include "proto/errors.hpp"
#include "store/event_notifications.hpp"
#include "store/events.hpp"

namespace nf::net::web {

namespace {

using clock_type = std::chrono::steady_clock;

struct subscriber {
  uint64_t id = 0;
  exchange_ptr ex;
  int64_t cursor = 0;   ///< the last seq it was sent (or resumes after)
  bool open = false;    ///< the stream is open (else the first read decides its answer)
  bool at_end = false;  ///< the event at `cursor` ended the history
  bool done = false;    ///< answered, ended or gone: to be removed
};

struct arrival {
  std::string workflow_id;
  subscriber sub;
};

} // namespace

struct event_hub::impl {
  event_hub_options opts;
  int wake_fd = -1;
  std::atomic<bool> running{false};
  std::atomic<bool> stopping{false};
  std::atomic<size_t> count{0};
  std::atomic<uint64_t> next_id{1};
  std::thread thread;

  // Handed over by HTTP threads, taken by the hub's thread.
  std::mutex inbox_mutex;
  std::vector<arrival> arriving;
  std::vector<uint64_t> leaving;

  // The hub's thread only.
  std::unordered_map<std::string, std::vector<subscriber>> followed;
  std::unordered_map<uint64_t, std::string> where;
  std::optional<store::event_notifications> listener;
  std::optional<store::connection> reader;
  std::set<std::string> dirty;
  bool all_dirty = false;
  clock_type::time_point next_listen{};
  clock_type::time_point next_read{};
  clock_type::time_point next_ping{};
  warn_limiter listen_warnings{std::chrono::seconds(30)};
  warn_limiter read_warnings{std::chrono::seconds(30)};

  explicit impl(event_hub_options o) : opts(std::move(o)) {
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  }
  ~impl() {
    if (wake_fd >= 0)
      ::close(wake_fd);
  }

  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }

  void leave(uint64_t id) {
    {
      std::lock_guard lock{inbox_mutex};
      leaving.push_back(id);
    }
    wake();
  }

  void run() {
    next_ping = clock_type::now() + opts.ping_interval;
    while (!stopping.load()) {
      connect_listener();
      wait_and_collect();
      take_inbox();
      if (all_dirty) {
        for (const auto& [wf, subs] : followed)
          dirty.insert(wf);
        all_dirty = false;
      }
      if (!dirty.empty() && clock_type::now() >= next_read)
        serve_dirty();
      if (clock_type::now() >= next_ping) {
        ping();
        next_ping = clock_type::now() + opts.ping_interval;
      }
    }
    close_all();
  }

  void connect_listener() {
    if (listener || clock_type::now() < next_listen)
      return;
    auto l = store::event_notifications::open(opts.dsn);
    if (!l) {
      next_listen = clock_type::now() + opts.retry_delay;
      if (listen_warnings.allow())
        folder_logger("net")->warn("event_hub_listen_failed error={} suppressed={}",
                                   message_of(l.error()), listen_warnings.suppressed());
      return;
    }
    listener.emplace(std::move(*l));
    // Whatever was notified while no one listened is in the table: read everyone again.
    all_dirty = true;
    folder_logger("net")->info("event_hub_listening backend_pid={}", listener->backend_pid());
  }

  std::chrono::milliseconds wait_budget() const {
    auto now = clock_type::now();
    auto until = next_ping;
    if (!listener)
      until = std::min(until, next_listen);
    if (!dirty.empty() || all_dirty)
      until = std::min(until, next_read);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
    return std::max(left, std::chrono::milliseconds{0});
  }

  void wait_and_collect() {
    auto budget = wait_budget();
    if (listener) {
      auto got = listener->wait(budget, wake_fd);
      if (!got) {
        folder_logger("net")->warn("event_hub_listen_lost error={}", message_of(got.error()));
        listener.reset();
        next_listen = clock_type::now();
      } else {
        for (const auto& payload : *got) {
          auto notice = store::parse_event_notice(payload);
          if (!notice)
            all_dirty = true; // an empty or foreign payload: something changed, read all
          else if (followed.count(notice->workflow_id) != 0)
            dirty.insert(notice->workflow_id);
        }
      }
    } else {
      pollfd fd{wake_fd, POLLIN, 0};
      ::poll(&fd, 1, static_cast<int>(budget.count()));
    }
    uint64_t drained;
    while (::read(wake_fd, &drained, sizeof drained) > 0) {
    }
  }

  void take_inbox() {
    std::vector<arrival> in;
    std::vector<uint64_t> out;
    {
      std::lock_guard lock{inbox_mutex};
      in.swap(arriving);
      out.swap(leaving);
    }
    // Arrivals first: a client may go before the hub has seen it come.
    for (auto& a : in) {
      where[a.sub.id] = a.workflow_id;
      followed[a.workflow_id].push_back(std::move(a.sub));
      dirty.insert(a.workflow_id);
    }
    for (auto id : out) {
      auto it = where.find(id);
      if (it == where.end())
        continue;
      auto& subs = followed[it->second];
      for (auto& s : subs)
        if (s.id == id)
          s.done = true;
      prune(it->second);
    }
  }

  // Drops the subscribers that are done, and the workflow once nobody follows it.
  void prune(const std::string& wf) {
    auto it = followed.find(wf);
    if (it == followed.end())
      return;
    auto& subs = it->second;
    auto gone = std::remove_if(subs.begin(), subs.end(), [&](const subscriber& s) {
      if (!s.done)
        return false;
      where.erase(s.id);
      count.fetch_sub(1);
      return true;
    });
    subs.erase(gone, subs.end());
    if (subs.empty()) {
      followed.erase(it);
      dirty.erase(wf);
    }
  }

  void serve_dirty() {
    std::set<std::string> failed;
    auto todo = std::move(dirty);
    dirty.clear();
    for (const auto& wf : todo)
      if (followed.count(wf) != 0 && !serve(wf))
        failed.insert(wf);
    dirty.insert(failed.begin(), failed.end());
    if (!failed.empty())
      next_read = clock_type::now() + opts.retry_delay;
  }

  static int64_t read_from(const std::vector<subscriber>& subs) {
    int64_t from = INT64_MAX;
    for (const auto& s : subs)
      // One before a new subscriber's cursor: whether that event ended the history.
      from = std::min(from, s.open ? s.cursor : std::max<int64_t>(s.cursor - 1, 0));
    return from;
  }

  // One read per page of the workflow's new events, shared by all its subscribers. False
  // when the read failed and is to be tried again.
  bool serve(const std::string& wf) {
    for (;;) {
      auto& subs = followed[wf];
      if (!reader) {
        auto c = store::connection::open(opts.dsn);
        if (!c)
          return read_failed(wf, c.error());
        reader.emplace(std::move(*c));
      }
      msg::events_request req;
      req.workflow_id = wf;
      req.after_seq = read_from(subs);
      req.limit = store::max_events_per_read;
      // Every subscriber's namespace was checked by its route (history.cpp).
      auto events = engine::read_events(*reader, req, false);
      if (!events) {
        if (code_of(events.error()) == errc::not_found) {
          for (auto& s : subs) {
            if (s.open)
              s.ex->end_stream();
            else
              s.ex->fail(404, "workflow " + wf + " not found");
            s.done = true;
          }
          prune(wf);
          return true;
        }
        if (!reader->ok())
          reader.reset();
        return read_failed(wf, events.error());
      }
      bool last_page = events->size() < static_cast<size_t>(store::max_events_per_read);
      for (auto& s : subs)
        deliver(s, *events, last_page);
      prune(wf);
      if (last_page || followed.count(wf) == 0)
        return true;
    }
  }

  // The streams already open keep waiting (the read is tried again); a client still
  // waiting for its answer gets the error now rather than an open stream that says nothing.
  bool read_failed(const std::string& wf, const caf::error& err) {
    if (read_warnings.allow())
      folder_logger("net")->warn("event_hub_read_failed workflow_id={} error={} suppressed={}",
                                 wf, message_of(err), read_warnings.suppressed());
    for (auto& s : followed[wf])
      if (!s.open) {
        s.ex->fail(503, "the history cannot be read right now: " + message_of(err));
        s.done = true;
      }
    prune(wf);
    return false;
  }

  static void deliver(subscriber& s, const std::vector<msg::event_view>& events,
                      bool last_page) {
    if (s.done)
      return;
    std::string text;
    bool ended = false;
    for (const auto& e : events) {
      if (e.seq == s.cursor && ends_history(e.type))
        s.at_end = true;
      if (e.seq <= s.cursor)
        continue;
      text += sse_frame(e);
      s.cursor = e.seq;
      if (ends_history(e.type)) {
        ended = true;
        break;
      }
    }
    if (!s.open) {
      if (text.empty()) {
        if (!last_page)
          return; // its events are on a later page
        if (s.at_end) {
          s.ex->respond(response{204, "text/plain", {}, {}});
          s.done = true;
          return;
        }
      }
      // Proxies that buffer answers (nginx) would hold the events back.
      s.ex->open_stream("text/event-stream", {{"X-Accel-Buffering", "no"}});
      s.open = true;
    }
    if (!text.empty() && !s.ex->write(std::move(text))) {
      s.done = true;
      return;
    }
    if (ended) {
      s.ex->end_stream();
      s.done = true;
    }
  }

  void ping() {
    for (auto& [wf, subs] : followed)
      for (auto& s : subs)
        if (s.open && !s.done && !s.ex->write(": ping\n\n"))
          s.done = true;
    std::vector<std::string> names;
    for (const auto& [wf, subs] : followed)
      names.push_back(wf);
    for (const auto& wf : names)
      prune(wf);
  }

  void close_all() {
    take_inbox();
    for (auto& [wf, subs] : followed)
      for (auto& s : subs) {
        if (s.open)
          s.ex->end_stream();
        else
          s.ex->fail(503, "the node is stopping");
        s.done = true;
      }
    std::vector<std::string> names;
    for (const auto& [wf, subs] : followed)
      names.push_back(wf);
    for (const auto& wf : names)
      prune(wf);
    listener.reset();
    reader.reset();
  }
};

event_hub::event_hub(event_hub_options opts) : impl_(std::make_shared<impl>(std::move(opts))) {}

event_hub::~event_hub() {
  stop();
}

void event_hub::start() {
  if (impl_->running.exchange(true))
    return;
  impl_->thread = std::thread([p = impl_.get()] { p->run(); });
}

void event_hub::stop() {
  if (!impl_->running.load() || impl_->stopping.exchange(true))
    return;
  impl_->wake();
  if (impl_->thread.joinable())
    impl_->thread.join();
  // A stream asked for while the thread was ending still gets its answer.
  impl_->close_all();
}

void event_hub::subscribe(const exchange_ptr& ex, std::string workflow_id, int64_t after) {
  auto& p = *impl_;
  if (!p.running.load() || p.stopping.load()) {
    ex->fail(503, "the node is stopping");
    return;
  }
  if (p.count.fetch_add(1) >= p.opts.max_streams) {
    p.count.fetch_sub(1);
    ex->fail(503, "this node serves " + std::to_string(p.opts.max_streams)
                    + " history streams already (http.max_event_streams)");
    return;
  }
  auto id = p.next_id.fetch_add(1);
  {
    std::lock_guard lock{p.inbox_mutex};
    p.arriving.push_back({std::move(workflow_id), subscriber{id, ex, after}});
  }
  ex->on_close([weak = std::weak_ptr<impl>(impl_), id] {
    if (auto hub = weak.lock())
      hub->leave(id);
  });
  p.wake();
}

size_t event_hub::streams() const {
  return impl_->count.load();
}

} // namespace nf::net::web
