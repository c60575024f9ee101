#include "engine/script/sandbox.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/script/evaluate.hpp"

namespace nf::engine::script {

namespace {

// What the SIGABRT handler writes: libjq aborts when malloc fails, which the address
// space limit makes the sign of a program past its memory limit. Prepared before
// each run, since a signal handler may only write().
char abort_frame[64];
std::size_t abort_frame_size = 0;

void prepare_abort_frame() {
  answer a;
  a.kind = outcome::memory;
  a.message = "the program ran out of memory";
  auto body = encode(a);
  abort_frame[0] = abort_frame[1] = abort_frame[2] = 0;
  abort_frame[3] = static_cast<char>(body.size());
  body.copy(abort_frame + 4, body.size());
  abort_frame_size = body.size() + 4;
}

void on_abort(int) {
  auto n = ::write(1, abort_frame, abort_frame_size);
  (void)n;
  ::_exit(3);
}

// The process's own mappings (the binary and its libraries) count toward
// RLIMIT_AS, so the limit is what is mapped now plus the script's allowance.
std::size_t mapped_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%lu", &pages) != 1)
      pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

void limit(int resource, rlim_t value) {
  rlimit rl{value, value};
  ::setrlimit(resource, &rl);
}

void limit_address_space(std::uint32_t memory_mb) {
  // Headroom for jq's and the allocator's own bookkeeping beside the program's data.
  constexpr std::size_t slack = 64u << 20;
  rlimit rl{};
  ::getrlimit(RLIMIT_AS, &rl);
  rl.rlim_cur = mapped_bytes() + (static_cast<std::size_t>(memory_mb) << 20) + slack;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
    rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_AS, &rl);
}

// A sandbox whose node died mid-script would spin on: the CPU limit ends it a second or
// two after the node would have. (PR_SET_PDEATHSIG cannot serve: it fires when the
// *thread* that started the process ends, and the node's task workers come and go.)
void limit_cpu(std::uint32_t timeout_ms) {
  rusage used{};
  ::getrusage(RUSAGE_SELF, &used);
  rlimit rl{};
  ::getrlimit(RLIMIT_CPU, &rl);
  rl.rlim_cur = static_cast<rlim_t>(used.ru_utime.tv_sec + used.ru_stime.tv_sec)
                + (timeout_ms + 999) / 1000 + 2;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
    rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_CPU, &rl);
}

} // namespace

int sandbox_main() {
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  ::prctl(PR_SET_DUMPABLE, 0);
  limit(RLIMIT_CORE, 0);
  limit(RLIMIT_FSIZE, 0);
  limit(RLIMIT_NOFILE, 8);
  std::signal(SIGABRT, on_abort);
  std::signal(SIGPIPE, SIG_IGN);
  prepare_abort_frame();
  for (;;) {
    auto body = read_frame(0);
    if (!body)
      return 0; // the node closed the socket
    answer a;
    if (auto req = decode_request(*body)) {
      limit_address_space(req->memory_mb);
      limit_cpu(req->timeout_ms);
      a = evaluate(*req);
    } else {
      a.kind = outcome::crash;
      a.message = "the sandbox received a malformed request";
    }
    auto out = encode(a);
    if (out.size() > max_frame) {
      a = answer{outcome::error, {}, "the result is larger than 64 MiB"};
      out = encode(a);
    }
    if (!write_frame(1, out))
      return 0;
  }
}

} // namespace nf::engine::script
