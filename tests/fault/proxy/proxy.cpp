#include "proxy.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.hpp"

namespace nf::fault {

namespace {

// SIGTERM/SIGINT wake the poll loop through this pipe.
int signal_pipe[2] = {-1, -1};

void on_signal(int) {
  char b = 1;
  [[maybe_unused]] auto n = write(signal_pipe[1], &b, 1);
}

// A control line longer than this is not a command.
constexpr std::size_t max_line = 64 * 1024;

} // namespace

proxy::proxy() {
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
  }
  std::signal(SIGPIPE, SIG_IGN);
}

proxy::~proxy() {
  for (auto& c : clients_)
    close(c->fd);
  if (control_fd_ >= 0)
    close(control_fd_);
}

bool proxy::open_control(const endpoint& at, std::string& error) {
  control_fd_ = listen_on(at, error);
  if (control_fd_ < 0)
    return false;
  control_ = at;
  control_.port = local_port(control_fd_);
  return true;
}

std::optional<std::uint16_t> proxy::add_link(const std::string& name, const endpoint& target,
                                             std::uint16_t listen_port, std::string& error) {
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789_.-")
                          != std::string::npos) {
    error = "link name '" + name + "' must be letters, digits, '_', '.' or '-'";
    return std::nullopt;
  }
  if (find(name)) {
    error = "link " + name + " already exists";
    return std::nullopt;
  }
  int fd = listen_on({"127.0.0.1", listen_port}, error);
  if (fd < 0)
    return std::nullopt;
  links_.push_back(std::make_unique<link>(name, target, fd));
  return links_.back()->port();
}

link* proxy::find(const std::string& name) {
  for (auto& l : links_)
    if (l->name() == name)
      return l.get();
  return nullptr;
}

void proxy::accept_clients() {
  for (;;) {
    int fd = accept4(control_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
      return;
    clients_.push_back(std::make_unique<client>(client{fd, {}, {}}));
  }
}

void proxy::send_out(client& c) {
  while (!c.out.empty()) {
    auto n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        c.closing = true, c.out.clear();
      return;
    }
    c.out.erase(0, static_cast<std::size_t>(n));
  }
}

void proxy::serve(client& c) {
  char buf[4096];
  auto n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return;
  if (n <= 0) {
    c.closing = true;
    return;
  }
  c.in.append(buf, static_cast<std::size_t>(n));
  for (auto nl = c.in.find('\n'); nl != std::string::npos && !quit_; nl = c.in.find('\n')) {
    auto line = c.in.substr(0, nl);
    c.in.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    c.out += execute(*this, line) + "\n";
  }
  if (c.in.size() > max_line) {
    c.out += "error control line longer than 65536 bytes\n";
    c.in.clear();
    c.closing = true;
  }
  send_out(c);
}

void proxy::run() {
  std::vector<watch> watches;
  std::vector<pollfd> fds;
  while (!quit_) {
    watches.clear();
    auto wake = clock::now() + std::chrono::seconds{1};
    watches.push_back({signal_pipe[0], POLLIN, [this](short) { quit_ = true; }});
    watches.push_back({control_fd_, POLLIN, [this](short) { accept_clients(); }});
    for (auto& cp : clients_) {
      client* c = cp.get();
      short events = POLLIN | (c->out.empty() ? 0 : POLLOUT);
      watches.push_back({c->fd, events, [this, c](short ev) {
                           if (ev & POLLOUT)
                             send_out(*c);
                           if (ev & (POLLIN | POLLHUP | POLLERR))
                             serve(*c);
                         }});
    }
    for (auto& l : links_)
      l->watch_into(watches, wake);
    fds.clear();
    for (auto& w : watches)
      fds.push_back({w.fd, w.events, 0});
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - clock::now()).count();
    int ready = poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait, 0)));
    if (ready < 0 && errno != EINTR)
      break;
    // Handlers may add links (the control port's `add`); `watches` is ours alone.
    for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i)
      if (fds[i].revents)
        watches[i].on_ready(fds[i].revents);
    auto now = clock::now();
    for (auto& l : links_)
      l->pump(now);
    for (auto it = clients_.begin(); it != clients_.end();) {
      auto& c = **it;
      if (c.closing && (c.out.empty() || quit_)) {
        close(c.fd);
        it = clients_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // The client that sent `quit` gets its `ok` before the proxy goes.
  for (auto& c : clients_)
    send_out(*c);
}

} // namespace nf::fault
