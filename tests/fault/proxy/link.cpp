#include "link.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nf::fault {

namespace {

// A direction stops reading once this much waits to be sent, so a slow or
// held side pushes back on the sender as a real network would.
constexpr std::size_t queue_limit = 4 << 20;

} // namespace

link::link(std::string name, endpoint target, int listen_fd)
  : name_(std::move(name)), target_(std::move(target)), listen_fd_(listen_fd),
    port_(local_port(listen_fd)) {
}

link::~link() {
  close(listen_fd_);
  for (auto& [id, c] : connections_) {
    if (c->client >= 0)
      close(c->client);
    if (c->target >= 0)
      close(c->target);
  }
}

void link::set_mode(const mode& m) {
  mode_ = m;
  by_source_.clear();
  reset_if(m, [](const connection&) { return true; });
}

void link::set_mode_from(const std::string& source, const mode& m) {
  by_source_[source] = m;
  reset_if(m, [&](const connection& c) { return c.source == source; });
}

template <class Pred>
void link::reset_if(const mode& m, Pred which) {
  if (m.kind != mode_kind::reset)
    return;
  for (auto& [id, c] : connections_)
    if (!c->dead && which(*c)) {
      abort(*c);
      ++resets_;
    }
}

const mode& link::mode_of(const connection& c) const {
  auto it = by_source_.find(c.source);
  return it == by_source_.end() ? mode_ : it->second;
}

std::vector<std::string> link::sources() const {
  std::set<std::string> seen;
  for (auto& [id, c] : connections_)
    if (!c->dead)
      seen.insert(c->source);
  return {seen.begin(), seen.end()};
}

std::string link::stats() const {
  std::size_t open = 0;
  for (auto& [id, c] : connections_)
    open += c->dead ? 0 : 1;
  return "connections=" + std::to_string(accepted_) + " open=" + std::to_string(open)
         + " bytes_up=" + std::to_string(bytes_up_) + " bytes_down=" + std::to_string(bytes_down_)
         + " cuts=" + std::to_string(cuts_) + " resets=" + std::to_string(resets_)
         + " commits_seen=" + std::to_string(commits_seen_);
}

void link::accept_all() {
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
      return;
    ++accepted_;
    auto c = std::make_unique<connection>();
    c->source = numeric_host(from);
    const auto& m = mode_of(*c);
    if (m.kind == mode_kind::refuse) {
      close(fd);
      continue;
    }
    if (m.kind == mode_kind::reset) {
      reset_close(fd);
      ++resets_;
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->client = fd;
    if (m.kind != mode_kind::blackhole)
      start_target(*c);
    connections_.emplace(next_id_++, std::move(c));
  }
}

void link::start_target(connection& c) {
  c.target_started = true;
  std::string error;
  c.target = connect_start(target_, error);
  if (c.target < 0) {
    // The target is not there: the client sees its connection reset.
    report_connect_failure(error);
    abort(c);
    return;
  }
  c.connecting = true;
}

void link::report_connect_failure(const std::string& error) {
  // Once per outage: clients retrying against a stopped target would
  // otherwise fill a stderr pipe nobody drains and stall the whole proxy.
  if (!target_failing_)
    std::fprintf(stderr, "link %s: %s (until it answers again, not repeated)\n", name_.c_str(),
                 error.c_str());
  target_failing_ = true;
}

void link::target_lost(connection& c) {
  // Half-open: the target is gone, but the client must not learn it.
  reset_close(c.target);
  c.target = -1;
  c.down.source_done = true;
  c.up.fin_passed = true;
  c.up.queue.clear();
  c.up.queued = 0;
  c.up.front_sent = 0;
}

void link::watch_into(std::vector<watch>& out, clock::time_point& wake) {
  out.push_back({listen_fd_, POLLIN, [this](short) { accept_all(); }});
  for (auto& [id, cp] : connections_) {
    auto& c = *cp;
    if (c.dead)
      continue;
    const bool hold = mode_of(c).kind == mode_kind::blackhole;
    auto find = [this, id = id]() -> connection* {
      auto it = connections_.find(id);
      return it == connections_.end() || it->second->dead ? nullptr : it->second.get();
    };
    short client_events = 0;
    if (!hold && !c.up.source_done && !c.cut_pending && c.up.queued < queue_limit)
      client_events |= POLLIN;
    if (c.down.blocked)
      client_events |= POLLOUT;
    if (client_events)
      out.push_back({c.client, client_events, [this, find](short ev) {
                       if (auto* c = find(); c && (ev & POLLOUT))
                         c->down.blocked = false;
                       if (auto* c = find(); c && (ev & (POLLIN | POLLHUP | POLLERR)))
                         on_client_readable(*c);
                     }});
    short target_events = 0;
    if (c.connecting)
      target_events = POLLOUT;
    else if (c.target >= 0) {
      if (!hold && !c.down.source_done && c.down.queued < queue_limit)
        target_events |= POLLIN;
      if (c.up.blocked)
        target_events |= POLLOUT;
    }
    if (target_events)
      out.push_back({c.target, target_events, [this, find](short ev) {
                       auto* c = find();
                       if (!c)
                         return;
                       if (c->connecting) {
                         on_connected(*c);
                         return;
                       }
                       if (ev & POLLOUT)
                         c->up.blocked = false;
                       if (auto* c = find(); c && (ev & (POLLIN | POLLHUP | POLLERR)))
                         on_target_readable(*c);
                     }});
    if (hold)
      continue;
    if (!c.connecting && !c.up.blocked && !c.up.queue.empty())
      wake = std::min(wake, c.up.queue.front().due);
    if (!c.down.blocked && !c.down.queue.empty())
      wake = std::min(wake, c.down.queue.front().due);
  }
}

void link::on_connected(connection& c) {
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(c.target, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    report_connect_failure("cannot connect to " + to_string(target_) + ": " + std::strerror(err));
    abort(c);
    return;
  }
  c.connecting = false;
  target_failing_ = false;
}

void link::on_client_readable(connection& c) {
  char buf[65536];
  auto n = recv(c.client, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      abort(c);
    return;
  }
  if (n == 0) {
    c.up.source_done = true;
    return;
  }
  std::size_t keep = static_cast<std::size_t>(n);
  bool cut_after = false;
  c.scanner.feed({buf, keep}, [&](std::size_t end) {
    ++commits_seen_;
    if (cuts_pending_ <= 0)
      return true;
    --cuts_pending_;
    keep = end; // what follows the COMMIT never reaches the server
    cut_after = true;
    return false;
  });
  c.cut_pending = cut_after;
  if (c.target < 0 && c.target_started)
    return; // half-open lost the target: the client talks into the void
  enqueue(c, c.up, std::string{buf, keep}, cut_after);
}

void link::on_target_readable(connection& c) {
  char buf[65536];
  auto n = recv(c.target, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
      return;
    if (dropping_answers(c))
      target_lost(c);
    else
      abort(c);
    return;
  }
  if (n == 0) {
    c.down.source_done = true;
    return;
  }
  if (dropping_answers(c))
    return;
  enqueue(c, c.down, std::string{buf, static_cast<std::size_t>(n)}, false);
}

void link::enqueue(connection& c, direction& d, std::string bytes, bool cut_after) {
  auto due = d.pace.due_for(mode_of(c), clock::now(), rng_);
  d.queued += bytes.size();
  d.queue.push_back({std::move(bytes), due, cut_after});
}

void link::flush(connection& c, direction& d, int to, clock::time_point now) {
  bool up = &d == &c.up;
  if (c.dead || to < 0 || (up && c.connecting) || mode_of(c).kind == mode_kind::blackhole)
    return;
  if (!up && dropping_answers(c)) {
    d.queue.clear();
    d.queued = 0;
    d.front_sent = 0;
  }
  while (!d.queue.empty() && !d.blocked) {
    auto& f = d.queue.front();
    if (f.due > now)
      return;
    auto n = send(to, f.bytes.data() + d.front_sent, f.bytes.size() - d.front_sent,
                  MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        d.blocked = true;
      else if (errno == EINTR)
        continue;
      else if (up && dropping_answers(c))
        target_lost(c);
      else
        abort(c);
      return;
    }
    (up ? bytes_up_ : bytes_down_) += static_cast<std::uint64_t>(n);
    d.front_sent += static_cast<std::size_t>(n);
    if (d.front_sent < f.bytes.size()) {
      d.blocked = true;
      return;
    }
    bool cut_now = f.cut_after;
    d.queued -= f.bytes.size();
    d.front_sent = 0;
    d.queue.pop_front();
    if (cut_now) {
      cut(c);
      return;
    }
  }
  if (d.queue.empty() && d.source_done && !d.fin_passed) {
    // Half-open never tells the client its server went away.
    if (!up && dropping_answers(c) && !c.up.source_done)
      return;
    shutdown(to, SHUT_WR);
    d.fin_passed = true;
  }
}

void link::pump(clock::time_point now) {
  for (auto& [id, c] : connections_) {
    if (!c->dead && !c->target_started && mode_of(*c).kind != mode_kind::blackhole)
      start_target(*c);
    flush(*c, c->up, c->target, now);
    flush(*c, c->down, c->client, now);
    if (!c->dead && c->up.fin_passed && c->down.fin_passed)
      finish(*c);
  }
  for (auto it = connections_.begin(); it != connections_.end();)
    it = it->second->dead ? connections_.erase(it) : std::next(it);
}

void link::finish(connection& c) {
  close(c.client);
  if (c.target >= 0)
    close(c.target);
  c.client = c.target = -1;
  c.dead = true;
}

void link::cut(connection& c) {
  ++cuts_;
  // Let the COMMIT reach the server's socket before the RST does, so the
  // server runs it; its answer is then lost with the connection.
  auto deadline = clock::now() + std::chrono::milliseconds{200};
  int unsent = 0;
  while (ioctl(c.target, SIOCOUTQ, &unsent) == 0 && unsent > 0 && clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  abort(c);
}

void link::abort(connection& c) {
  reset_close(c.client);
  reset_close(c.target);
  c.client = c.target = -1;
  c.dead = true;
}

} // namespace nf::fault
