#include "proxy_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nf::test {

namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "fault proxy test: %s\n", why.c_str());
  std::abort();
}

std::uint16_t port_after_colon(const std::string& line) {
  return static_cast<std::uint16_t>(std::stoul(line.substr(line.rfind(':') + 1)));
}

} // namespace

proxy_process::proxy_process(const std::vector<std::string>& links) {
  std::vector<std::string> args{NF_FAULT_PROXY_BIN, "--control", "127.0.0.1:0"};
  for (auto& l : links) {
    args.push_back("--link");
    args.push_back(l);
  }
  int out[2];
  if (pipe(out) != 0)
    die("pipe");
  pid_ = fork();
  if (pid_ == 0) {
    // A failed CAF_REQUIRE aborts the test without running destructors: the
    // proxy must not outlive it (and hold the test's output pipe open).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (text.find("ready\n") == std::string::npos) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    char buf[512];
    ssize_t n = 0;
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1
        || (n = read(out[0], buf, sizeof buf)) <= 0)
      die("the proxy did not print `ready`; it printed: " + text);
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words{line};
    std::string kind, name;
    words >> kind;
    if (kind == "control")
      control_port_ = port_after_colon(line);
    else if (kind == "link" && (words >> name))
      link_ports_[name] = port_after_colon(line);
  }
}

proxy_process::~proxy_process() {
  if (!reaped_) {
    (void) ctl("quit");
    if (!exited_within(milliseconds{2000})) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
}

bool proxy_process::exited_within(milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (!reaped_) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_)
      reaped_ = true;
    else if (std::chrono::steady_clock::now() > deadline)
      return false;
    else
      std::this_thread::sleep_for(milliseconds{10});
  }
  return true;
}

std::string proxy_process::ctl(const std::string& line) const {
  int fd = dial(control_port_);
  if (fd < 0)
    return "";
  send_all(fd, line + "\n");
  std::string reply;
  for (;;) {
    auto r = read_for(fd, milliseconds{5000}, 1);
    if (r.data.empty() || r.data == "\n")
      break;
    reply += r.data;
  }
  close(fd);
  return reply;
}

echo_server::echo_server() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(listen_fd_, 64) != 0)
    die("echo server cannot listen");
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  thread_ = std::thread{[this] { run(); }};
}

echo_server::~echo_server() {
  stop_ = true;
  thread_.join();
  close(listen_fd_);
}

void echo_server::run() {
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  while (!stop_) {
    if (poll(fds.data(), fds.size(), 20) <= 0)
      continue;
    if (fds[0].revents & POLLIN)
      fds.push_back({accept(listen_fd_, nullptr, nullptr), POLLIN, 0});
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (!fds[i].revents)
        continue;
      char buf[65536];
      auto n = recv(fds[i].fd, buf, sizeof buf, 0);
      std::string chunk{buf, n > 0 ? static_cast<std::size_t>(n) : 0};
      if (n > 0)
        received_ += static_cast<std::size_t>(n);
      if (n <= 0 || chunk.find("close") != std::string::npos) {
        close(fds[i].fd);
        fds[i].fd = -1;
      } else {
        send_all(fds[i].fd, chunk);
      }
    }
    fds.erase(std::remove_if(fds.begin(), fds.end(), [](const pollfd& p) { return p.fd < 0; }),
              fds.end());
  }
  for (std::size_t i = 1; i < fds.size(); ++i)
    close(fds[i].fd);
}

int dial(std::uint16_t port, const std::string& source) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      close(fd);
      return -1;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

read_result read_for(int fd, milliseconds wait, std::size_t want) {
  read_result r;
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (r.data.size() < want) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1)
      break;
    char buf[65536];
    auto n = recv(fd, buf, std::min(sizeof buf, want - r.data.size()), 0);
    if (n < 0) {
      r.error = errno;
      break;
    }
    if (n == 0) {
      r.eof = true;
      break;
    }
    r.data.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

void send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    auto n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    sent += static_cast<std::size_t>(n);
  }
}

} // namespace nf::test
