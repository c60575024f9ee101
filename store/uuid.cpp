#include <pthread.h>
#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "store/db_clock.hpp"
#include "store/ids.hpp"

namespace nf {

namespace {

// Ids and lease tokens must not be guessable from earlier ones (a lease token is the
// worker's proof that it holds the task), so the random bits come from the kernel's
// CSPRNG. One getrandom() call fills a per-thread buffer that serves 512 ids: the start
// path takes no lock and makes a system call once in a while, not per id.
//
// A forked child inherits the buffer: it would hand out the parent's next ids and
// tokens too. Each fork bumps a generation, and a pool filled in an older one refills.
std::atomic<uint64_t> fork_generation{0};

void on_fork_child() {
  fork_generation.fetch_add(1, std::memory_order_relaxed);
}

class random_pool {
public:
  random_pool() {
    static const int registered = pthread_atfork(nullptr, nullptr, on_fork_child);
    (void)registered;
  }

  uint64_t next() {
    if (used_ == words || generation_ != fork_generation.load(std::memory_order_relaxed))
      refill();
    return buf_[used_++];
  }

private:
  static constexpr size_t words = 4096 / sizeof(uint64_t);

  void refill() {
    auto* out = reinterpret_cast<unsigned char*>(buf_);
    size_t got = 0;
    while (got < sizeof buf_) {
      ssize_t n = getrandom(out + got, sizeof buf_ - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      // Only a kernel without getrandom (before 3.17) gets here; an id without
      // randomness would be worse than no id.
      if (n < 0)
        throw std::runtime_error{std::string{"getrandom: "} + std::strerror(errno)};
      got += static_cast<size_t>(n);
    }
    used_ = 0;
    generation_ = fork_generation.load(std::memory_order_relaxed);
  }

  uint64_t buf_[words];
  size_t used_ = words;
  uint64_t generation_ = 0;
};

uint64_t random_word() {
  thread_local random_pool pool;
  return pool.next();
}

} // namespace

std::string new_uuidv7() {
  using namespace std::chrono;
  // Postgres's clock, not this node's: the id's time is the row's partition key.
  auto now = duration_cast<nanoseconds>(db_clock_now().time_since_epoch()).count();
  auto ms = static_cast<uint64_t>(now / 1000000);
  // rand_a holds the sub-millisecond fraction (as Postgres's uuidv7() does), so
  // ids made in one process sort by creation time closely enough for keyset
  // pages; the shard comes from rand_b's random tail.
  auto sub_ms = static_cast<uint64_t>(now % 1000000) * 4096 / 1000000;
  uint64_t hi = (ms << 16) | (uint64_t{0x7} << 12) | (sub_ms & 0xfff);
  uint64_t lo = (random_word() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  auto put = [&](uint64_t word, int from_nibble, int to_nibble) {
    for (int i = from_nibble; i < to_nibble; ++i)
      out.push_back(hex[(word >> (60 - 4 * i)) & 0xf]);
  };
  put(hi, 0, 8);
  out.push_back('-');
  put(hi, 8, 12);
  out.push_back('-');
  put(hi, 12, 16);
  out.push_back('-');
  put(lo, 0, 4);
  out.push_back('-');
  put(lo, 4, 16);
  return out;
}

} // namespace nf
