#include "tests/e2e/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nf::test {

namespace {

using clock_type = std::chrono::steady_clock;

} // namespace

child_process::child_process(std::vector<std::string> argv, const std::string& log_path,
                             bool capture_stdout) {
  // Everything the child needs is prepared before fork(): between fork and exec
  // only async-signal-safe calls are allowed (the parent has threads).
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    throw std::runtime_error("cannot open " + log_path + ": " + std::strerror(errno));
  int pipe_fds[2] = {-1, -1};
  if (capture_stdout && ::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string{"pipe: "} + std::strerror(errno));
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0)
    throw std::runtime_error(std::string{"fork: "} + std::strerror(errno));
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) // the parent died before prctl
      ::_exit(127);
    ::setpgid(0, 0); // a terminal's Ctrl-C reaches the test binary only
    ::dup2(capture_stdout ? pipe_fds[1] : log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    // The signal mask survives exec: start with none blocked.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(args[0], args.data());
    const char msg[] = "exec failed\n";
    (void) !::write(STDERR_FILENO, msg, sizeof(msg) - 1);
    ::_exit(127);
  }
  ::close(log_fd);
  if (capture_stdout) {
    ::close(pipe_fds[1]);
    out_fd_ = pipe_fds[0];
  }
}

child_process::~child_process() {
  if (!status_)
    stop(SIGKILL);
  if (out_fd_ >= 0)
    ::close(out_fd_);
}

std::optional<std::string> child_process::wait_for_line(const std::string& prefix,
                                                        std::chrono::milliseconds timeout) {
  auto deadline = clock_type::now() + timeout;
  for (;;) {
    for (size_t nl; (nl = buffered_.find('\n')) != std::string::npos;) {
      auto line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      if (line.rfind(prefix, 0) == 0)
        return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline
                                                                      - clock_type::now());
    if (left.count() <= 0 || out_fd_ < 0)
      return std::nullopt;
    pollfd p{out_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 200)));
    if (n < 0 && errno != EINTR)
      return std::nullopt;
    if (n <= 0) {
      if (!running())
        return std::nullopt;
      continue;
    }
    char buf[4096];
    auto got = ::read(out_fd_, buf, sizeof(buf));
    if (got <= 0) // EOF: the child closed stdout (exited)
      return std::nullopt;
    buffered_.append(buf, static_cast<size_t>(got));
  }
}

int child_process::stop(int sig, std::chrono::milliseconds patience) {
  if (status_)
    return *status_;
  if (sig != 0)
    ::kill(pid_, sig);
  auto deadline = clock_type::now() + patience;
  for (;;) {
    int st = 0;
    auto r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = st;
      return st;
    }
    if (r < 0 && errno != EINTR)
      return -1;
    if (clock_type::now() >= deadline) {
      if (sig == SIGKILL)
        return -1;
      ::kill(pid_, SIGKILL);
      sig = SIGKILL;
      deadline = clock_type::now() + std::chrono::seconds(10);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool child_process::running() {
  if (status_)
    return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::string tail_of(const std::string& path, size_t max_bytes) {
  auto s = read_file(path);
  return s.size() <= max_bytes ? s : "…" + s.substr(s.size() - max_bytes);
}

} // namespace nf::test
