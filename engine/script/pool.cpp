#include "engine/script/pool.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nf::engine::script {

namespace {

using clock = std::chrono::steady_clock;

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return std::string("ended by signal SIG") + (name != nullptr ? name : std::to_string(sig));
  }
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

/// Waits for `fd` to be readable until `deadline`; false when it passed.
bool readable_by(int fd, clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return true; // let the read report the error
  }
}

/// read_frame with a deadline on the first byte and the rest (a frame the sandbox
/// started writing arrives at once: it writes it in one go).
std::optional<std::string> read_frame_by(int fd, clock::time_point deadline, bool& late) {
  late = false;
  if (!readable_by(fd, deadline)) {
    late = true;
    return std::nullopt;
  }
  return read_frame(fd);
}

} // namespace

pool::pool(pool_options opt) : opt_(std::move(opt)) {
  if (opt_.processes < 1)
    opt_.processes = 1;
}

pool::~pool() {
  std::lock_guard lock(mu_);
  for (auto& p : idle_) {
    ::close(p.fd); // the sandbox reads end of file and exits
    int status = 0;
    ::waitpid(p.pid, &status, 0);
  }
}

int pool::started() const {
  std::lock_guard lock(mu_);
  return started_;
}

pool::process pool::take() {
  std::unique_lock lock(mu_);
  freed_.wait(lock, [&] { return !idle_.empty() || live_ < opt_.processes; });
  if (!idle_.empty()) {
    auto p = idle_.back();
    idle_.pop_back();
    return p;
  }
  ++live_;
  return {}; // the caller starts one
}

void pool::give_back(process p) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(p);
  }
  freed_.notify_one();
}

void pool::discard(process p) {
  if (p.pid > 0) {
    ::kill(p.pid, SIGKILL);
    int status = 0;
    ::waitpid(p.pid, &status, 0);
  }
  if (p.fd >= 0)
    ::close(p.fd);
  {
    std::lock_guard lock(mu_);
    --live_;
  }
  freed_.notify_one();
}

bool pool::spawn(process& p, std::string& error) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  std::vector<char*> argv;
  for (auto& a : opt_.argv)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr}; // the node's environment (credentials, DSNs) stays behind
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    error = "cannot start " + opt_.argv[0] + ": " + std::strerror(rc);
    return false;
  }
  p.pid = pid;
  p.fd = sv[0];
  std::lock_guard lock(mu_);
  ++started_;
  return true;
}

answer pool::exchange(process& p, const std::string& body, bool& healthy, bool& delivered) {
  healthy = false;
  delivered = false;
  auto deadline = clock::now() + opt_.timeout;
  auto gone = [&] {
    int status = 0;
    ::kill(p.pid, SIGKILL); // it may have closed the socket and still run
    ::waitpid(p.pid, &status, 0);
    p.pid = -1;
    return answer{outcome::crash, {}, "the sandbox process " + describe_status(status)};
  };
  if (!write_frame(p.fd, body))
    return gone();
  delivered = true;
  bool late = false;
  auto frame = read_frame_by(p.fd, deadline, late);
  if (late)
    return {outcome::timeout, {}, "script ran past its time limit of "
                                    + std::to_string(opt_.timeout.count()) + " ms"};
  if (!frame)
    return gone();
  auto a = decode_answer(*frame);
  if (!a)
    return {outcome::crash, {}, "the sandbox process answered a malformed frame"};
  healthy = a->kind != outcome::memory; // its heap may be fragmented past use: start afresh
  return std::move(*a);
}

answer pool::run(request r) {
  r.memory_mb = opt_.memory_mb;
  r.timeout_ms = static_cast<std::uint32_t>(opt_.timeout.count());
  auto body = encode(r);
  if (body.size() > max_frame)
    return {outcome::error, {}, "the program and its input are larger than 64 MiB"};
  answer a;
  // An idle process that died meanwhile refuses the request at once: one fresh try.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto p = take();
    bool reused = p.pid >= 0;
    if (!reused) {
      std::string error;
      if (!spawn(p, error)) {
        discard(p);
        return {outcome::crash, {}, error};
      }
    }
    bool healthy = false, delivered = true;
    a = exchange(p, body, healthy, delivered);
    if (healthy)
      give_back(p);
    else
      discard(p);
    if (delivered || !reused)
      break;
  }
  if (a.kind == outcome::memory)
    a.message = "script ran past its memory limit of " + std::to_string(opt_.memory_mb)
                + " MB";
  return a;
}

} // namespace nf::engine::script
