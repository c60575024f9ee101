#include <chrono>
#include <cstdint>
#include <random>

#include "store/ids.hpp"

namespace nf {

namespace {

// One generator per thread: no lock on the start path, and seeded from the OS
// so two processes starting workflows in the same millisecond do not collide.
std::mt19937_64& generator() {
  thread_local std::mt19937_64 gen{[] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64{seq};
  }()};
  return gen;
}

} // namespace

std::string new_uuidv7() {
  using namespace std::chrono;
  auto now = duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
  auto ms = static_cast<uint64_t>(now / 1000000);
  // rand_a holds the sub-millisecond fraction (as Postgres's uuidv7() does), so
  // ids made in one process sort by creation time closely enough for keyset
  // pages; the shard comes from rand_b's random tail.
  auto sub_ms = static_cast<uint64_t>(now % 1000000) * 4096 / 1000000;
  uint64_t hi = (ms << 16) | (uint64_t{0x7} << 12) | (sub_ms & 0xfff);
  uint64_t lo = (generator()() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
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
